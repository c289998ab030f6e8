"""The read models (evidence_gateway/read_models/) are the one declaration of each resource's
output: these tests fail when a table column, a REST body, the OpenAPI document or a GraphQL type
drifts away from them, and say which name is missing where."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from sqlalchemy import select
from sqlmodel import SQLModel
from starlette.applications import Starlette
from strawberry.types.base import StrawberryOptional
from strawberry.utils.str_converters import to_camel_case

from evidence_gateway import models
from evidence_gateway import read_models as rm
from evidence_gateway.rest_compat.openapi import document
from evidence_gateway.schema import (
    calculations,
    common,
    events,
    evidence,
    packs,
    sharing,
    webhook_endpoints,
    webhooks,
    workspaces,
)
from tests.conftest import Api, create_workspace

# Read model -> the GraphQL type that shows the same resource, and the fields that differ on
# purpose: GraphQL follows relations through fields of their own (REST inlines or links them).
GRAPHQL_TYPES: list[tuple[type[rm.ReadModel], type, set[str], set[str]]] = [
    # (read model, GraphQL type, only in the read model, only in GraphQL)
    (
        rm.Workspace,
        workspaces.WorkspaceType,
        set(),
        {
            "imports",
            "calculation_runs",
            "calculation_runs_connection",
            "latest_calculation_run",
            "latest_quality_assessment",
            "latest_pack",
            "packs",
            "packs_connection",
            "evidence_items",
        },
    ),
    (rm.ImportBatch, workspaces.ImportBatchType, set(), set()),
    (rm.CalculationRun, calculations.CalculationRunType, set(), {"quality_assessment"}),
    (rm.DataQualityAssessment, calculations.DataQualityAssessmentType, set(), set()),
    (rm.MethodologyProfile, calculations.MethodologyProfileType, set(), set()),
    # REST nests the successor with links; GraphQL gives the two ids.
    (
        rm.LegacyReport,
        calculations.LegacyReportType,
        {"successor"},
        {"successor_workspace_id", "successor_report_pack_id"},
    ),
    # GraphQL lists the iLEAP file among the artifacts (with its contentSha256); REST shows its hash on the pack.
    (
        rm.ReportPack,
        packs.ReportPackType,
        {"ileap_shipment_footprints_sha256"},
        {"calculation_run", "quality_assessment", "artifacts", "approvals", "evidence_items"},
    ),
    (rm.PackArtifact, packs.PackArtifactType, set(), set()),
    (rm.ApprovalAction, packs.ApprovalActionRecord, set(), set()),
    (rm.EvidenceItem, evidence.EvidenceItemType, set(), set()),
    # ``redacted`` is private (not in the schema): which view of the event a shared result shows.
    (rm.Event, events.EventType, set(), {"redacted"}),
    (rm.WebhookEndpoint, webhook_endpoints.WebhookEndpointType, set(), {"deliveries"}),
    # The viewer is the organisation: GraphQL does not repeat its id on every attempt.
    (rm.WebhookDelivery, webhooks.WebhookDeliveryType, {"org_id"}, set()),
    (rm.WebhookTestResult, webhooks.WebhookTestResultType, set(), set()),
    (rm.PaginationMeta, common.PaginationMeta, set(), set()),
    (rm.DataRecipient, sharing.DataRecipientType, {"revoked"}, set()),
    (rm.RecipientHost, sharing.RecipientHostType, set(), set()),
    (rm.Publication, sharing.PublicationType, {"published"}, set()),
]

# GraphQL-only twins of read-model fields: typed views of JSON or plain-string fields
# (docs/graphql.md "Typed outputs") and the cursor connections of nested lists.
GRAPHQL_TWINS = {
    "totals_by_mode", "iso14083", "assumptions_snapshot", "hubs", "rules_triggered", "emission_boundary",
    "report_status", "extracted_metadata", "kind", "detail", "message", "subscribed_event_types",
    "imports_connection", "evidence_items_connection", "deliveries_connection",
}  # fmt: skip

# Read model -> the table it renders.
TABLES: list[tuple[type[rm.ReadModel], type[SQLModel]]] = [
    (rm.Workspace, models.Workspace),
    (rm.ImportBatch, models.ImportBatch),
    (rm.CalculationRun, models.CalculationRun),
    (rm.DataQualityAssessment, models.DataQualityAssessment),
    (rm.MethodologyProfile, models.MethodologyProfile),
    (rm.LegacyReportRecord, models.LegacyReport),
    (rm.ReportPack, models.ReportPack),
    (rm.PackArtifact, models.PackArtifact),
    (rm.ApprovalAction, models.ApprovalAction),
    (rm.EvidenceItem, models.EvidenceItem),
    (rm.Event, models.Event),
    (rm.WebhookEndpoint, models.WebhookEndpoint),
    (rm.WebhookDelivery, models.WebhookDelivery),
    (rm.DataRecipient, models.DataRecipient),
    (rm.Publication, models.Publication),
]


def _nullable(field: Any) -> bool:
    return type(None) in getattr(field.annotation, "__args__", ())


def _id(value: Any) -> str | None:
    return getattr(value, "__name__", None)


@pytest.mark.parametrize(("model", "gql", "rest_only", "gql_only"), GRAPHQL_TYPES, ids=_id)
def test_graphql_type_has_the_read_model_fields(
    model: type[rm.ReadModel], gql: type, rest_only: set[str], gql_only: set[str]
) -> None:
    name = gql.__strawberry_definition__.name  # type: ignore[attr-defined]
    fields = {f.python_name: f for f in gql.__strawberry_definition__.fields}  # type: ignore[attr-defined]
    missing = sorted(to_camel_case(f) for f in set(model.model_fields) - set(fields) - rest_only)
    extra = sorted(to_camel_case(f) for f in set(fields) - set(model.model_fields) - gql_only - GRAPHQL_TWINS)
    assert missing == [], f"GraphQL {name} lacks {missing} of read model {model.__name__}"
    assert extra == [], f"GraphQL {name} has {extra}, not in read model {model.__name__} (add it, or list it here)"
    differs = [
        to_camel_case(n)
        for n, f in fields.items()
        if n in model.model_fields and isinstance(f.type, StrawberryOptional) != _nullable(model.model_fields[n])
    ]
    assert differs == [], f"GraphQL {name}: nullability differs from {model.__name__} for {differs}"


@pytest.mark.parametrize(("model", "table"), TABLES, ids=_id)
def test_every_column_is_rendered_or_kept_internal(model: type[rm.ReadModel], table: type[SQLModel]) -> None:
    columns = {c.name for c in table.__table__.columns}  # type: ignore[attr-defined]
    fields = set(model.model_fields) - model.derived
    assert columns - fields - model.internal == set(), f"{table.__name__}: columns missing from {model.__name__}"
    assert fields - columns == set(), f"{model.__name__}: fields with no column (declare them derived)"
    assert model.internal <= columns, f"{model.__name__}.internal names columns {table.__name__} does not have"


def test_pack_links_are_one_per_artifact_type_in_its_order() -> None:
    links = [f for f in rm.ReportPack.model_fields if f.endswith("_url")]
    assert links == [f"{kind.value}_url" for kind in models.ArtifactType]
    assert rm.ReportPack.derived == {*links, "ileap_shipment_footprints_sha256"}


def test_openapi_components_are_the_read_models() -> None:
    schemas = document()["components"]["schemas"]
    for model in (rm.Workspace, rm.ReportPack, rm.PackArtifact, rm.EvidenceItem, rm.WebhookEndpoint):
        component = schemas[model.__name__]
        assert list(component["properties"]) == list(model.model_fields)
        assert component["required"] == list(model.model_fields)
    assert schemas["Workspace"]["properties"]["data_version"]["x-extension"] is True
    assert schemas["ApprovalActionResult"]["required"] == ["reportPackId", "workspaceId", "statusBefore", "statusAfter"]


def _fits(model: type[BaseModel], body: dict[str, Any]) -> None:
    """The body has the model's keys in its order, and its values validate as the declared types."""
    keys = [f.serialization_alias or n for n, f in model.model_fields.items()]
    assert list(body) == keys, model.__name__
    model.model_validate({n: body[f.serialization_alias or n] for n, f in model.model_fields.items()})


