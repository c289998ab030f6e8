"""Evidence items over REST and GraphQL: contract fields, defaults, derived scope, every bad
input refused with nothing stored, references only to the caller's own records."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select, update

from evidence_gateway.models import EvidenceItem, Workspace
from tests.conftest import Api, create_workspace, gql_answer, gql_code

ITEM_FIELDS = {
    "id", "workspace_id", "report_pack_id", "shipment_id", "org_id", "evidence_type", "title", "file_name",
    "file_url", "file_sha256", "mime_type", "issue_date", "valid_from", "valid_to", "source_system",
    "verification_status", "attachment_scope", "extracted_metadata_json", "notes", "uploaded_at",
}  # fmt: skip
UNKNOWN = "00000000-0000-4000-8000-000000000000"
SHA = "ab" * 32


def item(**over: Any) -> dict[str, Any]:
    return {
        "evidence_type": "fuel_receipt",
        "title": "Diesel receipt March",
        "file_name": "receipt-0317.pdf",
        "file_url": "https://files.example.com/receipts/0317.pdf",
        **over,
    }


def db_of(api: Api) -> Any:
    return api.http._transport.app.state.db  # type: ignore[attr-defined]


async def stored_count(api: Api) -> int:
    async with db_of(api).read() as session:
        return int((await session.execute(select(func.count()).select_from(EvidenceItem))).scalar_one())


async def create(api: Api, **over: Any) -> dict[str, Any]:
    resp = await api.post("/api/v2/evidence-items", item(**over))
    assert resp.status_code == 201, resp.text
    data: dict[str, Any] = resp.json()["data"]
    return data


async def workspace_with_shipment(api: Api) -> tuple[dict[str, Any], str]:
    ws = await create_workspace(api)
    resp = await api.post(
        f"/api/v2/workspaces/{ws['id']}/imports",
        {"source_row_count": 1, "shipments": [{"mode": "road", "distance_km": 10, "mass_tonnes": 1}]},
    )
    assert resp.status_code == 201, resp.text
    async with db_of(api).read() as session:
        from evidence_gateway.models import Shipment

        sid = (
            await session.execute(select(Shipment.id).where(Shipment.workspace_id == uuid.UUID(ws["id"])))
        ).scalar_one()
    return ws, str(sid)


# -- creation and defaults ------------------------------------------------------------------------


async def test_minimal_item_has_every_field_and_defaults(api: Api) -> None:
    data = await create(api)
    assert set(data) == ITEM_FIELDS
    assert uuid.UUID(data["id"]) and uuid.UUID(data["org_id"])
    assert data["verification_status"] == "unverified"
    assert data["attachment_scope"] == "organization"
    assert data["extracted_metadata_json"] == {}
    for name in ("workspace_id", "report_pack_id", "shipment_id", "file_sha256", "mime_type", "issue_date",
                 "valid_from", "valid_to", "source_system", "notes"):  # fmt: skip
        assert data[name] is None, name
    assert data["uploaded_at"].endswith("Z")
    assert data["file_url"] == "https://files.example.com/receipts/0317.pdf"


async def test_full_item_round_trips(api: Api) -> None:
    ws = await create_workspace(api)
    metadata = {"litres": 412.5, "station": {"name": "Aral", "zip": "10115"}, "tags": ["a", 1, None, True],
                "empty": {}, "nested": [[{"deep": "ü"}]], "big": 12345678901234567}  # fmt: skip
    data = await create(
        api,
        workspace_id=ws["id"],
        evidence_type="charging_invoice",
        file_sha256=SHA.upper(),
        mime_type="application/pdf",
        issue_date="2025-03-17",
        valid_from="2025-03-01",
        valid_to="2025-03-31",
        source_system="SAP",
        verification_status="verified",
        attachment_scope="workspace",
        extracted_metadata_json=metadata,
        notes="checked by ops\nsecond line",
    )
    assert data["file_sha256"] == SHA  # normalised to lowercase
    assert data["extracted_metadata_json"] == metadata
    assert data["workspace_id"] == ws["id"] and data["attachment_scope"] == "workspace"
    assert (data["issue_date"], data["valid_from"], data["valid_to"]) == ("2025-03-17", "2025-03-01", "2025-03-31")
    assert data["verification_status"] == "verified" and data["evidence_type"] == "charging_invoice"
    fetched = (await api.get(f"/api/v2/evidence-items/{data['id']}")).json()["data"]
    assert fetched == data
    gql = await api.gql("query($id: UUID!) { evidenceItem(id: $id) { extractedMetadataJson fileSha256 } }",
                        {"id": data["id"]})  # fmt: skip
    assert gql["data"]["evidenceItem"] == {"extractedMetadataJson": metadata, "fileSha256": SHA}


async def test_scope_is_derived_from_the_references(api: Api) -> None:
    ws, shipment_id = await workspace_with_shipment(api)
    assert (await create(api))["attachment_scope"] == "organization"
    assert (await create(api, workspace_id=ws["id"]))["attachment_scope"] == "workspace"
    on_shipment = await create(api, shipment_id=shipment_id)
    assert on_shipment["attachment_scope"] == "shipment"
    assert on_shipment["workspace_id"] == ws["id"]  # implied by the shipment
    both = await create(api, shipment_id=shipment_id, workspace_id=ws["id"], attachment_scope="shipment")
    assert both["attachment_scope"] == "shipment"


async def test_null_optionals_mean_not_given(api: Api) -> None:
    data = await create(api, workspace_id=None, verification_status=None, attachment_scope=None,
                        extracted_metadata_json=None, notes=None)  # fmt: skip
    assert data["verification_status"] == "unverified" and data["attachment_scope"] == "organization"
    assert data["extracted_metadata_json"] == {} and data["workspace_id"] is None


# -- refused input: 422 naming the field, nothing stored ---------------------------------------------

BAD = [
    ({"evidence_type": None}, "evidence_type"),
    ({"evidence_type": "invoice"}, "evidence_type"),
    ({"evidence_type": 1}, "evidence_type"),
    ({"title": ""}, "title"),
    ({"title": "   "}, "title"),
    ({"title": 5}, "title"),
    ({"title": "x" * 301}, "title"),
    ({"title": "a\x00b"}, "title"),
    ({"file_name": None}, "file_name"),
    ({"file_url": "receipt.pdf"}, "file_url"),
    ({"file_url": "ftp://files.example.com/a.pdf"}, "file_url"),
    ({"file_url": "javascript:alert(1)"}, "file_url"),
    ({"file_url": "https://"}, "file_url"),
    ({"file_url": "https://exa mple.com/a.pdf"}, "file_url"),
    ({"file_url": "https://example.com:99999/a.pdf"}, "file_url"),
    ({"file_url": ["https://example.com"]}, "file_url"),
    ({"workspace_id": "not-a-uuid"}, "workspace_id"),
    ({"workspace_id": 7}, "workspace_id"),
    ({"report_pack_id": "123"}, "report_pack_id"),
    ({"shipment_id": ""}, "shipment_id"),
    ({"file_sha256": "abc"}, "file_sha256"),
    ({"file_sha256": "g" * 64}, "file_sha256"),
    ({"file_sha256": SHA + "0"}, "file_sha256"),
    ({"mime_type": "pdf"}, "mime_type"),
    ({"issue_date": "17.03.2025"}, "issue_date"),
    ({"issue_date": "2025-02-30"}, "issue_date"),
    ({"valid_from": "2025-03-01T00:00:00Z"}, "valid_from"),
    ({"valid_to": 20250301}, "valid_to"),
    ({"valid_from": "2025-04-01", "valid_to": "2025-03-01"}, "valid_to"),
    ({"verification_status": "approved"}, "verification_status"),
    ({"attachment_scope": "global"}, "attachment_scope"),
    ({"attachment_scope": "shipment"}, "attachment_scope"),
    ({"attachment_scope": "workspace"}, "attachment_scope"),
    ({"attachment_scope": "organization", "workspace_id": UNKNOWN}, "attachment_scope"),
    ({"attachment_scope": "workspace", "shipment_id": UNKNOWN}, "attachment_scope"),
    ({"extracted_metadata_json": [1, 2]}, "extracted_metadata_json"),
    ({"extracted_metadata_json": "{}"}, "extracted_metadata_json"),
    ({"source_system": "s" * 201}, "source_system"),
    ({"notes": 12}, "notes"),
    ({"workspace_id": UNKNOWN}, "workspace_id"),
    ({"report_pack_id": UNKNOWN}, "report_pack_id"),
    ({"shipment_id": UNKNOWN}, "shipment_id"),
]


async def test_every_bad_input_is_422_naming_the_field_and_stores_nothing(api: Api) -> None:
    for over, field_name in BAD:
        resp = await api.post("/api/v2/evidence-items", item(**over))
        assert resp.status_code == 422, (over, resp.text)
        body = resp.json()
        assert body["details"]["code"] == "invalid_input"
        assert field_name in body["details"]["fields"], (over, body)
    assert await stored_count(api) == 0


async def test_missing_required_fields_are_all_listed(api: Api) -> None:
    resp = await api.post("/api/v2/evidence-items", {})
    assert resp.status_code == 422
    assert set(resp.json()["details"]["fields"]) >= {"evidence_type", "title", "file_name", "file_url"}
    # Rules between fields are listed together with the per-field errors.
    crossed = {"valid_from": "2025-02-01", "valid_to": "2025-01-01", "attachment_scope": "shipment", "title": 1}
    resp = await api.post("/api/v2/evidence-items", crossed)
    assert set(resp.json()["details"]["fields"]) >= {"evidence_type", "title", "valid_to", "attachment_scope"}
    assert (await api.post("/api/v2/evidence-items", [item()])).status_code == 400
    raw = await api.http.post("/api/v2/evidence-items", content=b"{", headers={"Authorization": f"Bearer {api.key}"})
    assert raw.status_code == 400
    assert (await api.post("/api/v2/evidence-items", item(), key=None)).status_code == 401
    assert await stored_count(api) == 0


# -- references belong to the caller ------------------------------------------------------------------


async def test_other_organisations_references_are_refused(api: Api, api_b: Api) -> None:
    ws_b, shipment_b = await workspace_with_shipment(api_b)
    for over, field_name in [
        ({"workspace_id": ws_b["id"]}, "workspace_id"),
        ({"shipment_id": shipment_b}, "shipment_id"),
    ]:
        resp = await api.post("/api/v2/evidence-items", item(**over))
        assert resp.status_code == 422, resp.text
        assert field_name in resp.json()["details"]["fields"]
    assert await stored_count(api) == 0


async def test_shipment_and_workspace_must_agree(api: Api) -> None:
    _ws, shipment_id = await workspace_with_shipment(api)
    other = await create_workspace(api, name="other")
    resp = await api.post("/api/v2/evidence-items", item(shipment_id=shipment_id, workspace_id=other["id"]))
    assert resp.status_code == 422
    assert "shipment_id" in resp.json()["details"]["fields"]
    assert await stored_count(api) == 0


async def test_archived_workspace_refuses_new_evidence(api: Api) -> None:
    ws = await create_workspace(api)
    async with db_of(api).write() as session:
        await session.execute(update(Workspace).where(Workspace.id == uuid.UUID(ws["id"])).values(status="archived"))
    resp = await api.post("/api/v2/evidence-items", item(workspace_id=ws["id"]))
    assert resp.status_code == 409
    assert await stored_count(api) == 0


# -- reads and isolation ---------------------------------------------------------------------------


async def test_reads_are_scoped_to_the_organisation(api: Api, api_b: Api) -> None:
    mine = await create(api)
    assert (await api_b.get(f"/api/v2/evidence-items/{mine['id']}")).status_code == 404
    assert (await api.get(f"/api/v2/evidence-items/{UNKNOWN}")).status_code == 404
    assert (await api.get("/api/v2/evidence-items/not-a-uuid")).status_code == 404
    listed_b = (await api_b.get("/api/v2/evidence-items")).json()
    assert listed_b == {"data": [], "pagination": {"page": 1, "per_page": 20, "total": 0}}
    gql = await api_b.gql("query($id: UUID!) { evidenceItem(id: $id) { id } }", {"id": mine["id"]})
    assert gql_answer(gql) == {"data": {"evidenceItem": None}, "_status": 200}


async def test_list_paginates_and_filters_by_workspace(api: Api, api_b: Api) -> None:
    ws = await create_workspace(api)
    ids = [(await create(api, workspace_id=ws["id"], title=f"t{i}"))["id"] for i in range(3)]
    await create(api, title="org-wide")
    everything = (await api.get("/api/v2/evidence-items", params={"per_page": 2})).json()
    assert everything["pagination"] == {"page": 1, "per_page": 2, "total": 4}
    assert [d["title"] for d in everything["data"]] == ["org-wide", "t2"]  # newest first
    in_ws = (await api.get("/api/v2/evidence-items", params={"workspace_id": ws["id"]})).json()
    assert sorted(d["id"] for d in in_ws["data"]) == sorted(ids) and in_ws["pagination"]["total"] == 3
    assert (await api_b.get("/api/v2/evidence-items", params={"workspace_id": ws["id"]})).status_code == 404
    bad = await api.get("/api/v2/evidence-items", params={"workspace_id": "x"})
    assert bad.status_code == 422 and "workspace_id" in bad.json()["details"]["fields"]
    assert (await api.get("/api/v2/evidence-items", params={"per_page": 101})).status_code == 422


# -- GraphQL -------------------------------------------------------------------------------------

GQL_CREATE = """mutation($i: CreateEvidenceItemInput!) { createEvidenceItem(input: $i) {
  id workspaceId shipmentId orgId evidenceType title fileName fileUrl fileSha256 verificationStatus
  attachmentScope extractedMetadataJson validFrom validTo uploadedAt } }"""


async def test_graphql_create_read_list_and_workspace_relation(api: Api, api_b: Api) -> None:
    ws = await create_workspace(api)
    created = await api.gql(GQL_CREATE, {"i": {
        "evidenceType": "TELEMATICS", "title": "GPS export", "fileName": "gps.csv",
        "fileUrl": "http://files.example.com/gps.csv", "workspaceId": ws["id"],
        "extractedMetadataJson": {"km": 120}, "validFrom": "2025-01-01", "validTo": "2025-01-31"}})  # fmt: skip
    assert "errors" not in created, created
    data = created["data"]["createEvidenceItem"]
    assert (data["evidenceType"], data["verificationStatus"], data["attachmentScope"]) == (
        "TELEMATICS", "UNVERIFIED", "WORKSPACE")  # fmt: skip
    assert data["extractedMetadataJson"] == {"km": 120} and data["workspaceId"] == ws["id"]

    rest = (await api.get(f"/api/v2/evidence-items/{data['id']}")).json()["data"]
    assert rest["evidence_type"] == "telematics" and rest["extracted_metadata_json"] == {"km": 120}

    listed = await api.gql("query($w: UUID) { evidenceItems(workspaceId: $w, perPage: 5) { items { id } "
                           "pagination { page perPage total } } }", {"w": ws["id"]})  # fmt: skip
    assert listed["data"]["evidenceItems"]["items"] == [{"id": data["id"]}]
    assert listed["data"]["evidenceItems"]["pagination"] == {"page": 1, "perPage": 5, "total": 1}

    nested = await api.gql("query($id: UUID!) { workspace(id: $id) { evidenceItems { id title } } }", {"id": ws["id"]})
    assert nested["data"]["workspace"]["evidenceItems"] == [{"id": data["id"], "title": "GPS export"}]

    minimal = {"evidenceType": "OTHER", "title": "x", "fileName": "x", "fileUrl": "https://x.example/"}
    foreign = await api_b.gql(GQL_CREATE, {"i": {**minimal, "workspaceId": ws["id"]}})
    assert gql_code(foreign) == "BAD_USER_INPUT"
    assert "input.workspaceId" in foreign["errors"][0]["extensions"]["fields"]
    bad_meta = await api.gql(GQL_CREATE, {"i": {**minimal, "extractedMetadataJson": [1]}})
    assert gql_code(bad_meta) == "BAD_USER_INPUT"
    assert await stored_count(api) == 1


# -- packs: a pack implies its workspace -------------------------------------------------------------


async def pack_of(api: Api) -> dict[str, Any]:
    """A real pack of the caller: workspace -> import -> calculation -> generation."""
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    rows = [{"mode": "road", "distance_km": 100, "mass_tonnes": 10}]
    assert (
        await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": rows})
    ).status_code == 201
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")).status_code == 200
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/packs")
    assert resp.status_code == 201, resp.text
    return dict(resp.json()["data"])


async def test_report_pack_implies_its_workspace(api: Api, api_b: Api) -> None:
    pack = await pack_of(api)
    data = await create(api, report_pack_id=pack["id"])
    assert data["report_pack_id"] == pack["id"]
    assert data["workspace_id"] == pack["workspace_id"]  # implied
    assert data["attachment_scope"] == "workspace"
    same = await create(api, report_pack_id=pack["id"], workspace_id=pack["workspace_id"], attachment_scope="workspace")
    assert same["workspace_id"] == pack["workspace_id"]

    other_ws = await create_workspace(api, name="elsewhere")
    resp = await api.post("/api/v2/evidence-items", item(report_pack_id=pack["id"], workspace_id=other_ws["id"]))
    assert resp.status_code == 422 and "workspace_id" in resp.json()["details"]["fields"]
    foreign = await api_b.post("/api/v2/evidence-items", item(report_pack_id=pack["id"]))
    assert foreign.status_code == 422 and "report_pack_id" in foreign.json()["details"]["fields"]
    assert await stored_count(api) == 2

    listed = (await api.get("/api/v2/evidence-items", params={"workspace_id": pack["workspace_id"]})).json()
    assert listed["pagination"]["total"] == 2


async def test_workspace_evidence_items_are_batched(api: Api) -> None:
    from tests.sqlcount import count_statements

    for i in range(5):
        ws = await create_workspace(api, name=f"ws-{i}")
        await create(api, workspace_id=ws["id"], title=f"e-{i}")
    query = "query($n: Int!) { workspaces(perPage: $n) { items { id evidenceItems { id title } } } }"
    db = db_of(api)
    counts = []
    for n in (1, 5):
        with count_statements(db) as log:
            body = await api.gql(query, {"n": n})
        assert "errors" not in body, body
        assert all(len(w["evidenceItems"]) == 1 for w in body["data"]["workspaces"]["items"])
        counts.append(log.count)
    assert counts[0] == counts[1], counts


async def test_pack_evidence_items_over_graphql(api: Api, api_b: Api) -> None:
    pack = await pack_of(api)
    on_pack = await create(api, report_pack_id=pack["id"], title="for the pack")
    await create(api, workspace_id=pack["workspace_id"], title="workspace only")
    query = "query($id: UUID!) { pack(id: $id) { id evidenceItems { id title reportPackId workspaceId } } }"
    body = await api.gql(query, {"id": pack["id"]})
    assert "errors" not in body, body
    assert body["data"]["pack"]["evidenceItems"] == [
        {"id": on_pack["id"], "title": "for the pack", "reportPackId": pack["id"], "workspaceId": pack["workspace_id"]}
    ]
    assert gql_answer(await api_b.gql(query, {"id": pack["id"]})) == {"data": {"pack": None}, "_status": 200}
