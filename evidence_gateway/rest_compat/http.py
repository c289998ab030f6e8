"""Envelopes, JSON rendering and the caller of a REST request."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import orjson
from starlette.requests import Request
from starlette.responses import Response

from evidence_gateway.auth import authenticate
from evidence_gateway.resolvers.context import Ctx
from evidence_gateway.resolvers.pagination import Page

T = TypeVar("T")
Serializer = Callable[[T], dict[str, Any]]

_JSON_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS


def _default(value: Any) -> Any:
    # asyncpg returns its own UUID subclass, which orjson does not know.
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(content: Any) -> bytes:
    return orjson.dumps(content, default=_default, option=_JSON_OPTIONS)


class JSONResponse(Response):
    """orjson-rendered; naive datetimes are UTC and print with a ``Z``."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


async def caller(request: Request) -> Ctx:
    state = request.app.state
    principal = await authenticate(state.db, request.headers.get("authorization"), state.key_cache)
    return Ctx(db=state.db, settings=state.settings, principal=principal)


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
            "pagination": {"page": page.page, "per_page": page.per_page, "total": page.total},
        },
        headers=headers,
    )


def pick(obj: Any, fields: Iterable[str]) -> dict[str, Any]:
    return {f: getattr(obj, f) for f in fields}
