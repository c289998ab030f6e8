"""The sweeper (docs/write-path.md, "Sweeper"): expired work is failed in lease-expiry order,
in turns across organisations, and a row whose event cannot be built is failed all the same.

The sweep runs in-process on the test's database (``Worker.sweep``), so a pass is one call:
nothing waits for the lease period. Rows stand for work whose node died: ``running``, a lease
owner, a lease long expired.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import String, cast, select, type_coerce, update
from sqlalchemy.types import JSON
from sqlmodel import col

from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import CalculationRun, DataQualityAssessment, ShipmentEmission
from evidence_gateway.settings import Settings
from evidence_gateway.worker import Worker
from tests.conftest import Api, create_workspace
from tests.test_long_work import ASYNC, app_state
from tests.test_write_concurrency import imported


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # The queue is driven by the test (Worker.claim), so nothing else takes the queued run.
    return settings.model_copy(update={"background_work": False})


async def org_of(api: Api) -> tuple[uuid.UUID, uuid.UUID]:
    """The caller's organisation and a workspace of it, to hang runs on."""
    ws = await create_workspace(api, name="holder")
    return uuid.UUID(ws["org_id"]), uuid.UUID(ws["id"])


async def dead_runs(api: Api, expiries: list[datetime]) -> list[uuid.UUID]:
    """Runs of the caller's organisation whose node died, one per lease expiry given."""
    org_id, ws_id = await org_of(api)
    runs = [
        CalculationRun(
            workspace_id=ws_id,
            org_id=org_id,
            status="running",
            assumptions_snapshot_json={},
            lease_owner="dead-node",
            lease_expires_at=expires,
            created_at=expires - timedelta(minutes=1),
        )
        for expires in expiries
    ]
    async with app_state(api).db.write() as session:
        session.add_all(runs)
    return [r.id for r in runs]


async def statuses(api: Api, ids: list[uuid.UUID]) -> dict[uuid.UUID, str]:
    """Read from the table: a run stored with a value that cannot be written as JSON cannot be
    read over the API, which is what the sweeper must cope with."""
    async with app_state(api).db.read() as session:
        rows = (await session.execute(select(col(CalculationRun.id), col(CalculationRun.status)))).all()
    return {row[0]: row[1] for row in rows if row[0] in ids}


async def failed_events(api: Api) -> list[dict[str, Any]]:
    events = (await api.get("/api/v2/events?limit=200")).json()["data"]
    return [e for e in events if e["type"] == "calculation.failed"]


async def test_one_organisations_backlog_does_not_starve_another(api: Api, api_b: Api) -> None:
    now = utcnow()
    # Organisation A: six dead runs, all expired before B's one.
    a_runs = await dead_runs(api, [now - timedelta(minutes=60 - i) for i in range(6)])
    (b_run,) = await dead_runs(api_b, [now - timedelta(minutes=1)])
    worker = Worker(app_state(api).db, app_state(api).settings)

    # A pass of three: B's run, and A's two longest expired (a plain expiry order would take A's three).
    assert await worker.sweep(batch=3) == 3
    after_one = await statuses(api, [*a_runs, b_run])
    assert after_one[b_run] == "failed"
    assert [after_one[r] for r in a_runs] == ["failed", "failed", "running", "running", "running", "running"]
    (b_event,) = await failed_events(api_b)
    assert b_event["subject_id"] == str(b_run) and b_event["data"]["reason"] == "interrupted"

    # Later passes take the rest in expiry order, then find nothing.
    assert await worker.sweep(batch=3) == 3
    assert [s for r, s in (await statuses(api, a_runs)).items()].count("running") == 1
    assert await worker.sweep(batch=3) == 1
    assert set((await statuses(api, a_runs)).values()) == {"failed"}
    assert await worker.sweep(batch=3) == 0
    assert sorted(e["subject_id"] for e in await failed_events(api)) == sorted(map(str, a_runs))


# A 30-digit integer, as JSON text: today's JSON writer refuses it (as the input rule does), so
# such rows of an older release are written here as the text they hold.
LONG_INTEGER = '{"x": 100000000000000000000000000000}'


def as_stored(db: Any, text: str) -> Any:
    return type_coerce(text, String) if db.is_sqlite else cast(type_coerce(text, String), JSON)


async def test_a_run_whose_event_cannot_be_built_is_failed(api: Api, api_b: Api) -> None:
    """Rows stored before the input rule (tests/test_json_values.py): a 30-digit integer, which
    orjson cannot write (the event is left out), and a 5,000-digit one, which cannot even be
    read (the sweeper falls back to a plain update). Neither blocks another organisation."""
    now = utcnow()
    db = app_state(api).db
    unwritable, unreadable = await dead_runs(api, [now - timedelta(minutes=10), now - timedelta(minutes=9)])
    (healthy,) = await dead_runs(api_b, [now - timedelta(minutes=8)])
    huge = '{"x": 1' + "0" * 5_000 + "}"
    async with db.write() as session:
        await session.execute(
            update(CalculationRun)
            .where(col(CalculationRun.id) == unwritable)
            .values(assumptions_snapshot_json=as_stored(db, LONG_INTEGER))
        )
        await session.execute(
            update(CalculationRun)
            .where(col(CalculationRun.id) == unreadable)
            .values(assumptions_snapshot_json=as_stored(db, huge))
        )
    worker = Worker(db, app_state(api).settings)
    assert await worker.sweep() == 3
    assert await statuses(api, [unwritable, unreadable, healthy]) == {
        unwritable: "failed",
        unreadable: "failed",
        healthy: "failed",
    }
    async with db.read() as session:
        messages = (
            await session.execute(
                select(col(CalculationRun.error_message)).where(col(CalculationRun.id).in_([unwritable, unreadable]))
            )
        ).scalars()
        assert all(m.startswith("interrupted") for m in messages)
    # No event could carry them; B's run has its own. And nothing is retried.
    assert await failed_events(api) == []
    assert len(await failed_events(api_b)) == 1
    assert await worker.sweep() == 0


async def test_a_calculation_that_cannot_be_written_fails_cleanly(api: Api) -> None:
    """Defence behind the input rule: a queued run holding such a value is failed by the node
    that computes it (not left ``running``), with no emissions, assessment or workspace change."""
    ws = await imported(api)
    db = app_state(api).db
    before = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    queued = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", headers=ASYNC)
    assert queued.status_code == 202, queued.text
    run_id = uuid.UUID(queued.json()["data"]["id"])
    async with db.write() as session:
        await session.execute(
            update(CalculationRun)
            .where(col(CalculationRun.id) == run_id)
            .values(assumptions_snapshot_json=as_stored(db, LONG_INTEGER))
        )
    worker = Worker(db, app_state(api).settings)
    assert await worker.claim() == 1
    await worker.stop(60)  # waits for the claimed run to end
    assert (await statuses(api, [run_id]))[run_id] == "failed"
    async with db.read() as session:
        assert (
            await session.execute(select(ShipmentEmission).where(col(ShipmentEmission.calculation_run_id) == run_id))
        ).first() is None
        assert (
            await session.execute(
                select(DataQualityAssessment).where(col(DataQualityAssessment.calculation_run_id) == run_id)
            )
        ).first() is None
    detail = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    assert (detail["status"], detail["latest_calculation_run_id"]) == (before["status"], None)
    assert detail["updated_at"] == before["updated_at"]
    assert await Worker(db, app_state(api).settings).sweep() == 0
