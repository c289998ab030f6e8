"""The unfiltered lists' ``pagination.total`` is the organisation's count the write path keeps
(store/list_counts.py), not a COUNT: it must stay exact when creates race, when a create rolls
back, when rows are deleted, and per organisation. Each total is checked against the same list
filtered to every row, which still counts them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evidence_gateway.store import event_log
from tests.conftest import Api, create_workspace
from tests.test_packs import calculated_workspace, generate

EVERY_ROW = "filter[created_at][gte]=2000-01-01T00:00:00Z"


async def totals(api: Api, path: str, every_row: str = EVERY_ROW) -> tuple[int, int]:
    """(the unfiltered list's total, the total of the same list filtered to every row)."""
    plain = await api.get(f"{path}?per_page=1")
    counted = await api.get(f"{path}?per_page=1&{every_row}")
    assert plain.status_code == counted.status_code == 200, (plain.text, counted.text)
    return plain.json()["pagination"]["total"], counted.json()["pagination"]["total"]


async def test_racing_creates_are_each_counted_once_in_their_own_organisation(api: Api, api_b: Api) -> None:
    assert await totals(api, "/api/v2/workspaces") == (0, 0)
    ready = asyncio.Barrier(30)

    async def create(who: Api, i: int) -> None:
        await ready.wait()  # every create in flight at once
        await create_workspace(who, name=f"race {i}")

    await asyncio.gather(*(create(api if i % 5 else api_b, i) for i in range(30)))
    assert await totals(api, "/api/v2/workspaces") == (24, 24)
    assert await totals(api_b, "/api/v2/workspaces") == (6, 6)
    # A page past the end has no row to carry the total: the count is read on its own.
    past = (await api.get("/api/v2/workspaces?page=99&per_page=20")).json()
    assert past["data"] == [] and past["pagination"]["total"] == 24


def _fail_the_event_append(monkeypatch: pytest.MonkeyPatch) -> None:
    """The change's last statement fails after its row and its count were written."""
    monkeypatch.setattr(event_log, "_SQLITE_APPEND", event_log._SQLITE_APPEND.replace("INTO event ", "INTO no_event "))
    # PostgreSQL: a cast that fails on each event row, once the row and count CTEs have run.
    failing = event_log._POSTGRES_COUNTER.replace("e.type, $3", "CAST(e.type AS integer)::text, $3")
    assert failing != event_log._POSTGRES_COUNTER
    monkeypatch.setattr(event_log, "_POSTGRES_COUNTER", failing)
    monkeypatch.setattr(event_log, "_POSTGRES_APPENDS", {})


async def test_a_create_that_rolls_back_is_not_counted(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(2):
        await create_workspace(api, name=f"kept {i}")
    with monkeypatch.context() as patched:
        _fail_the_event_append(patched)
        failed = await api.post("/api/v2/workspaces", {"name": "rolled back"})
        assert failed.status_code == 500, failed.text
        evidence = await api.post("/api/v2/evidence-items", _evidence("rolled back"))
        assert evidence.status_code == 500, evidence.text
    assert await totals(api, "/api/v2/workspaces") == (2, 2)
    assert await totals(api, "/api/v2/evidence-items", _EVIDENCE_EVERY_ROW) == (0, 0)
    await create_workspace(api, name="after")
    assert await totals(api, "/api/v2/workspaces") == (3, 3)


def _evidence(title: str) -> dict[str, Any]:
    return {
        "evidence_type": "fuel_receipt",
        "title": title,
        "file_name": "receipt.pdf",
        "file_url": "https://files.example.com/receipts/r.pdf",
    }


_EVIDENCE_EVERY_ROW = "filter[uploaded_at][gte]=2000-01-01T00:00:00Z"


async def test_racing_evidence_items_are_counted(api: Api) -> None:
    made = await asyncio.gather(*(api.post("/api/v2/evidence-items", _evidence(f"r{i}")) for i in range(12)))
    assert [r.status_code for r in made] == [201] * 12
    assert await totals(api, "/api/v2/evidence-items", _EVIDENCE_EVERY_ROW) == (12, 12)


async def test_runs_and_packs_racing_for_a_version_are_counted(api: Api) -> None:
    """A pack's allocation flushes through the ORM and retries on the version's unique constraint:
    the rolled-back attempt is not counted, the retried one is."""
    ws = await calculated_workspace(api)
    answers = await asyncio.gather(generate(api, ws["id"]), generate(api, ws["id"]))
    assert [a.status_code for a in answers] == [201, 201], [a.text for a in answers]
    assert await totals(api, "/api/v2/packs") == (2, 2)
    assert await totals(api, "/api/v2/calculation-runs") == (1, 1)


async def test_deleted_webhook_endpoints_leave_the_total(api: Api) -> None:
    made = [await api.post("/api/v2/webhook-endpoints", {"url": f"http://127.0.0.1:9/hook/{i}"}) for i in range(3)]
    assert [r.status_code for r in made] == [201] * 3, [r.text for r in made]
    assert (await api.delete(f"/api/v2/webhook-endpoints/{made[0].json()['data']['id']}")).status_code == 204
    listed = (await api.get("/api/v2/webhook-endpoints?per_page=100")).json()
    assert listed["pagination"]["total"] == len(listed["data"]) == 2
