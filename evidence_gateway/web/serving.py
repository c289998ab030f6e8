"""What ``serve`` runs: uvicorn, whose shutdown first takes in every request that has arrived.

uvicorn's own shutdown (``uvicorn.Server.shutdown``) closes the listening sockets, then closes
every connection whose request it has not started. A connection the kernel completed but the
event loop had not yet accepted is reset with the listening socket, and a connection whose
request bytes sit unread in its socket is closed with them: both happen whenever the loop is
busy (a large import's body, a pack rendering) at the moment SIGTERM arrives, so a client that
sent a whole request before the signal gets no answer. ``GracefulServer`` lets the loop take
those in first (accept what waits in the listen queue, stop accepting, read what waits in each
idle connection) and only then hands over to uvicorn, which answers every request it has read,
with ``Connection: close``, within the same graceful timeout (docs/operations.md, "Stopping").
"""

from __future__ import annotations

import asyncio
import select
import socket
import sys
import time
from collections.abc import Iterable
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import multiprocess

# How long the supervisor of several workers waits for a worker to answer its health ping before
# it kills and replaces the worker (uvicorn's default is 5 s). A worker starting on a busy machine
# (interpreter, imports) can take longer than that to answer its first ping, and each
# replacement then starts as slowly: the supervisor restarted workers over and over.
WORKER_HEALTHCHECK_SECONDS = 60

# Consecutive quiet looks (each at least one turn of the event loop) before the connections are
# handed over: an accepted socket takes a few turns to become a connection with its bytes read.
_QUIET_LOOKS = 4
_LOOK_INTERVAL = 0.002

_NOT_HTTP = object()


def _readable(fds: Iterable[int]) -> bool:
    """Whether any of ``fds`` has something to read now (data, a waiting connection, or EOF)."""
    poller = select.poll()
    registered = False
    for fd in fds:
        if fd >= 0:
            poller.register(fd, select.POLLIN)
            registered = True
    return registered and bool(poller.poll(0))


def _fd(transport: Any) -> int:
    sock = transport.get_extra_info("socket") if transport is not None else None
    return sock.fileno() if sock is not None else -1


def _request_waiting(connection: Any) -> bool:
    """An HTTP connection uvicorn would close as idle, with (part of) a request already here."""
    cycle: Any = getattr(connection, "cycle", _NOT_HTTP)
    if cycle is _NOT_HTTP or not (cycle is None or cycle.response_complete):
        return False  # a WebSocket, or a request under way: uvicorn lets it finish
    if getattr(connection, "transport", None) is None or connection.transport.is_closing():
        return False
    # h11 keeps the bytes of a request whose head has not arrived whole (httptools has no such look).
    h11_conn = getattr(connection, "conn", None)
    buffered = getattr(h11_conn, "trailing_data", (b"", False))[0]
    return bool(buffered) or _readable([_fd(connection.transport)])


class GracefulServer(uvicorn.Server):
    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        timeout = self.config.timeout_graceful_shutdown
        started = time.monotonic()
        deadline = None if timeout is None else started + timeout
        if not self.force_exit:
            await self._take_in_what_has_arrived(deadline)
        if timeout is not None:
            # uvicorn waits for the requests in flight for what is left of the same timeout: a float,
            # which asyncio.wait_for takes (Config annotates it as int).
            left = max(0.0, timeout - (time.monotonic() - started))
            self.config.timeout_graceful_shutdown = left  # type: ignore[assignment]
        await super().shutdown(sockets)

    async def _take_in_what_has_arrived(self, deadline: float | None) -> None:
        def in_time() -> bool:
            return (deadline is None or time.monotonic() < deadline) and not self.force_exit

        loop = asyncio.get_running_loop()
        listening = [s.fileno() for server in self.servers for s in server.sockets]
        # 1. Let the loop accept every connection waiting in the listen queue, then stop accepting
        #    in the same step (nothing can be queued and missed in between). On asyncio's loop the
        #    accept reader goes first: an accepted socket becomes a transport a turn later, and
        #    closing the server before that would drop it.
        while _readable(listening) and in_time():  # noqa: ASYNC110 (kernel state: no event to await)
            await asyncio.sleep(_LOOK_INTERVAL)
        if isinstance(loop, asyncio.SelectorEventLoop):  # uvloop accepts and connects in one step
            for fd in listening:
                loop.remove_reader(fd)
        for _ in range(_QUIET_LOOKS):
            await asyncio.sleep(0)
        for server in self.servers:
            server.close()
        # 2. Let the loop read every request waiting on an idle connection, until nothing has been
        #    waiting for a few turns in a row: each one read has started, so uvicorn answers it.
        quiet = 0
        while quiet < _QUIET_LOOKS and in_time():
            await asyncio.sleep(_LOOK_INTERVAL)
            waiting = any(_request_waiting(c) for c in list(self.server_state.connections))
            quiet = 0 if waiting else quiet + 1


class GracefulProcess(multiprocess.Process):
    """A worker process of the supervisor that runs ``GracefulServer``."""

    @property
    def server(self) -> uvicorn.Server:
        if self._server is None:
            self._server = GracefulServer(config=self.config)
        return self._server


def run(app: str, **options: Any) -> None:
    """``uvicorn.run(app, **options)`` with ``GracefulServer`` in every process that serves."""
    config = uvicorn.Config(app, **options)
    if config.workers > 1:
        # uvicorn's supervisor makes its workers by this module-level name; this process only
        # supervises from here on, so its workers run GracefulServer.
        multiprocess.Process = GracefulProcess  # type: ignore[misc]
        multiprocess.Multiprocess(config, sockets=[config.bind_socket()]).run()
        return
    server = GracefulServer(config=config)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    if not server.started:
        sys.exit(STARTUP_FAILURE)
