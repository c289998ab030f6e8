"""Workspaces over REST: the contract's envelopes, pagination, validation and isolation."""

from __future__ import annotations

import uuid

import pytest

from tests.conftest import Api, create_workspace

WORKSPACE_FIELDS = {
    "id", "org_id", "name", "external_reference", "reporting_period_start", "reporting_period_end",
    "status", "default_methodology_profile_id", "latest_calculation_run_id", "latest_report_pack_id",
    "archived_at", "created_at", "updated_at",
}  # fmt: skip


async def test_create_returns_draft_workspace_with_every_field(api: Api) -> None:
    resp = await api.post(
        "/api/v2/workspaces",
        {"name": "EU lanes", "external_reference": "ERP-7", "reporting_period_start": "2025-01-01",
         "reporting_period_end": "2025-12-31"},
    )  # fmt: skip
    assert resp.status_code == 201
    data = resp.json()["data"]
    assert set(data) >= WORKSPACE_FIELDS
    assert data["status"] == "draft"
    assert data["name"] == "EU lanes"
    assert data["reporting_period_start"] == "2025-01-01"
    assert data["latest_calculation_run_id"] is None
    assert data["created_at"].endswith("Z")
    uuid.UUID(data["id"])
    uuid.UUID(data["org_id"])


async def test_detail_carries_latest_relations_as_null_before_they_exist(api: Api) -> None:
    ws = await create_workspace(api)
    resp = await api.get(f"/api/v2/workspaces/{ws['id']}")
    assert resp.status_code == 200
    data = resp.json()["data"]
    assert data["id"] == ws["id"]
    assert data["latest_calculation_run"] is None
    assert data["latest_pack"] is None
    assert data["latest_quality_assessment"] is None


async def test_list_is_newest_first_and_paginated(api: Api) -> None:
    names = [f"ws-{i}" for i in range(5)]
    for name in names:
        await create_workspace(api, name=name)
    resp = await api.get("/api/v2/workspaces", params={"page": 1, "per_page": 2})
    body = resp.json()
    assert resp.status_code == 200
    assert body["pagination"] == {"page": 1, "per_page": 2, "total": 5}
    assert [w["name"] for w in body["data"]] == ["ws-4", "ws-3"]
    last = (await api.get("/api/v2/workspaces", params={"page": 3, "per_page": 2})).json()
    assert [w["name"] for w in last["data"]] == ["ws-0"]
    beyond = (await api.get("/api/v2/workspaces", params={"page": 4, "per_page": 2})).json()
    assert beyond["data"] == [] and beyond["pagination"]["total"] == 5


async def test_list_defaults_to_page_1_of_20(api: Api) -> None:
    body = (await api.get("/api/v2/workspaces")).json()
    assert body == {"data": [], "pagination": {"page": 1, "per_page": 20, "total": 0}}


@pytest.mark.parametrize(
    ("params", "field"),
    [({"page": 0}, "page"), ({"per_page": 101}, "per_page"), ({"per_page": 0}, "per_page"),
     ({"page": "abc"}, "page"), ({"page": "1.5"}, "page"), ({"page": -1}, "page")],
)  # fmt: skip
async def test_list_rejects_out_of_range_pages(api: Api, params: dict[str, object], field: str) -> None:
    resp = await api.get("/api/v2/workspaces", params=params)
    assert resp.status_code == 422
    body = resp.json()
    assert body["details"]["code"] == "invalid_input"
    assert field in body["details"]["fields"]


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"name"}),
        ({"name": ""}, {"name"}),
        ({"name": "   "}, {"name"}),
        ({"name": 42}, {"name"}),
        ({"name": "x" * 201}, {"name"}),
        ({"name": "x", "reporting_period_start": "2025-02-30"}, {"reporting_period_start"}),
        ({"name": "x", "reporting_period_start": "01/02/2025"}, {"reporting_period_start"}),
        ({"name": "x", "reporting_period_end": 20250101}, {"reporting_period_end"}),
        ({"name": "x", "default_methodology_profile_id": "nope"}, {"default_methodology_profile_id"}),
        (
            {"name": "x", "default_methodology_profile_id": "{12345678-1234-1234-1234-123456789abc}"},
            {"default_methodology_profile_id"},
        ),
        (
            {"name": "x", "default_methodology_profile_id": "12345678123412341234123456789abc"},
            {"default_methodology_profile_id"},
        ),
        ({"name": "x", "external_reference": ["a"]}, {"external_reference"}),
        ({"name": None, "reporting_period_start": "bad"}, {"name", "reporting_period_start"}),
    ],
)
async def test_create_rejects_invalid_fields_and_writes_nothing(
    api: Api, body: dict[str, object], fields: set[str]
) -> None:
    resp = await api.post("/api/v2/workspaces", body)
    assert resp.status_code == 422, resp.text
    err = resp.json()
    assert err["error"] == "invalid input"
    assert set(err["details"]["fields"]) == fields
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0


async def test_create_rejects_period_end_before_start(api: Api) -> None:
    resp = await api.post(
        "/api/v2/workspaces",
        {"name": "x", "reporting_period_start": "2025-06-01", "reporting_period_end": "2025-05-31"},
    )
    assert resp.status_code == 422
    assert "reporting_period_end must not be before" in str(resp.json()["details"]["fields"])


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'"text"', b"", b"null"])
async def test_malformed_or_non_object_body_is_400(api: Api, raw: bytes) -> None:
    resp = await api.http.post(
        "/api/v2/workspaces",
        content=raw,
        headers={"Authorization": f"Bearer {api.key}", "Content-Type": "application/json"},
    )
    assert resp.status_code == 400
    assert resp.json()["details"]["code"] == "bad_request"


async def test_body_over_one_mib_is_413(api: Api) -> None:
    resp = await api.post("/api/v2/workspaces", {"name": "x", "external_reference": "y" * (1024 * 1024)})
    assert resp.status_code == 413
    assert resp.json()["details"]["code"] == "payload_too_large"


async def test_unknown_and_malformed_ids_are_404(api: Api) -> None:
    for wid in (str(uuid.uuid4()), "not-a-uuid"):
        resp = await api.get(f"/api/v2/workspaces/{wid}")
        assert resp.status_code == 404
        assert resp.json()["error"] == "workspace not found"


async def test_other_organisation_sees_nothing(api: Api, api_b: Api) -> None:
    ws = await create_workspace(api)
    assert (await api_b.get(f"/api/v2/workspaces/{ws['id']}")).status_code == 404
    assert (await api_b.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0
    resp = await api_b.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1})
    assert resp.status_code == 404
    # and organisation A's workspace is untouched
    assert (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["status"] == "draft"


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/api/v2/nothing", 404), ("GET", "/nothing", 404), ("DELETE", "/api/v2/workspaces", 405),
     ("PUT", "/api/v2/workspaces/x", 405)],
)  # fmt: skip
async def test_unknown_routes_answer_json_errors(api: Api, method: str, path: str, status: int) -> None:
    resp = await api.http.request(method, path, headers={"Authorization": f"Bearer {api.key}"})
    assert resp.status_code == status
    assert resp.headers["content-type"].startswith("application/json")
    assert set(resp.json()) == {"error", "details"}


async def test_healthz(api: Api) -> None:
    resp = await api.http.get("/healthz")
    assert resp.status_code == 200
    assert resp.json() == {"status": "ok"}
