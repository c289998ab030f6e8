"""Crash safety of long work (DESIGN.md §15) with real processes, real sockets and SIGKILL.

A server is started with ``EVIDENCE_PAUSE_AT`` so its work blocks for good at a named point,
killed there with SIGKILL (its whole process group), and restarted without the pause: the
sweeper of the new process must fail what the dead one left half done. Every wait polls an
observable state (a row in the database, a resource over the API) against a deadline.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.serve_process import Client, Database, Server, api_key, database, server
from tests.waiting import until

pytestmark = pytest.mark.slow

__all__ = ["database", "server"]  # the fixtures, re-exported for this module's tests

ASYNC = {"Prefer": "respond-async"}
ROWS: list[dict[str, Any]] = [
    {"external_id": "D", "mode": "road", "distance_km": 100, "mass_tonnes": 10},
    {
        "external_id": "S", "mode": "rail", "distance_km": 500, "mass_tonnes": 20,
        "carrier_intensity_g_per_tkm": 20, "carrier_intensity_basis": "wtw",
    },  # fmt: skip
    {"external_id": "P", "mode": "road", "distance_km": 300, "mass_tonnes": 8, "fuel_type": "diesel",
     "fuel_amount": 90},
]  # fmt: skip


# ---- the database, read directly (what the server shows is checked over the API) ------------------


# ---- the command line and the server process --------------------------------------------------------


def imported_workspace(api: Client) -> str:
    created = api.post("/api/v2/workspaces", {"name": "crash test", "reporting_period_start": "2026-01-01"})
    assert created.status_code == 201, created.text
    ws_id: str = created.json()["data"]["id"]
    body = {"source_row_count": len(ROWS), "source_filename": "q1.csv", "shipments": ROWS}
    imported = api.post(f"/api/v2/workspaces/{ws_id}/imports", body)
    assert imported.status_code == 201, imported.text
    return ws_id


def calculated_workspace(api: Client) -> str:
    ws_id = imported_workspace(api)
    resp = api.post(f"/api/v2/workspaces/{ws_id}/calculate")
    assert resp.status_code == 200, resp.text
    assert resp.json()["data"]["status"] == "calculated"
    return ws_id


class Background:
    """A synchronous request that will hang in the server; it ends when the server dies."""

    def __init__(self, call: Callable[[], httpx.Response]) -> None:
        self.outcome: httpx.Response | BaseException | None = None

        def run() -> None:
            try:
                self.outcome = call()
            except BaseException as exc:  # the server is killed under it: a transport error
                self.outcome = exc

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def join(self) -> httpx.Response | BaseException | None:
        self.thread.join(timeout=15)
        assert not self.thread.is_alive(), "the hanging request did not end with its server"
        return self.outcome


# ---- 1. a calculation killed mid-work ----------------------------------------------------------------


def test_killed_calculation_is_failed_after_restart_and_can_be_retried(server: Server, database: Database) -> None:
    key = api_key(database, server.workdir)
    server.start(pause_at="calculation.computed")
    api = Client(server.base, key)
    ws_id = imported_workspace(api)

    accepted = api.post(f"/api/v2/workspaces/{ws_id}/calculate", headers=ASYNC)
    assert accepted.status_code == 202, accepted.text
    run_id = accepted.json()["data"]["id"]
    assert accepted.headers["Location"].endswith(f"/api/v2/calculation-runs/{run_id}")
    # Claimed by the worker: mid-work, and it can never finish (the pause).
    owner = until(lambda: database.lease_owner("calculation_run", run_id), "the worker to claim the run", 15)
    assert api.data(f"/api/v2/calculation-runs/{run_id}")["status"] == "running"

    server.kill()
    # Nobody renews the lease now; the row still says running, owned by the dead process.
    assert database.lease_owner("calculation_run", run_id) == owner
    server.start()

    run = until(
        lambda: (d := api.data(f"/api/v2/calculation-runs/{run_id}"))["status"] != "running" and d,
        "the sweeper to fail the interrupted run",
        logs=server.logs,
    )
    assert run["status"] == "failed", run
    assert run["error_message"].startswith("interrupted"), run
    assert database.lease_owner("calculation_run", run_id) is None
    workspace = api.data(f"/api/v2/workspaces/{ws_id}")
    assert workspace["status"] == "data_imported", workspace
    assert workspace["latest_calculation_run_id"] is None, workspace
    failed = [e for e in api.events("calculation.failed") if e["data"]["id"] == run_id]
    assert [e["data"]["reason"] for e in failed] == ["interrupted"], failed

    retry = api.post(f"/api/v2/workspaces/{ws_id}/calculate")
    assert retry.status_code == 200, retry.text
    body = retry.json()["data"]
    assert body["calculation_run"]["status"] == "completed" and body["calculation_run"]["id"] != run_id
    workspace = api.data(f"/api/v2/workspaces/{ws_id}")
    assert workspace["status"] == "calculated"
    assert workspace["latest_calculation_run_id"] == body["calculation_run"]["id"]


# ---- 2. a pack killed after its first artifact was stored ----------------------------------------------


@pytest.mark.parametrize("mode", ["respond-async", "synchronous"])
def test_killed_pack_generation_is_failed_and_its_stored_artifact_unreadable(
    server: Server, database: Database, mode: str
) -> None:
    key = api_key(database, server.workdir)
    server.start(pause_at="pack.artifact_stored")
    api = Client(server.base, key)
    ws_id = calculated_workspace(api)

    hanging = None
    if mode == "respond-async":
        accepted = api.post(f"/api/v2/workspaces/{ws_id}/packs", headers=ASYNC)
        assert accepted.status_code == 202, accepted.text
        pack_id = accepted.json()["data"]["id"]
        assert accepted.headers["Location"].endswith(f"/api/v2/packs/{pack_id}")
    else:
        # The request renders the pack itself and hangs at the pause; a draft pack is not the
        # workspace's latest, so its id is read from the database.
        hanging = Background(lambda: api.post(f"/api/v2/workspaces/{ws_id}/packs", timeout=60))
        pack_id = until(lambda: database.packs_of(ws_id), "the pack to be allocated", 15, server.logs)[0]

    def one_artifact_stored() -> dict[str, Any] | None:
        detail: dict[str, Any] = api.data(f"/api/v2/packs/{pack_id}")
        return detail if any(a["status"] == "generated" for a in detail["artifacts"]) else None

    detail = until(one_artifact_stored, "the first artifact to be stored", 15, server.logs)
    assert detail["status"] == "draft" and detail["pack_hash"] is None
    statuses = sorted(a["status"] for a in detail["artifacts"])
    assert statuses == ["generated"] + ["pending"] * 7, statuses  # the eight listed; the iLEAP file is pending too
    stored = next(a for a in detail["artifacts"] if a["status"] == "generated")
    # The bug this guards against: a half-generated pack whose files can be downloaded.
    signed = httpx.get(stored["signed_download_url"], timeout=10)
    assert signed.status_code == 200 and signed.content
    assert api.get(stored["file_url"]).status_code == 200
    assert database.lease_owner("report_pack", pack_id)

    server.kill()
    if hanging is not None:
        assert not isinstance(hanging.join(), httpx.Response), "the hanging request got an answer"
    server.start()

    final = until(
        lambda: (d := api.data(f"/api/v2/packs/{pack_id}"))["status"] != "draft" and d,
        "the sweeper to fail the interrupted pack",
        logs=server.logs,
    )
    assert final["status"] == "failed", final
    assert {a["status"] for a in final["artifacts"]} == {"failed"}, final["artifacts"]
    assert database.lease_owner("report_pack", pack_id) is None
    gone = httpx.get(stored["signed_download_url"], timeout=10)
    assert gone.status_code == 409, gone.text
    assert api.get(stored["file_url"]).status_code == 409
    approval = api.post(f"/api/v2/packs/{pack_id}/approvals", {"action_type": "requested"})
    assert approval.status_code == 409, approval.text
    failed = [e for e in api.events("pack.failed") if e["data"]["id"] == pack_id]
    assert [e["data"]["reason"] for e in failed] == ["interrupted"], failed

    retry = api.post(f"/api/v2/workspaces/{ws_id}/packs")
    assert retry.status_code == 201, retry.text
    pack = retry.json()["data"]
    assert pack["status"] == "generated" and pack["version_number"] == 2, pack
    workspace = api.data(f"/api/v2/workspaces/{ws_id}")
    assert workspace["status"] == "review_needed"


# ---- 3. a graceful stop ------------------------------------------------------------------------------


def test_sigterm_stops_an_idle_server_promptly(server: Server, database: Database) -> None:
    server.start("--graceful-timeout", "5")
    started = time.monotonic()
    status = server.terminate(timeout=10)
    elapsed = time.monotonic() - started
    # uvicorn re-raises the signal it handled once it has shut down cleanly, so the exit status
    # reads "ended by SIGTERM"; either that or 0 is a clean stop. A crash or a hang is neither.
    assert status in (0, -signal.SIGTERM), f"exit status {status}\n{server.logs()}"
    assert elapsed < 5, elapsed
    assert "Application shutdown complete" in server.logs()


def test_sigterm_fails_paused_work_instead_of_leaving_it_running(server: Server, database: Database) -> None:
    key = api_key(database, server.workdir)
    server.start("--graceful-timeout", "2", pause_at="calculation.computed")
    api = Client(server.base, key)
    queued_ws, inline_ws = imported_workspace(api), imported_workspace(api)
    # One run in the background worker, one inside a request in flight; both block at the pause.
    accepted = api.post(f"/api/v2/workspaces/{queued_ws}/calculate", headers=ASYNC)
    assert accepted.status_code == 202, accepted.text
    queued_run = accepted.json()["data"]["id"]
    hanging = Background(lambda: api.post(f"/api/v2/workspaces/{inline_ws}/calculate", timeout=60))

    def runs() -> list[tuple[Any, ...]]:
        return database.rows("SELECT id, status, lease_owner, error_message FROM calculation_run")

    until(lambda: len(runs()) == 2 and all(r[2] for r in runs()), "both runs to be under way", 15, server.logs)
    started = time.monotonic()
    status = server.terminate(timeout=15)
    elapsed = time.monotonic() - started
    assert status in (0, -signal.SIGTERM), f"exit status {status}\n{server.logs()}"
    assert elapsed < 10, elapsed
    answer = hanging.join()
    ended = runs()
    assert [(r[1], r[2]) for r in ended] == [("failed", None)] * 2, ended
    assert all(r[3] for r in ended), ended
    assert any(uuid.UUID(str(r[0])) == uuid.UUID(queued_run) for r in ended)
    if isinstance(answer, httpx.Response):  # the request in flight may be answered with its failure
        assert answer.status_code >= 500 or answer.status_code == 409, answer.text
