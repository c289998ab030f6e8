"""Pack generation and reading over REST and GraphQL: versions, hashes, failures, isolation."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import hashlib
import io
import json
import uuid
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select

from evidence_gateway.artifacts import SPECS
from evidence_gateway.models import ArtifactContent, ArtifactContentChunk, ArtifactType
from tests.conftest import Api, create_workspace, gql_answer, gql_code

PACK_FIELDS = {
    "id", "workspace_id", "org_id", "legacy_report_id", "version_number", "title", "audience_label", "status",
    "methodology_profile_id", "calculation_run_id", "data_quality_assessment_id", "export_template_id",
    "pack_hash", "rerun_hash", "summary_pdf_url", "shipment_csv_url", "shipment_xlsx_url", "machine_json_url",
    "methodology_statement_url", "evidence_register_url", "quality_report_url", "audit_trail_url",
    "created_at", "approved_at", "published_at",
}  # fmt: skip
ARTIFACT_FIELDS = {
    "id", "report_pack_id", "workspace_id", "artifact_type", "status", "file_url", "file_name", "content_type",
    "created_at", "generated_at", "signed_download_url",
}  # fmt: skip
ROWS: list[dict[str, Any]] = [
    {"external_id": "D", "mode": "road", "distance_km": 100, "mass_tonnes": 10},
    {
        "external_id": "S", "mode": "rail", "distance_km": 500, "mass_tonnes": 20,
        "carrier_intensity_g_per_tkm": 20, "carrier_intensity_basis": "wtw",
    },  # fmt: skip
    {"external_id": "P", "mode": "road", "distance_km": 300, "mass_tonnes": 8, "fuel_type": "diesel",
     "fuel_amount": 90, "vehicle_payload_tonnes": 24},
    {"external_id": "X", "mode": "air", "mass_tonnes": 1},
]  # fmt: skip


async def calculated_workspace(api: Api, rows: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31", **fields)
    shipments = ROWS if rows is None else rows
    body = {"source_row_count": len(shipments), "source_filename": "q1.csv", "shipments": shipments}
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")
    assert resp.status_code == 200, resp.text
    return ws


async def generate(api: Api, ws_id: str, body: Any = None) -> Any:
    return await api.post(f"/api/v2/workspaces/{ws_id}/packs", body)


async def generated(api: Api, ws_id: str) -> dict[str, Any]:
    resp = await generate(api, ws_id)
    assert resp.status_code == 201, resp.text
    return resp.json()


async def fetch(api: Api, url: str, **kw: Any) -> Any:
    return await api.http.get(url, **kw)


async def test_generation_needs_a_completed_calculation(api: Api) -> None:
    ws = await create_workspace(api)
    resp = await generate(api, ws["id"])
    assert resp.status_code == 409
    assert "calculat" in resp.json()["error"]
    assert resp.json()["details"]["reason"] == "no_completed_calculation"
    ws = await calculated_workspace(api)
    # New data after the calculation: the pack would not show it, so recalculate first.
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1})).status_code == 201
    resp = await generate(api, ws["id"])
    assert resp.status_code == 409
    assert resp.json()["details"]["reason"] == "calculation_outdated"
    detail = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    assert detail["latest_report_pack_id"] is None and detail["latest_pack"] is None


async def test_generate_pack_over_rest(api: Api) -> None:
    ws = await calculated_workspace(api)
    body = await generated(api, ws["id"])
    pack, meta = body["data"], body["meta"]
    assert set(pack) >= PACK_FIELDS
    assert pack["status"] == "generated" and pack["version_number"] == 1
    assert pack["workspace_id"] == ws["id"]
    assert len(pack["pack_hash"]) == 64
    detail = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    assert detail["status"] == "review_needed"
    assert detail["latest_report_pack_id"] == pack["id"]
    assert detail["latest_pack"]["id"] == pack["id"]
    assert detail["latest_pack"]["summary_pdf_url"] == pack["summary_pdf_url"]
    run = detail["latest_calculation_run"]
    assert pack["calculation_run_id"] == run["id"] == meta["calculation_run_id"]
    assert pack["rerun_hash"] == run["rerun_hash"] == meta["rerun_hash"]
    assert meta["artifact_count"] == 9  # the eight listed artifacts and the iLEAP file
    assert meta["superseded_pack_ids"] == [] and meta["supersedes_pack_id"] is None
    for kind in ArtifactType:
        assert pack[f"{kind.value}_url"].startswith("http://testserver/api/v2/artifacts/")


async def test_pack_detail_and_artifacts(api: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    resp = await api.get(f"/api/v2/packs/{pack['id']}")
    assert resp.status_code == 200
    detail = resp.json()["data"]
    assert set(detail) >= PACK_FIELDS | {"calculation_run", "quality_assessment", "artifacts"}
    assert detail["calculation_run"]["id"] == pack["calculation_run_id"]
    assert detail["calculation_run"]["status"] == "completed"
    assert detail["quality_assessment"]["id"] == pack["data_quality_assessment_id"]
    assert detail["quality_assessment"]["report_pack_id"] == pack["id"]
    # The contract's eight types, in pack_hash order; the iLEAP file is the pack's own link.
    contract_types = [t.value for t in ArtifactType if t is not ArtifactType.ileap_shipment_footprints]
    assert [a["artifact_type"] for a in detail["artifacts"]] == contract_types
    listed = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
    assert [a["artifact_type"] for a in listed] == contract_types
    ileap = await api.get(detail["ileap_shipment_footprints_url"])
    assert ileap.status_code == 200 and ileap.headers["content-type"] == "application/json"
    assert hashlib.sha256(ileap.content).hexdigest() == detail["ileap_shipment_footprints_sha256"]
    for artifact in listed:
        assert set(artifact) >= ARTIFACT_FIELDS
        assert artifact["status"] == "generated" and artifact["generated_at"]
        assert artifact["report_pack_id"] == pack["id"]
        assert artifact["file_url"] == pack[f"{artifact['artifact_type']}_url"]
        assert "?expires=" in artifact["signed_download_url"]
        assert artifact["file_name"].startswith("q1-freight-v1-")
        assert artifact["content_type"] == SPECS[ArtifactType(artifact["artifact_type"])].content_type


async def test_pack_hash_is_rederivable_and_stable_on_regeneration(api: Api) -> None:
    ws = await calculated_workspace(api)
    first = (await generated(api, ws["id"]))["data"]
    second_body = await generated(api, ws["id"])
    second = second_body["data"]
    assert second["version_number"] == 2
    assert second["pack_hash"] == first["pack_hash"]
    assert second_body["meta"]["superseded_pack_ids"] == [first["id"]]
    assert second_body["meta"]["supersedes_pack_id"] == first["id"]
    assert (await api.get(f"/api/v2/packs/{first['id']}")).json()["data"]["status"] == "archived"
    # An auditor re-derives pack_hash from the downloaded bytes alone (docs/packs.md): the eight
    # listed artifacts, then the iLEAP file of the pack's own link.
    artifacts = (await api.get(f"/api/v2/packs/{second['id']}/artifacts")).json()["data"]
    digests = []
    for artifact in artifacts:
        resp = await fetch(api, artifact["signed_download_url"])
        assert resp.status_code == 200
        digests.append(hashlib.sha256(resp.content).hexdigest())
        assert resp.headers["etag"] == f'"{digests[-1]}"' == f'"{artifact["content_sha256"]}"'
    ileap = await api.get(second["ileap_shipment_footprints_url"])
    assert hashlib.sha256(ileap.content).hexdigest() == second["ileap_shipment_footprints_sha256"]
    assert hashlib.sha256("".join(digests).encode()).hexdigest() != second["pack_hash"]
    digests.append(second["ileap_shipment_footprints_sha256"])
    assert hashlib.sha256("".join(digests).encode()).hexdigest() == second["pack_hash"]


async def test_new_inputs_change_the_hash_and_reviews_enter_the_next_audit_trail(api: Api) -> None:
    ws = await calculated_workspace(api)
    first = (await generated(api, ws["id"]))["data"]
    resp = await api.post(f"/api/v2/packs/{first['id']}/approvals", {"action_type": "requested", "comment": "pls"})
    assert resp.status_code == 201
    second = (await generated(api, ws["id"]))["data"]
    assert second["pack_hash"] != first["pack_hash"]
    artifacts = {
        a["artifact_type"]: a for a in (await api.get(f"/api/v2/packs/{second['id']}/artifacts")).json()["data"]
    }
    trail = (await fetch(api, artifacts["audit_trail"]["signed_download_url"])).text
    events = list(csv.DictReader(io.StringIO(trail)))
    names = [e["event"] for e in events]
    assert names[0] == "import_registered"
    assert "calculation_completed" in names
    assert "pack_generated" in names and "approval_requested" in names
    approval = next(e for e in events if e["event"] == "approval_requested")
    assert "generated -> in_review" in approval["description"] and "pls" in approval["description"]
    assert approval["actor_key_prefix"].startswith("evk_") and approval["actor_api_key_id"]
    # The pack under review is archived by the newer version, the review stays on record.
    assert (await api.get(f"/api/v2/packs/{first['id']}")).json()["data"]["status"] == "archived"


async def test_machine_json_matches_the_run(api: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    artifacts = {a["artifact_type"]: a for a in (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]}
    doc = json.loads((await fetch(api, artifacts["machine_json"]["signed_download_url"])).content)
    run = (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]["calculation_run"]
    assert doc["calculation_run"]["id"] == run["id"]
    # machine_json v2 (issue 12): computed figures are exact decimal strings.
    assert Decimal(doc["calculation_run"]["total_co2e_kg"]) == Decimal(repr(run["total_co2e_kg"]))
    assert [s["external_id"] for s in doc["shipments"]] == ["D", "S", "P", "X"]
    assert sum(Decimal(s["co2e_kg"] or 0) for s in doc["shipments"]) == Decimal(repr(run["total_co2e_kg"]))
    assert {s["data_tier"] for s in doc["shipments"]} == {"default", "secondary", "primary", None}
    rows = list(csv.DictReader(io.StringIO((await fetch(api, artifacts["shipment_csv"]["signed_download_url"])).text)))
    assert [r["external_id"] for r in rows] == ["D", "S", "P", "X"]


async def test_rows_of_several_imports_stream_in_import_order(api: Api) -> None:
    ws = await create_workspace(api)
    for batch in range(3):
        rows = [{"external_id": f"{batch}-{i}", "mode": "road", "distance_km": 10, "mass_tonnes": 1} for i in range(5)]
        resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 5, "shipments": rows})
        assert resp.status_code == 201
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")).status_code == 200
    pack = (await generated(api, ws["id"]))["data"]
    artifacts = {a["artifact_type"]: a for a in (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]}
    doc = json.loads((await fetch(api, artifacts["machine_json"]["signed_download_url"])).content)
    assert [s["external_id"] for s in doc["shipments"]] == [f"{b}-{i}" for b in range(3) for i in range(5)]


async def test_concurrent_generation_numbers_versions_without_gaps(api: Api) -> None:
    ws = await calculated_workspace(api)
    responses = await asyncio.gather(*(generate(api, ws["id"]) for _ in range(8)))
    assert [r.status_code for r in responses] == [201] * 8, [r.text for r in responses if r.status_code != 201]
    assert sorted(r.json()["data"]["version_number"] for r in responses) == list(range(1, 9))
    detail = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    latest = (await api.get(f"/api/v2/packs/{detail['latest_report_pack_id']}")).json()["data"]
    assert latest["version_number"] == 8 and latest["status"] == "generated"
    body = await api.gql(
        "query($id: UUID!) { workspace(id: $id) { packs { versionNumber status } } }", {"id": ws["id"]}
    )
    packs = body["data"]["workspace"]["packs"]
    assert [p["versionNumber"] for p in packs] == list(range(8, 0, -1))
    assert [p["status"] for p in packs] == ["GENERATED"] + ["ARCHIVED"] * 7


@pytest.mark.parametrize("kind", [ArtifactType.quality_report, ArtifactType.shipment_xlsx])
async def test_rendering_failure_leaves_the_pack_failed(
    api: Api, monkeypatch: pytest.MonkeyPatch, kind: ArtifactType
) -> None:
    ws = await calculated_workspace(api)
    good = (await generated(api, ws["id"]))["data"]

    def boom(_data: Any, rows: Any, _out: Any) -> None:
        next(iter(rows), None)  # a row renderer fails mid-stream; the others must not hang
        raise RuntimeError("renderer crashed")

    spec = SPECS[kind]
    monkeypatch.setitem(SPECS, kind, dataclasses.replace(spec, render=boom))
    resp = await generate(api, ws["id"])
    assert resp.status_code == 500
    assert resp.json()["details"]["code"] == "internal_error"
    failed_id = resp.json()["details"]["pack_id"]
    failed = (await api.get(f"/api/v2/packs/{failed_id}")).json()["data"]
    assert failed["status"] == "failed" and failed["version_number"] == 2
    assert {a["status"] for a in failed["artifacts"]} == {"failed"}
    assert all(a["signed_download_url"] is None for a in failed["artifacts"])
    assert failed["summary_pdf_url"] is None and failed["ileap_shipment_footprints_sha256"] is None
    # Nothing else moved: the good pack is still current, no failed bytes are kept.
    detail = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]
    assert detail["latest_report_pack_id"] == good["id"]
    assert (await api.get(f"/api/v2/packs/{good['id']}")).json()["data"]["status"] == "generated"
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    async with db.read() as session:
        whole = await session.execute(select(ArtifactContent.artifact_id))
        sliced = await session.execute(select(ArtifactContentChunk.artifact_id).distinct())
        stored = {str(i) for i in [*whole.scalars(), *sliced.scalars()]}
    good_artifacts = (await api.get(f"/api/v2/packs/{good['id']}/artifacts")).json()["data"]
    ileap_id = good["ileap_shipment_footprints_url"].split("/")[-2]  # …/artifacts/{id}/download
    assert stored == {*(a["id"] for a in good_artifacts), ileap_id}
    resp = await api.post(f"/api/v2/packs/{failed_id}/approvals", {"action_type": "requested"})
    assert resp.status_code == 409


async def test_legacy_report_reference_is_validated(api: Api) -> None:
    ws = await calculated_workspace(api)
    resp = await generate(api, ws["id"], {"legacy_report_id": str(uuid.uuid4())})
    assert resp.status_code == 422
    assert "legacy_report_id" in resp.json()["details"]["fields"]
    resp = await generate(api, ws["id"], {"legacy_report_id": "nope"})
    assert resp.status_code == 422
    assert (await generate(api, ws["id"], [])).status_code == 400
    assert (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["latest_report_pack_id"] is None


@pytest.mark.parametrize("bad_id", ["0b6e7a52-9d3c-4f1e-8a2b-5c6d7e8f9a0b", "not-a-uuid"])
async def test_unknown_pack_is_404(api: Api, bad_id: str) -> None:
    for path in (f"/api/v2/packs/{bad_id}", f"/api/v2/packs/{bad_id}/artifacts"):
        resp = await api.get(path)
        assert resp.status_code == 404 and resp.json()["details"]["code"] == "not_found"
    assert (await api.post(f"/api/v2/packs/{bad_id}/approvals", {"action_type": "requested"})).status_code == 404
    assert (await generate(api, bad_id)).status_code == 404


async def test_other_organisation_sees_nothing(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    artifacts = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
    assert (await api_b.get(f"/api/v2/packs/{pack['id']}")).status_code == 404
    assert (await api_b.get(f"/api/v2/packs/{pack['id']}/artifacts")).status_code == 404
    resp = await api_b.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "requested"})
    assert resp.status_code == 404
    assert (await generate(api_b, ws["id"])).status_code == 404
    for artifact in artifacts:
        assert (await api_b.get(artifact["file_url"])).status_code == 404
    body = await api_b.gql("query($id: UUID!) { pack(id: $id) { id } }", {"id": pack["id"]})
    assert gql_answer(body) == {"data": {"pack": None}, "_status": 200}
    body = await api_b.gql(
        "mutation($id: UUID!) { recordApproval(packId: $id, input: {actionType: REQUESTED}) { statusAfter } }",
        {"id": pack["id"]},
    )
    assert gql_code(body) == "NOT_FOUND"
    body = await api_b.gql("mutation($id: UUID!) { generatePack(workspaceId: $id) { pack { id } } }", {"id": ws["id"]})
    assert gql_code(body) == "NOT_FOUND"
    # Nothing changed for the owner.
    assert (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]["status"] == "generated"


PACK_QUERY = """
query($id: UUID!) {
  pack(id: $id) {
    id versionNumber status packHash summaryPdfUrl auditTrailUrl
    calculationRun { id status rerunHash }
    qualityAssessment { id coverageScore }
    artifacts { id artifactType status fileName contentType fileUrl signedDownloadUrl contentSha256 sizeBytes }
    approvals { actionType statusBefore statusAfter comment apiKeyId createdAt }
  }
}"""


async def test_graphql_generate_and_read(api: Api) -> None:
    ws = await calculated_workspace(api)
    body = await api.gql(
        "mutation($id: UUID!) { generatePack(workspaceId: $id, input: {}) {"
        " pack { id versionNumber status } calculationRunId artifactCount supersededPackIds } }",
        {"id": ws["id"]},
    )
    assert "errors" not in body, body
    result = body["data"]["generatePack"]
    assert result["pack"]["versionNumber"] == 1 and result["pack"]["status"] == "GENERATED"
    assert result["artifactCount"] == 9 and result["supersededPackIds"] == []
    pack_id = result["pack"]["id"]
    body = await api.gql(
        'mutation($id: UUID!) { recordApproval(packId: $id, input: {actionType: REQUESTED, comment: "go"}) {'
        " reportPackId workspaceId statusBefore statusAfter } }",
        {"id": pack_id},
    )
    assert body["data"]["recordApproval"] == {
        "reportPackId": pack_id, "workspaceId": ws["id"], "statusBefore": "GENERATED", "statusAfter": "IN_REVIEW"
    }  # fmt: skip
    pack = (await api.gql(PACK_QUERY, {"id": pack_id}))["data"]["pack"]
    rest = (await api.get(f"/api/v2/packs/{pack_id}")).json()["data"]
    assert pack["status"] == "IN_REVIEW" and pack["packHash"] == rest["pack_hash"]
    assert pack["calculationRun"]["id"] == rest["calculation_run_id"]
    assert pack["qualityAssessment"]["id"] == rest["data_quality_assessment_id"]
    assert pack["summaryPdfUrl"] == rest["summary_pdf_url"]
    assert [a["artifactType"] for a in pack["artifacts"]] == [t.name.upper() for t in ArtifactType]
    assert all(a["signedDownloadUrl"] and a["contentSha256"] for a in pack["artifacts"])
    resp = await fetch(api, pack["artifacts"][0]["signedDownloadUrl"])
    assert resp.status_code == 200 and resp.content.startswith(b"%PDF")
    assert pack["approvals"] == [
        {"actionType": "REQUESTED", "statusBefore": "GENERATED", "statusAfter": "IN_REVIEW", "comment": "go",
         "apiKeyId": pack["approvals"][0]["apiKeyId"], "createdAt": pack["approvals"][0]["createdAt"]}
    ]  # fmt: skip
    body = await api.gql(
        "query($id: UUID!) { workspace(id: $id) { status latestPack { id versionNumber } packs { id } } }",
        {"id": ws["id"]},
    )
    workspace = body["data"]["workspace"]
    assert workspace["latestPack"]["id"] == pack_id and workspace["packs"] == [{"id": pack_id}]


async def test_graphql_generation_errors_match_rest(api: Api) -> None:
    ws = await create_workspace(api)
    body = await api.gql("mutation($id: UUID!) { generatePack(workspaceId: $id) { pack { id } } }", {"id": ws["id"]})
    assert gql_code(body) == "CONFLICT"
    body = await api.gql("query($id: UUID!) { pack(id: $id) { id } }", {"id": str(uuid.uuid4())})
    assert gql_answer(body) == {"data": {"pack": None}, "_status": 200}


async def test_evidence_register_lists_items_of_the_workspace_and_its_packs(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api)
    first = (await generated(api, ws["id"]))["data"]
    items = [
        {"evidence_type": "fuel_receipt", "title": "Diesel March", "file_name": "r.pdf",
         "file_url": "https://files.example/r.pdf", "workspace_id": ws["id"]},
        {"evidence_type": "telematics", "title": "GPS export", "file_name": "gps.csv",
         "file_url": "https://files.example/gps.csv", "report_pack_id": first["id"]},
        {"evidence_type": "other", "title": "Unrelated", "file_name": "x.pdf", "file_url": "https://files.example/x"},
    ]  # fmt: skip
    for item in items:
        resp = await api.post("/api/v2/evidence-items", item)
        assert resp.status_code == 201, resp.text
    other = await calculated_workspace(api_b)
    await api_b.post("/api/v2/evidence-items", {**items[0], "workspace_id": other["id"], "title": "B's receipt"})
    second = (await generated(api, ws["id"]))["data"]
    assert second["pack_hash"] != first["pack_hash"]  # new evidence is a new input
    listed = (await api.get(f"/api/v2/packs/{second['id']}/artifacts")).json()["data"]
    url = next(a for a in listed if a["artifact_type"] == "evidence_register")["signed_download_url"]
    register = list(csv.DictReader(io.StringIO((await fetch(api, url)).text)))
    assert [r["title"] for r in register] == ["Diesel March", "GPS export"]
    assert register[1]["report_pack_id"] == first["id"]


NESTED_PACKS = """
query($perPage: Int!) {
  workspaces(page: 1, perPage: $perPage) {
    items {
      id
      latestPack { id summaryPdfUrl }
      packs {
        id status auditTrailUrl
        calculationRun { id }
        qualityAssessment { id }
        artifacts { id signedDownloadUrl }
        approvals { id actionType }
      }
    }
  }
}"""


async def test_pack_relations_cost_the_same_for_one_or_many_workspaces(api: Api) -> None:
    from tests.sqlcount import count_statements

    for _ in range(3):
        ws = await calculated_workspace(api)
        pack = (await generated(api, ws["id"]))["data"]
        resp = await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "requested"})
        assert resp.status_code == 201
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    counts = []
    for per_page in (1, 3):
        with count_statements(db) as log:
            body = await api.gql(NESTED_PACKS, {"perPage": per_page})
        assert "errors" not in body, body
        items = body["data"]["workspaces"]["items"]
        assert len(items) == per_page and all(len(w["packs"][0]["artifacts"]) == 9 for w in items)
        counts.append(log.count)
    assert counts[0] == counts[1], counts


async def test_cancelled_generation_marks_the_pack_failed(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from evidence_gateway.auth import authenticate
    from evidence_gateway.core.context import Ctx
    from evidence_gateway.resolvers import packs

    ws = await calculated_workspace(api)
    app = api.http._transport.app  # type: ignore[attr-defined]
    ctx = Ctx(app.state.db, app.state.settings, await authenticate(app.state.db, f"Bearer {api.key}"))
    started, release = threading.Event(), threading.Event()

    def slow(_data: Any, _rows: Any, out: Any) -> None:
        started.set()
        release.wait(5)
        out.write(b"late")

    spec = SPECS[ArtifactType.quality_report]
    monkeypatch.setitem(SPECS, ArtifactType.quality_report, dataclasses.replace(spec, render=slow))
    task = asyncio.create_task(packs.generate_pack(ctx, ws["id"], {}))
    assert await asyncio.to_thread(started.wait, 10)  # the render thread is inside the renderer
    task.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    body = await api.gql("query($id: UUID!) { workspace(id: $id) { packs { status } } }", {"id": ws["id"]})
    assert body["data"]["workspace"]["packs"] == [{"status": "FAILED"}]
