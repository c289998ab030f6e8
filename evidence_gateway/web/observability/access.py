"""One access line per request (DESIGN.md §17): who called (organisation, key prefix), what
(method, path without its query string, route template or GraphQL operation), the status and
the duration. The same facts feed the request metrics (observability/metrics.py).

The record of a request lives in a context variable holding a mutable object: authentication
and the GraphQL extension fill it in from deep inside the request, possibly in child tasks,
and the middleware reads it once the answer is sent.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from starlette.routing import BaseRoute, Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.web.observability import log_context
from evidence_gateway.web.request_id import request_id_of

log = logging.getLogger("evidence_gateway.access")

UNMATCHED = "unmatched"


@dataclass(slots=True)
class AccessRecord:
    route: str = UNMATCHED
    org: str | None = None
    key_prefix: str | None = None
    graphql_operation: str | None = None
    graphql_type: str | None = None
    status: int | None = None


# Called after each request with its scope, record, status and duration in seconds (metrics).
OnDone = Callable[[Scope, AccessRecord, int, float], None]

_current: ContextVar[AccessRecord | None] = ContextVar("evidence_access_record", default=None)


def current() -> AccessRecord | None:
    return _current.get()


def note_caller(org_id: uuid.UUID, token: str) -> None:
    """Called once a key is verified: the organisation and the first characters of the key
    after its ``evk_`` prefix (never the key; 32 of its 192 random bits), for every later line."""
    prefix = token[4:12]
    log_context.bind(org=str(org_id), key_prefix=prefix)
    record = _current.get()
    if record is not None:
        record.org, record.key_prefix = str(org_id), prefix


def note_graphql(operation: str | None, kind: str | None) -> None:
    log_context.bind(graphql_operation=operation)
    record = _current.get()
    if record is not None:
        record.graphql_operation, record.graphql_type = operation, kind


def route_template(routes: list[BaseRoute], scope: Scope) -> str | None:
    """The path template Starlette will dispatch to (``/api/v2/workspaces/{id}``): a label of
    bounded cardinality, unlike the raw path."""
    partial: str | None = None
    for route in routes:
        match, child = route.matches(scope)
        if match is Match.NONE:
            continue
        if isinstance(route, Mount) and route.routes:
            inner = route_template(route.routes, {**scope, **child})
            found = None if inner is None else route.path + inner
        else:
            found = getattr(route, "path", None)
        if match is Match.FULL:
            return found
        partial = partial or found
    return partial


class RouteTemplates:
    """``route_template`` per request, remembered per request line: the routes are fixed once the
    app serves, so the template is a function of the scope's type, method, root path and path.
    Walking every route (and the /api mount's) cost more than the rest of the access line; most
    traffic repeats a few paths. Bounded like the key cache: full, it starts over."""

    MAX_ENTRIES = 4096

    def __init__(self, routes: list[BaseRoute]) -> None:
        self.routes = routes
        self._known: dict[tuple[Any, ...], str | None] = {}

    def __call__(self, scope: Scope) -> str | None:
        key = (scope["type"], scope.get("method"), scope.get("root_path", ""), scope.get("path"))
        try:
            return self._known[key]
        except KeyError:
            pass
        found = route_template(self.routes, dict(scope))
        if len(self._known) >= self.MAX_ENTRIES:
            self._known.clear()
        self._known[key] = found
        return found


class AccessLogMiddleware:
    """Times each request, logs its access line, records its metrics; a crash that escapes the
    app (after Starlette answered 500, or before any answer) is logged here once and ends here."""

    def __init__(self, app: ASGIApp, routes: list[BaseRoute], on_done: list[OnDone]) -> None:
        self.app = app
        self.routes = routes
        self.templates = RouteTemplates(routes)
        self.on_done = on_done

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        record = AccessRecord(route=self.templates(scope) or UNMATCHED)
        token = _current.set(record)
        log_context.start(request_id=request_id_of(scope))
        started = time.perf_counter()

        async def timed_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                record.status = message["status"]
            elif message["type"] == "websocket.accept":
                record.status = 101
            elif message["type"] == "websocket.close" and record.status is None:
                record.status = 403  # refused before the handshake completed
            await send(message)

        try:
            await self.app(scope, receive, timed_send)
        except Exception:
            # HTTP: Starlette's error handler has logged it, and answered 500 if nothing had
            # started; a stream that broke mid-way can only end here. WebSockets: nobody logged it.
            if scope["type"] == "websocket":
                log.exception("unhandled error on a websocket")
            elif record.status is None:
                await _internal_error(timed_send)
        finally:
            duration_ms = round((time.perf_counter() - started) * 1000, 2)
            status = record.status or 500
            log.info(
                "request",
                extra={
                    "method": scope.get("method", "WEBSOCKET"),
                    "path": scope.get("path"),
                    "route": record.route,
                    "graphql_operation": record.graphql_operation,
                    "org": record.org,
                    "key_prefix": record.key_prefix,
                    "status": status,
                    "duration_ms": duration_ms,
                    "client": (scope.get("client") or (None,))[0],
                },
            )
            for hook in self.on_done:
                hook(scope, record, status, duration_ms / 1000)
            log_context.clear()
            _current.reset(token)


async def _internal_error(send: Send) -> None:
    body = dumps({"error": "internal server error", "details": {"code": "internal_error"}})
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 500, "headers": headers})
    await send({"type": "http.response.body", "body": body})
