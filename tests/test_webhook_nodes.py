"""Webhook delivery across real processes (DESIGN.md §16): two `serve` nodes with their
dispatchers on one database deliver each event exactly once to a healthy receiver, and a node
SIGKILLed in the middle of an attempt leaves the event to another process, which sends it again
with the same webhook-id. Every wait polls an observable state against a deadline."""

from __future__ import annotations

import os
import signal
import subprocess
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.serve_process import CLI, Client, Database, Server, api_key, clean_env, database
from tests.waiting import until
from tests.webhook_receiver import Receiver, running

pytestmark = pytest.mark.slow
__all__ = ["database"]  # the fixture, re-exported for this module's tests

# Fast attempts: a node killed mid-attempt lets go of its message within a few seconds.
NODE_ENV = {
    "EVIDENCE_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true",
    "EVIDENCE_WEBHOOK_CONNECT_TIMEOUT_SECONDS": "0.5",
    "EVIDENCE_WEBHOOK_READ_TIMEOUT_SECONDS": "1",
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as r:
        yield r


def node(database: Database, workdir: Path, *args: str) -> Server:
    srv = Server(database, workdir, env=dict(NODE_ENV))
    srv.start(*args)
    return srv


def delivered_ids(database: Database) -> Counter[str]:
    rows = database.rows("SELECT webhook_id FROM webhook_delivery WHERE delivered")
    return Counter(str(r[0]) for r in rows)


def event_ids(database: Database, *types: str) -> set[str]:
    rows = database.rows("SELECT id, type FROM event")
    return {_uuid(r[0]) for r in rows if r[1] in types}


def _uuid(value: object) -> str:
    return str(value if isinstance(value, uuid.UUID) else uuid.UUID(str(value)))


def test_two_nodes_deliver_every_event_exactly_once(database: Database, tmp_path: Path, receiver: Receiver) -> None:
    key = api_key(database, tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = node(database, tmp_path / "a"), node(database, tmp_path / "b")
    try:
        nodes = [Client(a.base, key), Client(b.base, key)]
        resp = nodes[0].post("/api/v2/webhook-endpoints", {"url": receiver.url, "event_types": ["workspace.created"]})
        assert resp.status_code == 201, resp.text
        secret = resp.json()["data"]["secret"]
        for n in range(40):
            body = {"name": f"W{n}", "reporting_period_start": "2026-01-01", "reporting_period_end": "2026-03-31"}
            assert nodes[n % 2].post("/api/v2/workspaces", body).status_code == 201
        wanted = event_ids(database, "workspace.created")
        assert len(wanted) == 40

        until(lambda: set(delivered_ids(database)) == wanted, "all 40 events recorded as delivered", logs=a.logs)
        # Exactly once each: one request per event at the receiver, one delivered attempt per event.
        assert Counter(receiver.ids()) == Counter(dict.fromkeys(wanted, 1))
        assert delivered_ids(database) == Counter(dict.fromkeys(wanted, 1))
        assert len(receiver.verified(secret)) == 40
    finally:
        a.cleanup()
        b.cleanup()


def test_a_node_killed_mid_attempt_leaves_the_event_to_another_process(
    database: Database, tmp_path: Path, receiver: Receiver
) -> None:
    key = api_key(database, tmp_path)
    receiver.released.clear()  # the first attempt hangs at the receiver
    a = node(database, tmp_path)
    worker: subprocess.Popen[bytes] | None = None
    try:
        client = Client(a.base, key)
        resp = client.post("/api/v2/webhook-endpoints", {"url": receiver.url, "event_types": ["workspace.created"]})
        assert resp.status_code == 201, resp.text
        body = {"name": "W", "reporting_period_start": "2026-01-01", "reporting_period_end": "2026-03-31"}
        assert client.post("/api/v2/workspaces", body).status_code == 201
        (event_id,) = event_ids(database, "workspace.created")

        until(lambda: receiver.ids() == [event_id], "node A's attempt to be on the wire", logs=a.logs)
        a.kill()  # mid-attempt: nothing recorded, the message still claimed by a dead node
        assert delivered_ids(database) == Counter()
        receiver.released.set()

        # Another process (here `evidence-gateway worker`) takes the message once the claim runs out.
        with open(tmp_path / "worker.log", "wb") as log:
            worker = subprocess.Popen(
                [*CLI, "worker"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=clean_env(database, **NODE_ENV),
                cwd=tmp_path,
                start_new_session=True,
            )
        until(
            lambda: delivered_ids(database) == Counter({event_id: 1}),
            "the worker to deliver the event",
            logs=lambda: (tmp_path / "worker.log").read_text(errors="replace"),
        )
        assert receiver.ids() == [event_id, event_id]  # the same webhook-id both times
    finally:
        a.cleanup()
        if worker is not None:
            os.killpg(worker.pid, signal.SIGTERM)
            assert worker.wait(timeout=20) == 0