async def test_rest_bodies_and_event_data_fit_their_read_models(api: Api, app: Starlette) -> None:
    ws = await create_workspace(api, reporting_period_start="2026-01-01")
    _fits(rm.Workspace, ws)
    listed = (await api.get("/api/v2/workspaces")).json()
    _fits(rm.PaginationMeta, listed["pagination"])
    rows = [{"mode": "road", "distance_km": 120, "mass_tonnes": 2.5}, {"mode": "rail", "distance_km": 300.5}]
    batch = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 2, "shipments": rows})
    _fits(rm.ImportBatch, batch.json()["data"])
    calc = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).json()["data"]
    _fits(rm.CalculationResult, calc)
    run = (await api.get(f"/api/v2/calculation-runs/{calc['calculation_run']['id']}")).json()["data"]
    _fits(rm.CalculationRunDetail, run)
    generated = (await api.post(f"/api/v2/workspaces/{ws['id']}/packs")).json()
    pack = generated["data"]
    _fits(rm.ReportPack, pack)
    _fits(rm.PackMeta, generated["meta"])
    assert pack["summary_pdf_url"] and pack["audit_trail_url"]
    detail = (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]
    _fits(rm.ReportPackDetail, detail)
    for artifact in detail["artifacts"]:
        _fits(rm.PackArtifact, artifact)
    approval = await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "requested"})
    _fits(rm.ApprovalActionResult, approval.json()["data"])
    _fits(rm.ApprovalAction, (await api.get(approval.headers["location"])).json()["data"])
    _fits(rm.WorkspaceDetail, (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"])
    item = {"evidence_type": "fuel_receipt", "title": "t", "file_name": "f.pdf", "file_url": "https://x.example/f"}
    _fits(rm.EvidenceItem, (await api.post("/api/v2/evidence-items", item)).json()["data"])
    endpoint = await api.post("/api/v2/webhook-endpoints", {"url": "http://127.0.0.1:9/hook"})
    _fits(rm.WebhookEndpointWithSecret, endpoint.json()["data"])
    for profile in (await api.get("/api/v2/methodology-profiles")).json()["data"]:
        _fits(rm.MethodologyProfile, profile)

    log = (await api.get("/api/v2/events?limit=200")).json()
    _fits(rm.EventPage, log)
    for event in log["data"]:
        _fits(rm.Event, event)
    # The event log stores each resource as REST renders it.
    by_type = {e["type"]: e["data"] for e in log["data"]}
    created = {k: v for k, v in by_type["workspace.created"].items() if k in rm.Workspace.model_fields}
    assert list(created) == list(rm.Workspace.model_fields)
    assert by_type["evidence_item.created"] == (await api.get("/api/v2/evidence-items")).json()["data"][0]

    # Rendered from a Core row (attribute access by column name) as from the ORM entity.
    async with app.state.db.read() as session:
        entity = (await session.execute(select(models.Workspace))).scalars().one()
        row = (await session.execute(select(*models.Workspace.__table__.columns))).one()  # type: ignore[attr-defined]
    assert rm.Workspace.render(row) == rm.Workspace.render(entity)
    assert rm.Workspace.model_validate(row) == rm.Workspace.model_validate(entity)


LINKS_QUERY = """
query($id: UUID!) {
  pack(id: $id) {
    summaryPdfUrl auditTrailUrl ileapShipmentFootprintsUrl
    artifacts { artifactType status fileUrl signedDownloadUrl }
  }
}"""


async def test_links_only_once_generated_on_both_transports(api: Api) -> None:
    ws = await create_workspace(api)
    rows = [{"mode": "road", "distance_km": 120, "mass_tonnes": 2.5}]
    await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": rows})
    await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})
    # Queued (no background worker in tests): its artifacts stay pending, so no links anywhere.
    queued = await api.post(f"/api/v2/workspaces/{ws['id']}/packs", headers={"Prefer": "respond-async"})
    assert queued.status_code == 202, queued.text
    pending = (await api.get(f"/api/v2/packs/{queued.json()['data']['id']}")).json()["data"]
    assert {a["status"] for a in pending["artifacts"]} == {"pending"}
    assert all(a["file_url"] is None and a["signed_download_url"] is None for a in pending["artifacts"])
    assert all(pending[f"{kind.value}_url"] is None for kind in models.ArtifactType)
    gql = (await api.gql(LINKS_QUERY, {"id": pending["id"]}))["data"]["pack"]
    assert gql["summaryPdfUrl"] is None and gql["auditTrailUrl"] is None
    assert all(a["fileUrl"] is None and a["signedDownloadUrl"] is None for a in gql["artifacts"])

    generated = (await api.post(f"/api/v2/workspaces/{ws['id']}/packs")).json()["data"]
    rest = (await api.get(f"/api/v2/packs/{generated['id']}")).json()["data"]
    gql = (await api.gql(LINKS_QUERY, {"id": generated["id"]}))["data"]["pack"]
    assert gql["summaryPdfUrl"] == rest["summary_pdf_url"] is not None
    assert gql["ileapShipmentFootprintsUrl"] == rest["ileap_shipment_footprints_url"] is not None
    # GraphQL lists the iLEAP file last among the artifacts; REST links it from the pack.
    rest_urls = [a["file_url"] for a in rest["artifacts"]]
    assert [a["fileUrl"] for a in gql["artifacts"]] == [*rest_urls, rest["ileap_shipment_footprints_url"]]
    assert all(a["signedDownloadUrl"] and a["signed_download_url"] for a in zip_artifacts(gql, rest))


def zip_artifacts(gql: dict[str, Any], rest: dict[str, Any]) -> list[dict[str, Any]]:
    """Each listed artifact's GraphQL and REST fields in one mapping (same order on both transports)."""
    listed = [a for a in gql["artifacts"] if a["artifactType"] != "ILEAP_SHIPMENT_FOOTPRINTS"]
    return [{**g, **r} for g, r in zip(listed, rest["artifacts"], strict=True)]
