"""X-Request-ID (DESIGN.md §17): taken from the request when sane, else generated; echoed on
every response, written into every error body (``details.request_id`` on REST, each GraphQL
error's ``extensions.request_id``), bound to every log line and carried into the events a
request causes.

The middleware runs outside everything else (``app.EvidenceApp``), so 404s, 405s, 413s and
the 500 of a crash carry the id as well. Error bodies are completed here rather than by each
producer of an error: there are many of them (REST handlers, the GraphQL view, Strawberry's own
refusals) and one rule in one place cannot be forgotten by the next.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import orjson
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HEADER = "X-Request-ID"
_SANE = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,200}$")
# Error bodies are small; a body past this is passed on untouched rather than held in memory.
_MAX_ERROR_BODY = 256 * 1024


def request_id_of(scope: Scope) -> str | None:
    state = scope.get("state") or {}
    value = state.get("request_id")
    return value if isinstance(value, str) else None


def chosen_request_id(scope: Scope) -> str:
    """The client's id when it is sane (printable, at most 200 characters), else a fresh one."""
    given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
    return given if _SANE.fullmatch(given) else uuid.uuid4().hex


def with_request_id(body: bytes, request_id: str) -> bytes | None:
    """The JSON error body with the id added, or None when it is not one of our error shapes."""
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    changed = False
    details = document.get("details")
    if "error" in document and isinstance(details, dict):
        details["request_id"] = request_id
        changed = True
    errors = document.get("errors")
    if isinstance(errors, list):
        for error in errors:
            if isinstance(error, dict):
                extensions: Any = error.setdefault("extensions", {})
                if isinstance(extensions, dict):
                    extensions["request_id"] = request_id
                    changed = True
    return orjson.dumps(document) if changed else None


class RequestIdMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request_id = chosen_request_id(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        held: Message | None = None  # the start of a JSON answer that may be an error
        chunks: list[bytes] = []

        async def send_with_id(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers[HEADER] = request_id
                if _may_be_error(scope, message["status"], headers):
                    held = message
                    return
            elif message["type"] == "http.response.body" and held is not None:
                chunks.append(message.get("body", b""))
                size = sum(len(c) for c in chunks)
                if message.get("more_body", False) and size <= _MAX_ERROR_BODY:
                    return
                body = b"".join(chunks)
                start, held = held, None
                rewritten = None if message.get("more_body", False) else _rewrite(body, request_id)
                if rewritten is not None:
                    body = rewritten
                    MutableHeaders(scope=start)["content-length"] = str(len(body))
                await send(start)
                await send({**message, "body": body})
                return
            await send(message)

        await self.app(scope, receive, send_with_id)


# JSON bodies, GraphQL's own media type (GraphQL over HTTP) included.
_JSON_TYPES = ("application/json", "application/graphql-response+json")


def _may_be_error(scope: Scope, status: int, headers: MutableHeaders) -> bool:
    if not headers.get("content-type", "").startswith(_JSON_TYPES):
        return False
    # GraphQL reports errors in 200 answers too (partial data); REST only in 4xx/5xx.
    return status >= 400 or scope.get("path") == "/graphql"


def _rewrite(body: bytes, request_id: str) -> bytes | None:
    # A GraphQL answer without the word is data only: no parse of large result sets.
    if b'"errors"' not in body and b'"error"' not in body:
        return None
    return with_request_id(body, request_id)
