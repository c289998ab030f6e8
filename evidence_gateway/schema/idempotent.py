"""Idempotency-Key on GraphQL (DESIGN.md §14): honoured when the document runs exactly one
mutation field. The change commits with a completed record in its unit of work; the GraphQL
answer, known only once the selection set has resolved, is stored right after."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from graphql import FieldNode, GraphQLError, OperationDefinitionNode, OperationType, parse
from starlette.requests import Request
from starlette.responses import Response

from evidence_gateway.auth import authenticate
from evidence_gateway.core import idempotency
from evidence_gateway.core.idempotency import StoredResponse
from evidence_gateway.errors import BadRequest, Unauthenticated
from evidence_gateway.resolvers.persisted_queries import PersistedQueries

Run = Callable[[Request], Awaitable[Response]]


async def _document_text(request: Request, payload: dict[str, Any]) -> str | None:
    """The document a request runs: its ``query``, or the persisted document its hash names."""
    query = payload.get("query")
    if isinstance(query, str):
        return query
    extensions = payload.get("extensions")
    persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
    sha256 = persisted.get("sha256Hash") if isinstance(persisted, dict) else None
    if not isinstance(sha256, str):
        return None
    trusted: dict[str, str] | None = request.app.state.trusted_documents
    if trusted is not None:
        return trusted.get(sha256.lower())
    known: PersistedQueries = request.app.state.persisted_queries
    return await known.lookup(sha256.lower())


async def _mutation_fields(request: Request, body: bytes) -> int | None:
    """Root fields of the mutation the document runs; None when it runs no mutation."""
    try:
        payload = orjson.loads(body)
        text = await _document_text(request, payload) if isinstance(payload, dict) else None
        document = parse(text) if text is not None else None
    except (orjson.JSONDecodeError, GraphQLError):
        return None  # Strawberry answers a malformed request itself
    if document is None:
        return None
    name = payload.get("operationName")
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    chosen = [o for o in operations if name is None or (o.name is not None and o.name.value == name)]
    if len(chosen) != 1 or chosen[0].operation != OperationType.MUTATION:
        return None
    selections = chosen[0].selection_set.selections
    # A fragment spread could hide any number of fields: it does not count as exactly one.
    return len(selections) if all(isinstance(s, FieldNode) for s in selections) else len(selections) + 1


async def run_idempotent(request: Request, run: Run) -> Response:
    raw_key = request.headers.get(idempotency.HEADER)
    if raw_key is None or request.method != "POST":
        return await run(request)
    body = await request.body()
    fields = await _mutation_fields(request, body)
    if fields is None:
        return await run(request)  # a query changes nothing: the key is simply not needed
    if fields != 1:
        raise BadRequest(
            "Idempotency-Key applies to a document that runs exactly one mutation field", header=idempotency.HEADER
        )
    key = idempotency.check_key(raw_key)
    state = request.app.state
    try:
        principal = await authenticate(state.db, request.headers.get("authorization"), state.key_cache)
    except Unauthenticated:
        return await run(request)  # answered UNAUTHENTICATED as usual; nothing to protect
    settings = state.settings
    outcome = await idempotency.claim(
        state.db,
        principal.org_id,
        principal.key_id,
        key,
        idempotency.fingerprint("POST", request.url.path, body),
        lock_seconds=settings.lease_seconds,
        graphql=True,
    )
    if isinstance(outcome, StoredResponse):
        return Response(outcome.body, outcome.status, headers=outcome.replayed_headers())
    held = outcome
    request.state.idempotency = held
    async with idempotency.holding(state.db, held, settings.lease_seconds):
        response = await run(request)
    if held.completed:
        await idempotency.store_late(state.db, held, StoredResponse.of(response))
    else:
        # The mutation was refused or failed before committing: a retry runs afresh.
        await idempotency.release(state.db, held)
    return response
