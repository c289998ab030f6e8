"""Idempotency-Key (DESIGN.md §14): one change per key, the stored answer replayed, refusals."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import func, select

from evidence_gateway import checkpoints
from evidence_gateway.models import CalculationRun, ImportBatch, Shipment, Workspace
from tests.conftest import Api, create_workspace, gql_code
from tests.gates import Gate
from tests.test_packs import ROWS


def db_of(api: Api) -> Any:
    return api.http._transport.app.state.db  # type: ignore[attr-defined]


async def count(api: Api, model: Any, *where: Any) -> int:
    async with db_of(api).read() as session:
        return int((await session.execute(select(func.count()).select_from(model).where(*where))).scalar_one())


def keyed(key: str) -> dict[str, str]:
    return {"Idempotency-Key": key}


async def test_same_key_twice_creates_one_workspace_and_replays_the_answer(api: Api) -> None:
    body = {"name": "Retried"}
    first = await api.post("/api/v2/workspaces", body, headers=keyed("create-1"))
    again = await api.post("/api/v2/workspaces", body, headers=keyed("create-1"))
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    assert again.content == first.content
    assert again.headers["Location"] == first.headers["Location"]
    assert await count(api, Workspace) == 1


async def test_same_key_other_body_is_refused_with_422(api: Api) -> None:
    assert (await api.post("/api/v2/workspaces", {"name": "A"}, headers=keyed("k"))).status_code == 201
    resp = await api.post("/api/v2/workspaces", {"name": "B"}, headers=keyed("k"))
    assert resp.status_code == 422
    assert resp.json()["details"]["code"] == "idempotency_key_reused"
    assert await count(api, Workspace) == 1


async def test_same_key_on_another_path_is_another_request(api: Api) -> None:
    ws = await create_workspace(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {"name": "x"}, headers=keyed("k2"))
    assert resp.status_code == 409  # no data: refused, so the key is free again
    again = await api.post("/api/v2/workspaces", {"name": "x"}, headers=keyed("k2"))
    assert again.status_code == 201


async def test_keys_are_scoped_to_the_organisation(api: Api, api_b: Api) -> None:
    a = await api.post("/api/v2/workspaces", {"name": "Same"}, headers=keyed("shared"))
    b = await api_b.post("/api/v2/workspaces", {"name": "Same"}, headers=keyed("shared"))
    assert a.status_code == b.status_code == 201
    assert "Idempotent-Replayed" not in b.headers
    assert a.json()["data"]["id"] != b.json()["data"]["id"]


@pytest.mark.parametrize("bad", ["", "x" * 256, "tab\tkey", "del\x7fkey"])
async def test_malformed_key_is_400(api: Api, bad: str) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": "A"}, headers={"Idempotency-Key": bad})
    assert resp.status_code == 400
    assert resp.json()["details"]["header"] == "Idempotency-Key"
    assert await count(api, Workspace) == 0


async def test_a_refused_request_frees_its_key(api: Api) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": ""}, headers=keyed("fix-me"))
    assert resp.status_code == 422
    fixed = await api.post("/api/v2/workspaces", {"name": ""}, headers=keyed("fix-me"))
    assert fixed.status_code == 422 and "Idempotent-Replayed" not in fixed.headers


async def test_retried_50k_row_import_stores_one_batch(api: Api) -> None:
    ws = await create_workspace(api)
    rows = [{**ROWS[i % 3], "external_id": f"R{i}"} for i in range(50_000)]
    body = {"source_row_count": len(rows), "source_filename": "big.csv", "shipments": rows}
    path = f"/api/v2/workspaces/{ws['id']}/imports"
    first = await api.post(path, body, headers=keyed("import-q1"))
    retry = await api.post(path, body, headers=keyed("import-q1"))
    assert first.status_code == retry.status_code == 201
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert retry.json() == first.json()
    assert await count(api, ImportBatch) == 1
    assert await count(api, Shipment) == 50_000
    calc = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")
    assert calc.json()["data"]["calculation_run"]["shipment_count"] == 50_000


async def test_twin_requests_with_one_key_make_exactly_one_change(api: Api, gate: Callable[..., Gate]) -> None:
    ws = await create_workspace(api)
    body = {"source_row_count": 3, "shipments": ROWS[:3]}
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    held = gate(checkpoints.CALCULATION_STARTED)
    path = f"/api/v2/workspaces/{ws['id']}/calculate"
    first = asyncio.create_task(api.post(path, headers=keyed("calc-1")))
    await held.wait_reached()
    twin = await api.post(path, headers=keyed("calc-1"))
    assert twin.status_code == 409
    assert twin.json()["details"]["code"] == "idempotency_key_in_use"
    held.open()
    done = await first
    assert done.status_code == 200
    replay = await api.post(path, headers=keyed("calc-1"))
    assert replay.status_code == 200 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.content == done.content
    assert await count(api, CalculationRun) == 1


async def test_concurrent_twins_without_a_barrier_still_change_once(api: Api) -> None:
    results = await asyncio.gather(
        *(api.post("/api/v2/workspaces", {"name": "Race"}, headers=keyed("race")) for _ in range(6))
    )
    statuses = sorted(r.status_code for r in results)
    assert set(statuses) <= {201, 409}
    assert await count(api, Workspace) == 1
    ids = {r.json()["data"]["id"] for r in results if r.status_code == 201}
    assert len(ids) == 1


# ---- GraphQL ------------------------------------------------------------------------------------

CREATE = "mutation($n: String!) { createWorkspace(input: {name: $n}) { id name } }"


async def gql_keyed(api: Api, query: str, variables: dict[str, Any], key: str) -> Any:
    return await api.http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {api.key}", "Idempotency-Key": key},
    )


async def test_graphql_single_mutation_honours_the_key(api: Api) -> None:
    first = await gql_keyed(api, CREATE, {"n": "G"}, "g-1")
    again = await gql_keyed(api, CREATE, {"n": "G"}, "g-1")
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert await count(api, Workspace) == 1
    other = await gql_keyed(api, CREATE, {"n": "H"}, "g-1")
    assert gql_code(other.json()) == "BAD_USER_INPUT"
    assert other.status_code == 422


async def test_graphql_key_with_two_mutation_fields_is_refused(api: Api) -> None:
    doc = 'mutation { a: createWorkspace(input: {name: "a"}) { id } b: createWorkspace(input: {name: "b"}) { id } }'
    resp = await gql_keyed(api, doc, {}, "g-2")
    assert resp.status_code == 400
    assert gql_code(resp.json()) == "BAD_USER_INPUT"
    assert await count(api, Workspace) == 0


async def test_graphql_failed_mutation_frees_the_key(api: Api) -> None:
    bad = await gql_keyed(api, CREATE, {"n": ""}, "g-3")
    assert gql_code(bad.json()) == "BAD_USER_INPUT"
    good = await gql_keyed(api, CREATE, {"n": "ok"}, "g-3")
    assert good.json()["data"]["createWorkspace"]["name"] == "ok"
