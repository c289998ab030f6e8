"""Numbers stay right under races (DESIGN.md §14): data_version compare-and-set for runs,
packs only from the latest run, ETag / If-Match. Interleavings are fixed by barriers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

from evidence_gateway.core import checkpoints
from tests.conftest import Api, create_workspace, error_body
from tests.gates import Gate
from tests.test_packs import ROWS, calculated_workspace


async def imported(api: Api, rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    await add_import(api, ws["id"], rows or ROWS)
    return ws


async def add_import(api: Api, ws_id: str, rows: list[dict[str, Any]], **headers: str) -> Any:
    body = {"source_row_count": len(rows), "shipments": rows}
    return await api.post(f"/api/v2/workspaces/{ws_id}/imports", body, headers=headers)


async def workspace(api: Api, ws_id: str) -> dict[str, Any]:
    data: dict[str, Any] = (await api.get(f"/api/v2/workspaces/{ws_id}")).json()["data"]
    return data


async def test_import_during_a_calculation_supersedes_the_run(api: Api, gate: Callable[..., Gate]) -> None:
    ws = await imported(api)
    held = gate(checkpoints.CALCULATION_COMPUTED)
    calc = asyncio.create_task(api.post(f"/api/v2/workspaces/{ws['id']}/calculate"))
    await held.wait_reached()
    assert (await add_import(api, ws["id"], ROWS[:2])).status_code == 201
    held.open()
    resp = await calc
    assert resp.status_code == 200, resp.text
    run = resp.json()["data"]["calculation_run"]
    assert run["status"] == "completed" and run["superseded"] is True and run["data_version"] == 1
    current = await workspace(api, ws["id"])
    assert current["status"] == "data_imported" and current["data_version"] == 2
    assert current["latest_calculation_run_id"] is None
    # A pack needs the latest run of the current data.
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/packs")).status_code == 409
    # The superseded run stays on record, and a new run counts every row.
    fresh = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")).json()["data"]["calculation_run"]
    assert fresh["superseded"] is False and fresh["shipment_count"] == 3 + 2
    assert (await workspace(api, ws["id"]))["latest_calculation_run_id"] == fresh["id"]


async def test_an_older_run_finishing_last_does_not_become_latest(api: Api, gate: Callable[..., Gate]) -> None:
    ws = await imported(api)
    held = gate(checkpoints.CALCULATION_COMPUTED, times=1)
    older = asyncio.create_task(api.post(f"/api/v2/workspaces/{ws['id']}/calculate"))
    await held.wait_reached()
    newer = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")
    newer_run = newer.json()["data"]["calculation_run"]
    assert newer_run["superseded"] is False
    held.open()
    older_run = (await older).json()["data"]["calculation_run"]
    assert older_run["status"] == "completed" and older_run["superseded"] is True
    current = await workspace(api, ws["id"])
    assert current["latest_calculation_run_id"] == newer_run["id"]
    assert current["status"] == "calculated"


async def test_import_during_pack_generation_keeps_the_workspace_honest(api: Api, gate: Callable[..., Gate]) -> None:
    ws = await calculated_workspace(api)
    held = gate(checkpoints.PACK_ALLOCATED)
    pack_call = asyncio.create_task(api.post(f"/api/v2/workspaces/{ws['id']}/packs"))
    await held.wait_reached()
    assert (await add_import(api, ws["id"], ROWS[:1])).status_code == 201
    held.open()
    resp = await pack_call
    assert resp.status_code == 201, resp.text
    pack = resp.json()["data"]
    assert pack["status"] == "generated" and pack["pack_hash"]
    current = await workspace(api, ws["id"])
    # The pack shows the run it was built from; the workspace says its data moved on.
    assert current["status"] == "data_imported"
    assert current["latest_report_pack_id"] is None


async def test_concurrent_imports_raise_data_version_once_each(api: Api) -> None:
    ws = await imported(api)
    results = await asyncio.gather(*(add_import(api, ws["id"], ROWS[:1]) for _ in range(5)))
    assert [r.status_code for r in results] == [201] * 5
    assert (await workspace(api, ws["id"]))["data_version"] == 6


async def test_workspace_etag_and_if_match(api: Api) -> None:
    ws = await imported(api)
    got = await api.get(f"/api/v2/workspaces/{ws['id']}")
    tag = got.headers["ETag"]
    assert tag.startswith('"') and tag.endswith('"')
    stale = '"0"'
    resp = await add_import(api, ws["id"], ROWS[:1], **{"If-Match": stale})
    assert resp.status_code == 412
    assert error_body(resp)["details"] == {"code": "precondition_failed", "resource": "workspace", "etag": tag}
    assert (await workspace(api, ws["id"]))["data_version"] == 1  # nothing written
    ok = await add_import(api, ws["id"], ROWS[:1], **{"If-Match": tag})
    assert ok.status_code == 201
    newer = (await api.get(f"/api/v2/workspaces/{ws['id']}")).headers["ETag"]
    assert newer != tag
    calc = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", headers={"If-Match": tag})
    assert calc.status_code == 412
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", headers={"If-Match": "*"})).status_code == 200


async def test_pack_etag_guards_approvals(api: Api) -> None:
    ws = await calculated_workspace(api)
    created = await api.post(f"/api/v2/workspaces/{ws['id']}/packs")
    pack_id = created.json()["data"]["id"]
    tag = (await api.get(f"/api/v2/packs/{pack_id}")).headers["ETag"]
    assert created.headers["ETag"] == tag
    first = await api.post(
        f"/api/v2/packs/{pack_id}/approvals", {"action_type": "requested"}, headers={"If-Match": tag}
    )
    assert first.status_code == 201
    # A second reviewer acting on the version they saw is told it moved on.
    late = await api.post(f"/api/v2/packs/{pack_id}/approvals", {"action_type": "approved"}, headers={"If-Match": tag})
    assert late.status_code == 412
    detail = (await api.get(f"/api/v2/packs/{pack_id}")).json()["data"]
    assert detail["status"] == "in_review"


async def test_created_resources_carry_location(api: Api) -> None:
    ws_resp = await api.post("/api/v2/workspaces", {"name": "Located"})
    ws_id = ws_resp.json()["data"]["id"]
    assert ws_resp.headers["Location"].endswith(f"/api/v2/workspaces/{ws_id}")
    imp = await add_import(api, ws_id, ROWS)
    batch_id = imp.json()["data"]["id"]
    assert imp.headers["Location"].endswith(f"/api/v2/imports/{batch_id}")
    assert (await api.get(f"/api/v2/imports/{batch_id}")).json()["data"]["id"] == batch_id
    assert (await api.post(f"/api/v2/workspaces/{ws_id}/calculate")).status_code == 200
    pack = await api.post(f"/api/v2/workspaces/{ws_id}/packs")
    pack_id = pack.json()["data"]["id"]
    assert pack.headers["Location"].endswith(f"/api/v2/packs/{pack_id}")
    approval = await api.post(f"/api/v2/packs/{pack_id}/approvals", {"action_type": "requested"})
    assert approval.status_code == 201
    action = (await api.get(approval.headers["Location"])).json()["data"]
    assert action["report_pack_id"] == pack_id and action["status_after"] == "in_review"
    item = await api.post(
        "/api/v2/evidence-items",
        {"evidence_type": "fuel_receipt", "title": "r", "file_name": "r.pdf", "file_url": "https://x.example/r.pdf"},
    )
    assert item.headers["Location"].endswith(f"/api/v2/evidence-items/{item.json()['data']['id']}")


async def test_other_organisation_cannot_read_runs_imports_approvals(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api)
    detail = await workspace(api, ws["id"])
    run_id = detail["latest_calculation_run_id"]
    assert (await api.get(f"/api/v2/calculation-runs/{run_id}")).status_code == 200
    assert (await api_b.get(f"/api/v2/calculation-runs/{run_id}")).status_code == 404
    batch = (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1})).json()["data"]
    assert (await api_b.get(f"/api/v2/imports/{batch['id']}")).status_code == 404


@pytest.mark.parametrize("idempotent", [True, False], ids=["idempotency-key", "no-key"])
async def test_a_change_whose_events_fail_is_not_committed(
    api: Api, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, idempotent: bool
) -> None:
    """The change, its events and its idempotent answer commit together or not at all — also when
    SQLite's event insert is queued behind the commit, and when PostgreSQL writes the new row and
    its events as one statement (in the transaction, or alone in autocommit without a key)."""
    from evidence_gateway.store import event_log as events

    monkeypatch.setattr(events, "_SQLITE_APPEND", "INSERT INTO no_such_table VALUES (?)")
    monkeypatch.setattr(events, "_POSTGRES_COUNTER", " broken AS (SELECT 1) SELECT * FROM no_such_table")
    monkeypatch.setattr(events, "_POSTGRES_APPENDS", {})
    headers = {"Idempotency-Key": "atomic-1"} if idempotent else {}
    with caplog.at_level(logging.ERROR, logger="evidence_gateway.errors"):
        failed = await api.post("/api/v2/workspaces", {"name": "Never"}, headers=headers)
    assert failed.status_code == 500 and error_body(failed)["details"] == {"code": "internal_error"}
    assert "no_such_table" in caplog.text  # the event append failed, and was logged with the request
    monkeypatch.undo()
    listed = (await api.get("/api/v2/workspaces")).json()
    assert listed["pagination"]["total"] == 0
    assert (await api.get("/api/v2/events")).json()["data"] == []
    # The key was not recorded as completed: the retry runs, and creates exactly one.
    retry = await api.post("/api/v2/workspaces", {"name": "Never"}, headers=headers)
    assert retry.status_code == 201 and "Idempotent-Replayed" not in retry.headers
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 1
