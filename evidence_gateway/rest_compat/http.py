"""Envelopes and the caller of a REST request (bodies render through ``json_response``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import urlencode

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

__all__ = [
    "JSONResponse",
    "Serializer",
    "caller",
    "envelope",
    "etag_matches",
    "link_header",
    "link_to",
    "not_modified",
    "paginated",
]


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


def link_to(request: Request, **params: Any) -> str:
    """This list's URL with ``params`` replacing (or, when None, dropping) query parameters."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k not in params]
    kept += [(k, str(v)) for k, v in params.items() if v is not None]
    base = request.app.state.settings.public_base_url.rstrip("/") + request.url.path
    return f"{base}?{urlencode(kept)}" if kept else base


def link_header(links: Mapping[str, str]) -> str:
    """An RFC 8288 ``Link`` value: ``<url>; rel="next"``, comma-separated."""
    return ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links.items())


def page_links(request: Request, page: Page[Any]) -> str:
    """first / prev / next / last of a page/per_page list, each keeping the request's filters.

    Each link is ``link_to(request, page=n, per_page=...)``, built here from one encoding of the
    kept parameters: ``urlencode`` of the kept pairs followed by two more is that encoding, ``&``,
    and the two, and a page number or size (digits) and their names encode as themselves. Four
    ``urlencode`` calls over the same filters cost more than the rest of the envelope."""
    last = max(1, -(-page.total // page.per_page))
    base = request.app.state.settings.public_base_url.rstrip("/") + request.url.path
    kept = urlencode([(k, v) for k, v in request.query_params.multi_items() if k not in ("page", "per_page")])
    prefix = f"{base}?{kept}&" if kept else f"{base}?"

    def at(number: int) -> str:
        return f"{prefix}page={number}&per_page={page.per_page}"

    links = {"first": at(1)}
    if page.page > 1:
        links["prev"] = at(min(page.page - 1, last))
    if page.page < last:
        links["next"] = at(page.page + 1)
    links["last"] = at(last)
    return link_header(links)


def paginated(
    page: Page[T], serialize: Serializer[T], headers: Mapping[str, str] | None = None, *, request: Request
) -> JSONResponse:
    """The contract's ``{data, pagination}`` body and its ``Link`` header (RFC 8288)."""
    return JSONResponse(
        {
            "data": [serialize(item) for item in page.items],
            "pagination": PaginationMeta.render(page),
        },
        headers={**(headers or {}), "Link": page_links(request, page)},
    )
