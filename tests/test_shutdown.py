"""A graceful stop of a real `serve` process answers every request that reached it first.

The failure this guards against: SIGTERM landing while the event loop is busy (a large
import's body, a pack rendering) cut requests whose bytes had arrived but which the loop had
not yet accepted or read; uvicorn's own shutdown resets those connections. The test makes
"busy" certain instead of likely: the server process is stopped (SIGSTOP) with a pack
generation and a 50,000-row import in flight, twenty GETs are written to it, the kernel shows
each one queued at the server, SIGTERM is sent and only then the process continues (SIGCONT),
so the signal is handled before the loop has read any of them.
"""

from __future__ import annotations

import json
import os
import signal
import socket
from dataclasses import dataclass, field
from pathlib import Path

import h11
import pytest

from tests.serve_process import Client, Database, Server, api_key, database, server
from tests.test_crash_safety import ROWS, Background, calculated_workspace
from tests.waiting import until

pytestmark = pytest.mark.slow

__all__ = ["database", "server"]  # the fixtures, re-exported for this module's tests

# Room for the in-flight pack and 50k-row import to finish on a loaded machine: the drain ends as soon as they do.
GRACEFUL_SECONDS = 300
# Longer than any stop or busy loop of the test, so the pack in flight keeps its lease throughout.
LEASE_SECONDS = GRACEFUL_SECONDS
GETS = 20
IMPORT_ROWS = 50_000
ESTABLISHED = "01"


@dataclass
class RawRequest:
    """One HTTP/1.1 request written on its own socket; its answer read whole with h11."""

    port: int
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    sock: socket.socket = field(init=False)
    sent: int = field(init=False, default=0)
    conn: h11.Connection = field(init=False, default_factory=lambda: h11.Connection(h11.CLIENT))

    def send(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=GRACEFUL_SECONDS + 30)
        headers = [("Host", "127.0.0.1"), *self.headers]
        if self.body:
            headers.append(("Content-Length", str(len(self.body))))
        data = self.conn.send(h11.Request(method=self.method, target=self.target, headers=headers))
        data += self.conn.send(h11.Data(data=self.body)) if self.body else b""
        data += self.conn.send(h11.EndOfMessage())
        self.sock.sendall(data)
        self.sent = len(data)

    @property
    def client_port(self) -> int:
        return int(self.sock.getsockname()[1])

    def answer(self) -> tuple[int, bytes]:
        """The status and the whole body; fails if the connection ends before the answer does."""
        status, body = 0, b""
        while True:
            event = self.conn.next_event()
            if event is h11.NEED_DATA:
                try:
                    chunk = self.sock.recv(65536)
                except ConnectionError as exc:
                    pytest.fail(f"{self.method} {self.target}: {exc!r} before its answer (status {status})")
                if not chunk:
                    pytest.fail(f"{self.method} {self.target}: connection closed before its answer (status {status})")
                self.conn.receive_data(chunk)
            elif isinstance(event, h11.Response):
                status = event.status_code
            elif isinstance(event, h11.Data):
                body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                self.sock.close()
                return status, body


def server_side_queue(server_port: int, client_ports: set[int]) -> dict[int, int] | None:
    """Bytes waiting unread at the server on each client's connection, once the kernel lists every
    one of them as established there (in the listen queue or accepted); else None."""
    found: dict[int, int] = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, state, queues = fields[1], fields[2], fields[3], fields[4]
        if int(local.split(":")[1], 16) != server_port or state != ESTABLISHED:
            continue
        peer = int(remote.split(":")[1], 16)
        if peer in client_ports:
            found[peer] = int(queues.split(":")[1], 16)
    return found if set(found) == client_ports else None


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the kernel's socket table")
def test_sigterm_answers_every_request_that_had_reached_the_server(server: Server, database: Database) -> None:
    key = api_key(database, server.workdir)
    # The suite's 1 s lease would lapse while the process is stopped and while its loop reads the
    # import on a loaded machine; the sweeper then rightly fails the pack as interrupted (409).
    # Leases are not what this test is about (tests/test_crash_safety.py covers them).
    server.env["EVIDENCE_LEASE_SECONDS"] = str(LEASE_SECONDS)
    server.start("--graceful-timeout", str(GRACEFUL_SECONDS))
    assert server.proc is not None
    api = Client(server.base, key)
    auth = [("Authorization", f"Bearer {key}")]
    pack_ws = calculated_workspace(api)
    created = api.post("/api/v2/workspaces", {"name": "big import", "reporting_period_start": "2026-01-01"})
    assert created.status_code == 201, created.text
    rows = [{**ROWS[i % len(ROWS)], "external_id": f"R{i}"} for i in range(IMPORT_ROWS)]
    big_import = RawRequest(
        server.port,
        "POST",
        f"/api/v2/workspaces/{created.json()['data']['id']}/imports",
        [*auth, ("Content-Type", "application/json")],
        json.dumps({"source_row_count": IMPORT_ROWS, "source_filename": "big.csv", "shipments": rows}).encode(),
    )

    # In flight: a pack generation (its row is written first) and the import (every byte sent).
    pack = Background(lambda: api.post(f"/api/v2/workspaces/{pack_ws}/packs", timeout=GRACEFUL_SECONDS + 30))
    until(lambda: database.packs_of(pack_ws), "the pack generation to be under way", logs=server.logs)
    big_import.send()

    os.kill(server.proc.pid, signal.SIGSTOP)
    try:
        gets = [RawRequest(server.port, "GET", "/api/v2/workspaces?limit=5", auth) for _ in range(GETS)]
        for get in gets:
            get.send()
        # Every GET has reached the server: its connection is established there and all its
        # request bytes wait in its socket, none read (the process is stopped).
        queued = until(
            lambda: server_side_queue(server.port, {g.client_port for g in gets}),
            "the kernel to list every GET's connection at the server",
        )
        assert queued == {g.client_port: g.sent for g in gets}, queued
        os.kill(server.proc.pid, signal.SIGTERM)
    finally:
        os.kill(server.proc.pid, signal.SIGCONT)

    for get in gets:
        status, body = get.answer()
        assert status == 200, body
        assert isinstance(json.loads(body)["data"], list), body
    status, body = big_import.answer()
    assert status == 201, body
    assert json.loads(body)["data"]["shipment_count"] == IMPORT_ROWS, body
    pack.thread.join(timeout=GRACEFUL_SECONDS + 30)
    generated = pack.outcome
    assert not isinstance(generated, BaseException) and generated is not None, generated
    assert generated.status_code == 201, generated.text
    exit_status = server.proc.wait(timeout=GRACEFUL_SECONDS + 30)
    assert exit_status in (0, -signal.SIGTERM), f"exit status {exit_status}\n{server.logs()}"
