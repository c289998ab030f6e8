"""Envelopes and the caller of a REST request (bodies render through ``json_response``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from starlette.requests import Request
from starlette.responses import Response

from evidence_gateway.auth import authenticate
from evidence_gateway.core.context import Ctx
from evidence_gateway.read_models import PaginationMeta
from evidence_gateway.resolvers.pagination import Page
from evidence_gateway.web.json_response import JSONResponse
from evidence_gateway.web.request_id import request_id_of

T = TypeVar("T")
Serializer = Callable[[T], dict[str, Any]]

__all__ = ["JSONResponse", "Serializer", "caller", "envelope", "etag_matches", "not_modified", "paginated"]


async def caller(request: Request) -> Ctx:
    state = request.app.state
    principal = await authenticate(state.db, request.headers.get("authorization"), state.key_cache)
    return Ctx(db=state.db, settings=state.settings, principal=principal, request_id=request_id_of(request.scope))


def etag_matches(header: str | None, etag: str) -> bool:
    """If-None-Match's weak comparison (RFC 9110 §13.1.2): ``W/`` ignored, ``*`` matches."""
    if not header:
        return False
    candidates = {c.strip().removeprefix("W/") for c in header.split(",")}
    return "*" in candidates or etag in candidates


def not_modified(request: Request, etag: str) -> Response | None:
    """304 with the ETag when the caller's If-None-Match names the current version, else None.
    Asked after the read, so scoping decides first: another organisation's id stays 404."""
    if etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers={"ETag": etag})
    return None


def envelope(
    data: Any, *, status: int = 200, meta: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"data": data}
    if meta is not None:
        body["meta"] = dict(meta)
    return JSONResponse(body, status_code=status, headers=headers)


def paginated(page: Page[T], serialize: Serializer[T], headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse(
        {
            "data": [serialize(item) for item in page.items],
            "pagination": PaginationMeta.render(page),
        },
        headers=headers,
    )
