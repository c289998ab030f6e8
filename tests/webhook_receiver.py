"""A webhook receiver on a real socket for tests and benchmarks: answers with a script of
statuses, records every request, and can hold requests until released (a receiver that is slow,
or a node killed mid-attempt)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from standardwebhooks.webhooks import Webhook


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() when it arrived

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


@dataclass
class Receiver:
    port: int = 0
    # Statuses of the next answers, in order; 200 once the script is spent.
    script: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    # While clear, requests wait (up to ``hold_seconds``) before they are answered.
    released: threading.Event = field(default_factory=threading.Event)
    hold_seconds: float = 30.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.released.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def ids(self) -> list[str]:
        with self._lock:
            return [r.webhook_id for r in self.received]

    def verified(self, secret: str) -> list[dict[str, object]]:
        """Every payload, each verified with the standardwebhooks library (raises if one fails)."""
        with self._lock:
            requests = list(self.received)
        return [Webhook(secret).verify(r.body, r.headers) for r in requests]

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("content-length", "0"))
        body = handler.rfile.read(length)
        with self._lock:
            self.received.append(Received({k.lower(): v for k, v in handler.headers.items()}, body, time.monotonic()))
            status = self.script.pop(0) if self.script else 200
        self.released.wait(self.hold_seconds)
        handler.send_response(status)
        handler.send_header("content-length", "2")
        handler.end_headers()
        handler.wfile.write(b"ok")


@contextmanager
def running(receiver: Receiver | None = None) -> Iterator[Receiver]:
    receiver = receiver or Receiver()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real receivers do

        def do_POST(self) -> None:  # noqa: N802  (http.server's naming)
            try:
                receiver._answer(self)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the sender went away mid-answer (killed): nothing to answer

        def log_message(self, *_args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        request_queue_size = 256  # the default backlog (5) resets a burst of concurrent connections

    server = Server(("127.0.0.1", receiver.port), Handler)
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.released.set()
        server.shutdown()
        server.server_close()
        thread.join(5)
