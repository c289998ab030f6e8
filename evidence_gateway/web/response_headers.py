"""Headers every answer needs, set in one place for every route, error and transport:

- ``X-Content-Type-Options: nosniff`` everywhere: a browser never second-guesses our types
  (an artifact's bytes, a JSON error) into something it would execute.
- ``Cache-Control: no-store`` on everything asked for with credentials — a key, or a signed
  download link — so that no shared or browser cache keeps an organisation's data. ETags stay:
  a client holding its own copy can still ask with If-None-Match (304) or write with If-Match.
  Public answers (GraphiQL's pinned assets, the OpenAPI document) keep their own caching.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


def _credentialed(scope: Scope) -> bool:
    if any(name == b"authorization" for name, _ in scope.get("headers") or ()):
        return True
    query: bytes = scope.get("query_string") or b""
    return b"signature=" in query


class ResponseHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        private = _credentialed(scope)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers["X-Content-Type-Options"] = "nosniff"
                if private:
                    headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)
