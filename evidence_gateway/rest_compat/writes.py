"""The REST side of a write: the caller's terms (Idempotency-Key, If-Match, Prefer) into the
resolver context, and the answer rendered once — inside the unit of work when a key is held, so
the stored answer commits with the change."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from evidence_gateway.core import idempotency
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.idempotency import StoredResponse
from evidence_gateway.rest_compat.http import caller
from evidence_gateway.web.http_body import read_body, read_json_object, replayed

Operation = Callable[[Ctx, dict[str, Any]], Awaitable[Any]]
Render = Callable[[Any, Ctx], Response]
# Response headers worth replaying: the representation's, not the connection's.


def prefers_async(request: Request) -> bool:
    """RFC 7240: ``Prefer: respond-async`` (among other preferences, parameters ignored)."""
    for header in request.headers.getlist("prefer"):
        for pref in header.split(","):
            if pref.split(";", 1)[0].strip().lower() == "respond-async":
                return True
    return False


async def write(
    request: Request, operation: Operation, render: Render, *, import_body: bool = False, body_required: bool = True
) -> Response:
    """Authenticate, read the JSON body, run the operation once per Idempotency-Key, render."""
    ctx = await caller(request)
    ctx = dataclasses.replace(ctx, if_match=request.headers.get("if-match"), respond_async=prefers_async(request))
    limit = ctx.settings.max_import_bytes if import_body else ctx.settings.max_body_bytes
    raw_key = request.headers.get(idempotency.HEADER)
    if raw_key is None:
        body = await read_json_object(request, limit, required=body_required)
        return render(await operation(ctx, body), ctx)
    key = idempotency.check_key(raw_key)
    # The fingerprint hashes the bytes as sent, so keep them while the body is parsed.
    raw = await read_body(request, limit)
    body = await read_json_object(replayed(request, raw), limit, required=body_required)
    path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    outcome = await idempotency.claim(
        ctx.db,
        ctx.org_id,
        ctx.actor,
        key,
        idempotency.fingerprint(request.method, path, raw),
        lock_seconds=ctx.settings.lease_seconds,
    )
    if isinstance(outcome, StoredResponse):
        return Response(outcome.body, outcome.status, headers=outcome.replayed_headers())
    held = outcome
    held_ctx = dataclasses.replace(ctx, idempotency=held)
    held.render = lambda result: StoredResponse.of(render(result, held_ctx))
    async with idempotency.holding(ctx.db, held, ctx.settings.lease_seconds):
        result = await operation(held_ctx, body)
    if held.response is None:
        answer = StoredResponse.of(render(result, held_ctx))
        await idempotency.store_late(ctx.db, held, answer)
    else:
        answer = held.response
    # The answer as rendered, secrets included: only the stored copy is without them.
    return Response(answer.body, answer.status, headers=answer.headers)


def location(ctx: Ctx, path: str) -> str:
    return ctx.settings.public_base_url.rstrip("/") + "/api" + path
