"""Legacy v1 reports: CLI import, /v1 routes with deprecation headers, and calculations from them."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest

from evidence_gateway.resolvers.legacy import import_legacy_reports
from tests.cli_inprocess import run_cli
from tests.conftest import Api, create_workspace, gql_answer

NO_LEGACY = "no compatible legacy report available"
LEGACY_FIELDS = {
    "id", "org_id", "title", "reporting_period_start", "reporting_period_end", "status", "total_co2e_kg",
    "shipment_count", "created_at", "updated_at", "successor",
}  # fmt: skip
SUCCESSOR_LINK = '<http://testserver/api/v2/workspaces>; rel="successor-version"'


def record(**over: Any) -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "title": "FY2025 freight emissions",
        "reporting_period_start": "2025-01-01",
        "reporting_period_end": "2025-12-31",
        "status": "final",
        "total_co2e_kg": 48210.5,
        "shipment_count": 312,
        **over,
    }


async def load(api: Api, org: str, records: list[dict[str, Any]]) -> list[uuid.UUID]:
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    return await import_legacy_reports(db, org, records)


def assert_deprecated(resp: Any) -> None:
    assert resp.headers["deprecation"] == "@1767225600"
    # The successor first; a list adds its paging links after it (one Link header, RFC 8288).
    assert resp.headers["link"].split(", ")[0] == SUCCESSOR_LINK


async def test_v1_list_and_detail_with_deprecation_headers(api: Api) -> None:
    rec = record()
    await load(api, "org-a", [rec, record(title="Older", reporting_period_start="2024-01-01",
                                          reporting_period_end="2024-12-31")])  # fmt: skip
    resp = await api.get("/api/v1/reports", params={"per_page": 1})
    assert resp.status_code == 200
    assert_deprecated(resp)
    assert "sunset" not in resp.headers
    body = resp.json()
    assert body["pagination"] == {"page": 1, "per_page": 1, "total": 2}
    assert len(body["data"]) == 1 and set(body["data"][0]) >= LEGACY_FIELDS
    detail = await api.get(f"/api/v1/reports/{rec['id']}")
    assert detail.status_code == 200
    assert_deprecated(detail)
    data = detail.json()["data"]
    assert data["id"] == rec["id"] and data["total_co2e_kg"] == 48210.5 and data["status"] == "final"
    assert data["reporting_period_start"] == "2025-01-01"
    assert data["successor"]["workspace_id"] is None


async def test_v1_errors_carry_the_headers_too(api: Api) -> None:
    for path in (f"/api/v1/reports/{uuid.uuid4()}", "/api/v1/reports/not-a-uuid"):
        resp = await api.get(path)
        assert resp.status_code == 404
        assert resp.json()["details"]["code"] == "not_found"
        assert_deprecated(resp)
    unauth = await api.get("/api/v1/reports", key=None)
    assert unauth.status_code == 401
    assert_deprecated(unauth)
    bad_page = await api.get("/api/v1/reports", params={"per_page": 500})
    assert bad_page.status_code == 422
    assert_deprecated(bad_page)


@pytest.mark.parametrize(("configured", "sent"), [
    ("2027-06-30", "Wed, 30 Jun 2027 00:00:00 GMT"),
    ("Wed, 30 Jun 2027 00:00:00 GMT", "Wed, 30 Jun 2027 00:00:00 GMT"),
])  # fmt: skip
async def test_sunset_header_when_configured(api: Api, configured: str, sent: str) -> None:
    api.http._transport.app.state.settings.legacy_sunset = configured  # type: ignore[attr-defined]
    resp = await api.get("/api/v1/reports")
    assert resp.headers["sunset"] == sent


async def test_other_organisation_cannot_see_legacy_reports(api: Api, api_b: Api) -> None:
    rec = record()
    await load(api, "org-a", [rec])
    listing = (await api_b.get("/api/v1/reports")).json()
    assert listing["data"] == [] and listing["pagination"]["total"] == 0
    resp = await api_b.get(f"/api/v1/reports/{rec['id']}")
    assert resp.status_code == 404
    assert_deprecated(resp)
    gql = await api_b.gql("query($id: UUID!) { legacyReport(id: $id) { id } }", {"id": rec["id"]})
    assert gql_answer(gql) == {"data": {"legacyReport": None}, "_status": 200}


async def test_calculation_from_a_legacy_report_links_the_successor(api: Api) -> None:
    rec = record()
    await load(api, "org-a", [rec])
    ws = await create_workspace(api, reporting_period_start="2025-04-01", reporting_period_end="2025-06-30")
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")  # found by period overlap
    assert resp.status_code == 200, resp.text
    run = resp.json()["data"]["calculation_run"]
    assert run["legacy_report_id"] == rec["id"]
    assert run["total_co2e_kg"] == 48210.5 and run["shipment_count"] == 312
    qa = resp.json()["data"]["quality_assessment"]
    assert "legacy_report_basis" in {r["id"] for r in qa["rules_triggered_json"]}
    assert "legacy report" in qa["summary_text"]
    detail = (await api.get(f"/api/v1/reports/{rec['id']}")).json()["data"]
    assert detail["successor"]["workspace_id"] == ws["id"]
    assert detail["successor"]["workspace_url"] == f"http://testserver/api/v2/workspaces/{ws['id']}"
    gql = await api.gql(
        "query($id: UUID!) { legacyReport(id: $id) { id successorWorkspaceId } "
        "legacyReports { items { id } pagination { total } } }",
        {"id": rec["id"]},
    )
    assert gql["data"]["legacyReport"]["successorWorkspaceId"] == ws["id"]
    assert gql["data"]["legacyReports"]["pagination"]["total"] == 1


async def test_explicit_legacy_report_is_stored_on_the_run(api: Api) -> None:
    rec = record()
    await load(api, "org-a", [rec])
    ws = await create_workspace(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {"legacy_report_id": rec["id"]})
    assert resp.status_code == 200
    assert resp.json()["data"]["calculation_run"]["legacy_report_id"] == rec["id"]


async def test_409_cases(api: Api, api_b: Api) -> None:
    mine, theirs = record(), record()
    await load(api, "org-a", [mine])
    await load(api_b, "org-b", [theirs])
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    cases: list[Any] = [
        {"legacy_report_id": str(uuid.uuid4())},  # unknown
        {"legacy_report_id": theirs["id"]},  # other organisation's
        {"legacy_report_id": mine["id"]},  # periods do not overlap
        None,  # no imports and nothing compatible
    ]
    for body in cases:
        resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", body)
        assert resp.status_code == 409, (body, resp.text)
        assert resp.json()["error"] == NO_LEGACY
        assert resp.json()["details"]["code"] == "conflict"
    detail = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    assert detail["status"] == "draft" and detail["latest_calculation_run"] is None


async def test_no_data_at_all_is_409(api: Api) -> None:
    ws = await create_workspace(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})
    assert resp.status_code == 409
    assert resp.json() == {"error": NO_LEGACY, "details": resp.json()["details"]}


# ---- CLI --------------------------------------------------------------------------------------


def stored(db: Path) -> list[tuple[str, str, float]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, title, total_co2e_kg FROM legacy_report ORDER BY title").fetchall()
    return [(str(uuid.UUID(r[0])), r[1], r[2]) for r in rows]


def test_cli_legacy_import_keeps_ids_and_reimport_updates(tmp_path: Path) -> None:
    db = tmp_path / "legacy.db"
    url = f"sqlite:///{db}"
    given = record(title="A")
    file = tmp_path / "reports.json"
    file.write_text(json.dumps([given, {"title": "B", "total_co2e_kg": 10}]))
    out = run_cli("legacy", "import", str(file), "--org", "acme", "--create-org", "--database-url", url)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 2 and lines[0] == given["id"]
    uuid.UUID(lines[1])
    file.write_text(json.dumps([dict(given, title="A (restated)", total_co2e_kg=1.5)]))
    again = run_cli("legacy", "import", str(file), "--org", "acme", "--database-url", url)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [given["id"]]
    rows = stored(db)
    assert len(rows) == 2
    assert (given["id"], "A (restated)", 1.5) in rows


def test_cli_bad_record_imports_nothing(tmp_path: Path) -> None:
    db = tmp_path / "legacy.db"
    url = f"sqlite:///{db}"
    bad_id = str(uuid.uuid4())
    file = tmp_path / "reports.json"
    file.write_text(json.dumps([record(title="ok"), record(id=bad_id, status="published", total_co2e_kg="12")]))
    out = run_cli("legacy", "import", str(file), "--org", "acme", "--create-org", "--database-url", url)
    assert out.returncode != 0
    assert out.stdout == ""
    assert "record 1" in out.stderr and bad_id in out.stderr and "status" in out.stderr
    assert stored(db) == []
    file.write_text("{not json")
    broken = run_cli("legacy", "import", str(file), "--org", "acme", "--database-url", url)
    assert broken.returncode != 0 and "cannot read" in broken.stderr
    file.write_text(json.dumps({"title": "not an array"}))
    not_array = run_cli("legacy", "import", str(file), "--org", "acme", "--database-url", url)
    assert not_array.returncode != 0 and "array" in not_array.stderr


def test_cli_text_the_database_cannot_store_imports_nothing(tmp_path: Path) -> None:
    db = tmp_path / "legacy.db"
    file = tmp_path / "reports.json"
    file.write_text(json.dumps([record(title="ok"), record(title="Q1\u0000 freight")]))
    out = run_cli("legacy", "import", str(file), "--org", "acme", "--create-org", "--database-url", f"sqlite:///{db}")
    assert out.returncode != 0
    assert "record 1" in out.stderr and "title" in out.stderr and "NUL" in out.stderr
    assert stored(db) == []


def test_cli_id_of_another_organisation_is_refused(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'legacy.db'}"
    file = tmp_path / "reports.json"
    rec = record()
    file.write_text(json.dumps([rec]))
    assert (
        run_cli("legacy", "import", str(file), "--org", "acme", "--create-org", "--database-url", url).returncode == 0
    )
    file.write_text(json.dumps([dict(rec, title="hijack"), record(title="innocent")]))
    out = run_cli("legacy", "import", str(file), "--org", "globex", "--create-org", "--database-url", url)
    assert out.returncode != 0
    assert rec["id"] in out.stderr and "another organisation" in out.stderr
    assert [r[1] for r in stored(tmp_path / "legacy.db")] == [rec["title"]]
