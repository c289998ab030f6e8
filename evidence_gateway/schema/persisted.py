"""Trusted documents over HTTP: Apollo-compatible automatic persisted queries, and an allow-list.

APQ (``extensions.persistedQuery = {"version": 1, "sha256Hash": ...}``): a client sends the hash
alone; an unknown hash answers ``PersistedQueryNotFound`` and the client sends hash and document,
which is checked against the hash and, once it has validated, stored for every node
(resolvers/persisted_queries.py). Only callers with a valid key register documents, so the
table cannot be filled anonymously, and each organisation within its count; a document over
the size a persisted query may hold is refused before it runs. A GET request runs a persisted
query only.

With ``EVIDENCE_GRAPHQL_TRUSTED_DOCUMENTS=FILE`` (a JSON object of hash -> document) only the
documents of that file run, by hash or by full text; nothing is registered.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from starlette.requests import Request
from strawberry.http import GraphQLRequestData

from evidence_gateway.errors import BadRequest, DomainError
from evidence_gateway.resolvers.persisted_queries import PersistedQueries, sha256_of, size_of

_HASH = re.compile(r"^[0-9a-fA-F]{64}$")


class DocumentRefused(DomainError):
    """A request whose document cannot run: answered like a validation failure (no data; 400
    under application/graphql-response+json, 200 under application/json)."""


class PersistedQueryNotFound(DocumentRefused):
    graphql_code: ClassVar[str] = "PERSISTED_QUERY_NOT_FOUND"

    def __init__(self) -> None:
        # The exact message Apollo clients look for before sending the document with its hash.
        super().__init__("PersistedQueryNotFound")


class PersistedQueryInvalid(DocumentRefused):
    graphql_code: ClassVar[str] = "PERSISTED_QUERY_INVALID"


class PersistedQueryTooLarge(DocumentRefused):
    graphql_code: ClassVar[str] = "PERSISTED_QUERY_TOO_LARGE"

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"a persisted query holds at most {limit} bytes (EVIDENCE_GRAPHQL_PERSISTED_QUERY_MAX_BYTES): "
            "send this document without extensions.persistedQuery",
            limit_bytes=limit,
        )


class DocumentNotTrusted(DocumentRefused):
    graphql_code: ClassVar[str] = "DOCUMENT_NOT_TRUSTED"

    def __init__(self) -> None:
        super().__init__(
            "only trusted documents run on this server (EVIDENCE_GRAPHQL_TRUSTED_DOCUMENTS): "
            "send extensions.persistedQuery.sha256Hash of a document of its list"
        )


class TrustedDocumentsError(RuntimeError):
    """The trusted documents file is unreadable or wrong; the server does not start."""


def load_trusted(path: str) -> dict[str, str]:
    """The allow-list: a JSON object of lowercase SHA-256 -> document, each hash checked."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TrustedDocumentsError(f"EVIDENCE_GRAPHQL_TRUSTED_DOCUMENTS={path}: {exc}") from None
    if not isinstance(raw, dict) or not raw:
        raise TrustedDocumentsError(f"{path}: expected a non-empty JSON object of sha256 hash -> document")
    documents: dict[str, str] = {}
    for sha256, document in raw.items():
        if not isinstance(document, str) or not _HASH.fullmatch(sha256) or sha256_of(document) != sha256.lower():
            raise TrustedDocumentsError(f"{path}: {sha256[:80]!r} is not the SHA-256 of its document")
        documents[sha256.lower()] = document
    return documents


def _persisted_hash(extensions: dict[str, Any] | None) -> str | None:
    persisted = (extensions or {}).get("persistedQuery")
    if persisted is None:
        return None
    if not isinstance(persisted, dict) or persisted.get("version") != 1:
        raise PersistedQueryInvalid("extensions.persistedQuery must be {version: 1, sha256Hash}: only version 1 exists")
    sha256 = persisted.get("sha256Hash")
    if not isinstance(sha256, str) or not _HASH.fullmatch(sha256):
        raise PersistedQueryInvalid("extensions.persistedQuery.sha256Hash must be 64 hexadecimal characters")
    return sha256.lower()


async def resolve(request: Request, data: GraphQLRequestData) -> GraphQLRequestData:
    """The request with the document it runs, or a refusal; marks a document to register."""
    state = request.app.state
    trusted: dict[str, str] | None = state.trusted_documents
    sha256 = _persisted_hash(data.extensions)
    if sha256 is None:
        if request.method == "GET":
            raise BadRequest("GET runs persisted queries only (extensions.persistedQuery); POST other documents")
        if trusted is not None and data.query is not None and sha256_of(data.query) not in trusted:
            raise DocumentNotTrusted()
        return data
    if data.query is not None:
        if sha256_of(data.query) != sha256:
            raise PersistedQueryInvalid("provided sha does not match query")
        if trusted is not None:
            if sha256 not in trusted:
                raise DocumentNotTrusted()
        else:
            known: PersistedQueries = state.persisted_queries
            if size_of(data.query) > known.max_bytes:
                raise PersistedQueryTooLarge(known.max_bytes)  # before it runs: it would not be kept
            request.state.register_document = (sha256, data.query)
        return data
    if trusted is not None:
        document = trusted.get(sha256)
        if document is None:
            raise DocumentNotTrusted()
    else:
        document = await state.persisted_queries.lookup(sha256)
        if document is None:
            raise PersistedQueryNotFound()
    return replace(data, query=document)


async def register_if_marked(request: Request, validated: bool, org_id: uuid.UUID | None) -> None:
    """Store the document sent with its hash, once it has parsed and validated, for a caller with
    a key (``org_id``: its organisation, whose count it joins)."""
    marked: tuple[str, str] | None = getattr(request.state, "register_document", None)
    if marked is not None and validated and org_id is not None:
        known: PersistedQueries = request.app.state.persisted_queries
        await known.register(*marked, org_id)
