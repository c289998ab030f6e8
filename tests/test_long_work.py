"""Long work (DESIGN.md §15): Prefer: respond-async, the queue, leases and the sweeper."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import update

from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import CalculationRun, ReportPack
from evidence_gateway.settings import Settings
from evidence_gateway.worker import Worker
from tests.conftest import Api
from tests.test_packs import calculated_workspace
from tests.test_write_concurrency import imported

ASYNC = {"Prefer": "respond-async"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """These tests need the node's worker: the queue and the sweeper."""
    return settings.model_copy(update={"background_work": True})


def app_state(api: Api) -> Any:
    return api.http._transport.app.state  # type: ignore[attr-defined]


async def until(api: Api, path: str, done: Any, within: float = 30) -> dict[str, Any]:
    """Poll a resource until ``done(data)``: waiting for background work, not timing a race."""
    deadline = time.monotonic() + within
    while True:
        data: dict[str, Any] = (await api.get(path)).json()["data"]
        if done(data):
            return data
        if time.monotonic() > deadline:
            pytest.fail(f"{path} did not finish within {within:.0f} s: {data}")
        await asyncio.sleep(0.02)


async def test_calculate_respond_async_answers_202_and_completes(api: Api) -> None:
    ws = await imported(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", headers=ASYNC)
    assert resp.status_code == 202, resp.text
    assert resp.headers["Preference-Applied"] == "respond-async"
    location = resp.headers["Location"]
    run = resp.json()["data"]
    assert location.endswith(f"/api/v2/calculation-runs/{run['id']}") and run["status"] == "running"
    path = location.removeprefix("http://testserver")
    final = await until(api, path, lambda d: d["status"] != "running")
    assert final["status"] == "completed" and final["quality_assessment"]["calculation_run_id"] == run["id"]
    detail = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    assert detail["status"] == "calculated" and detail["latest_calculation_run_id"] == run["id"]


async def test_packs_respond_async_answers_202_and_generates(api: Api) -> None:
    ws = await calculated_workspace(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/packs", headers=ASYNC)
    assert resp.status_code == 202, resp.text
    pack = resp.json()["data"]
    assert pack["status"] == "draft" and pack["pack_hash"] is None
    final = await until(api, f"/api/v2/packs/{pack['id']}", lambda d: d["status"] != "draft")
    assert final["status"] == "generated" and len(final["pack_hash"]) == 64
    assert all(a["status"] == "generated" for a in final["artifacts"])
    # Same inputs, same files: a synchronous regeneration gives the same pack_hash.
    again = (await api.post(f"/api/v2/workspaces/{ws['id']}/packs")).json()["data"]
    assert again["pack_hash"] == final["pack_hash"]


async def test_sweeper_fails_expired_work_and_makes_partial_artifacts_unreadable(api: Api) -> None:
    state = app_state(api)
    ws = await calculated_workspace(api)
    pack = (await api.post(f"/api/v2/workspaces/{ws['id']}/packs")).json()["data"]
    run_id = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["latest_calculation_run_id"]
    # As if their nodes had died mid-work: running / being rendered, leases long expired.
    past = utcnow() - timedelta(minutes=5)
    async with state.db.write() as session:
        await session.execute(
            update(CalculationRun)
            .where(CalculationRun.id == uuid.UUID(run_id))
            .values(status="running", lease_owner="dead-node", lease_expires_at=past)
        )
        await session.execute(
            update(ReportPack)
            .where(ReportPack.id == uuid.UUID(pack["id"]))
            .values(status="draft", pack_hash=None, lease_owner="dead-node", lease_expires_at=past)
        )
    artifact = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"][0]
    assert (await api.http.get(artifact["signed_download_url"])).status_code == 200
    assert await Worker(state.db, state.settings).sweep() == 2
    run = (await api.get(f"/api/v2/calculation-runs/{run_id}")).json()["data"]
    assert run["status"] == "failed" and run["error_message"].startswith("interrupted")
    detail = (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]
    assert detail["status"] == "failed" and {a["status"] for a in detail["artifacts"]} == {"failed"}
    assert (await api.http.get(artifact["signed_download_url"])).status_code == 409
    approval = await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "requested"})
    assert approval.status_code == 409
    events = (await api.get("/api/v2/events?limit=200")).json()["data"]
    failed = [e for e in events if e["type"] in ("calculation.failed", "pack.failed")]
    assert {(e["type"], e["data"]["reason"]) for e in failed} == {
        ("calculation.failed", "interrupted"),
        ("pack.failed", "interrupted"),
    }
    # Sweeping again finds nothing: no second event.
    assert await Worker(state.db, state.settings).sweep() == 0


async def test_two_workers_never_take_the_same_queued_run(api: Api) -> None:
    state = app_state(api)
    workspaces = [await imported(api) for _ in range(3)]
    # Queue runs with every worker of the app stopped, then let two fresh workers race for them.
    await state.worker.stop(0)
    queued = [
        (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", headers=ASYNC)).json()["data"]["id"]
        for ws in workspaces
    ]
    one, two = Worker(state.db, state.settings), Worker(state.db, state.settings)
    claimed = await asyncio.gather(one.claim(), two.claim(), one.claim(), two.claim())
    assert sum(claimed) == 3
    await asyncio.gather(one.stop(30), two.stop(30))
    for run_id in queued:
        run = (await api.get(f"/api/v2/calculation-runs/{run_id}")).json()["data"]
        assert run["status"] == "completed"
    events = (await api.get("/api/v2/events?limit=200")).json()["data"]
    completed = [e["subject_id"] for e in events if e["type"] == "calculation.completed"]
    assert sorted(completed) == sorted(queued)
