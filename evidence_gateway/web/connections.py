"""Deadlines and caps on HTTP connections, beneath the app: uvicorn's HTTP protocol with a
header deadline and a per-address connection cap (``serve`` runs it; docs/operations.md).

uvicorn closes an idle keep-alive connection (``timeout_keep_alive``) and answers 503 past
``limit_concurrency``, but waits for a request line and headers for ever: a client that opens a
connection and sends nothing, or half a request line, holds it until it leaves. Here a request's
line and headers must be complete within ``EVIDENCE_HEADER_TIMEOUT_SECONDS`` of the connection
opening (or of the request's first byte on a kept-alive connection), else 408 and the connection
is closed; the body then has its own deadline in the app (http_body.py). And one client address
holds at most ``EVIDENCE_MAX_CONNECTIONS_PER_ADDRESS`` connections to this process: further ones
are closed at once. A trusted proxy (EVIDENCE_TRUSTED_PROXIES) carries many clients on its
connections, so it is not capped here: the proxy enforces its clients' limits.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from evidence_gateway.settings import get_settings
from evidence_gateway.web.proxies import ClientAddress, parse_networks

log = logging.getLogger(__name__)

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 38\r\nconnection: close\r\n\r\nrequest headers not received in time\r\n"
)

# Open connections per client address, in this process.
_open: Counter[str] = Counter()


@dataclass(frozen=True, slots=True)
class Limits:
    header_seconds: float
    per_address: int
    proxies: ClientAddress


@cache
def limits() -> Limits:
    """This process's limits, read once from the settings ``serve`` put in the environment."""
    settings = get_settings()
    return Limits(
        header_seconds=settings.header_timeout_seconds,
        per_address=settings.max_connections_per_address,
        proxies=ClientAddress(parse_networks(settings.trusted_proxies), settings.trusted_proxy_header),
    )


def open_connections(address: str) -> int:
    return _open[address]


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline and a per-address connection cap."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._counted: str | None = None
        self._in_headers = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        guard = limits()
        host = self.client[0] if self.client else None
        if host is not None and not guard.proxies.trusted(host):
            if _open[host] >= guard.per_address:
                log.warning("connection from %s closed: %d already open from it", host, _open[host])
                transport.close()
                return
            _open[host] += 1
            self._counted = host
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._release()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_headers = True
        if self._deadline is None:  # a kept-alive connection's next request starts its clock here
            self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        self._in_headers = False
        super().on_headers_complete()

    def handle_websocket_upgrade(self) -> None:
        # The socket's protocol takes the connection over; it is no longer this one's to count.
        self._disarm()
        self._release()
        super().handle_websocket_upgrade()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(limits().header_seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _release(self) -> None:
        if self._counted is not None:
            _open[self._counted] -= 1
            if _open[self._counted] <= 0:
                del _open[self._counted]
            self._counted = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self._in_headers:
            self.transport.write(_TIMED_OUT)
        self.transport.close()
