"""The one scripted scenario of the parity tests: every resource written through the public
surfaces (REST, GraphQL; legacy reports as a starting state), with nulls, dates, decimals, nested
JSON and more than one of each list, the same on every database."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import SQLModel

from tests.conftest import Api
from tests.parity_support import DEAD_HOOK, Running, engine_on, leaves

# ---- the scripted scenario ---------------------------------------------------------------------

ROWS = [
    {"external_id": "S-1", "mode": "road", "distance_km": 420, "mass_tonnes": 12, "shipment_date": "2025-01-15"},
    {
        "external_id": "S-2",
        "mode": "rail",
        "distance_km": 900.5,
        "mass_tonnes": 30,
        "fuel_type": "diesel",
        "fuel_amount": 50,
        "vehicle_payload_tonnes": 60,
    },
    {
        "external_id": "S-3",
        "mode": "sea",
        "distance_km": 1200,
        "mass_tonnes": 3.25,
        "distance_source": "modelled",
        "carrier_intensity_g_per_tkm": 12.5,
        "carrier_intensity_basis": "wtw",
    },
    {"external_id": "S-4", "mode": "road", "distance_km": 80},  # no mass: counted as missing
]
GQL_ROWS = [{"externalId": "S-5", "mode": "AIR", "distanceKm": 3000, "massTonnes": 0.5, "shipmentDate": "2025-02-03"}]


@dataclass
class Refs:
    """Ids the scenario made, by role."""

    ids: dict[str, str] = field(default_factory=dict)
    # The answers of writes whose record nothing changes afterwards: a read path too.
    answers: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)

    def __getitem__(self, role: str) -> str:
        return self.ids[role]


async def rest(api: Api, path: str, body: Any = None, status: int = 201, **kw: Any) -> dict[str, Any]:
    resp = await api.post(path, body, **kw)
    assert resp.status_code == status, resp.text
    data: dict[str, Any] = resp.json()
    return data


async def gql(api: Api, document: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    body = await api.gql(document, variables)
    assert not body.get("errors"), body
    data: dict[str, Any] = body["data"]
    return data


LEGACY: list[dict[str, Any]] = [
    {
        "title": "FY2025 road",
        "reporting_period_start": "2025-01-01",
        "reporting_period_end": "2025-12-31",
        "status": "final",
        "total_co2e_kg": 48210.5,
        "shipment_count": 312,
    },
    {
        "title": "FY2023",
        "reporting_period_start": None,
        "reporting_period_end": None,
        "status": "draft",
        "total_co2e_kg": 0.0,
        "shipment_count": 0,
    },
]


async def legacy_reports(run: Running) -> list[str]:
    """Legacy reports as a starting state: the command line is their only write path, and
    tests/test_stored_forms.py already compares what it stores; here they are only read."""
    table = SQLModel.metadata.tables["legacy_report"]
    org_id = uuid.UUID((await gql(run.api, "{ viewer { orgId } }"))["viewer"]["orgId"])
    async with engine_on(run.url) as engine, engine.begin() as conn:
        ids = []
        for i, report in enumerate(LEGACY):
            made = uuid.uuid4()
            at = datetime(2025, 6, 1, 12, 0, i, 123456 * (i + 1) % 1_000_000, tzinfo=UTC)
            values: dict[str, Any] = {**report, "id": made, "org_id": org_id, "created_at": at, "updated_at": at}
            for day in ("reporting_period_start", "reporting_period_end"):
                values[day] = values[day] and datetime.fromisoformat(str(values[day])).date()
            await conn.execute(sa.insert(table).values(**values))
            ids.append(str(made))
    return ids


async def scenario(run: Running) -> Refs:
    """Every resource, written through both transports, with nulls, dates, decimals, nested
    JSON and more than one of each list: the same script on every database."""
    api, refs = run.api, Refs()
    ids = refs.ids
    ids["legacy"], ids["legacy_draft"] = await legacy_reports(run)
    ws = (
        await rest(
            api,
            "/api/v2/workspaces",
            {
                "name": "Parity road",
                "external_reference": "ext-1",
                "reporting_period_start": "2025-01-01",
                "reporting_period_end": "2025-03-31",
            },
        )
    )["data"]
    ids["ws"] = ws["id"]
    made = await gql(
        api, f'mutation {{ createWorkspace(input: {{name: "Parity minimal"}}) {{ {leaves("Workspace")} }} }}'
    )
    ids["ws_minimal"] = made["createWorkspace"]["id"]
    refs.answers["ws_minimal"] = ("gql createWorkspace answer", made["createWorkspace"])
    third = await rest(api, "/api/v2/workspaces", {"name": "Parity third", "reporting_period_start": "2025-04-01"})
    ids["ws_third"] = third["data"]["id"]
    refs.answers["ws_third"] = ("rest POST answer", third["data"])

    first = await rest(
        api,
        f"/api/v2/workspaces/{ids['ws']}/imports",
        {
            "source_row_count": 5,
            "source_filename": "q1.csv",
            "source_file_type": "csv",
            "mapping_profile_name": "default",
            "source_system": "tms",
            "shipments": ROWS,
        },
    )
    ids["import"] = first["data"]["id"]
    refs.answers["import"] = ("rest POST answer", first["data"])
    second = await gql(
        api,
        "mutation($ws: UUID!, $i: RegisterImportInput!) { registerImport(workspaceId: $ws, input: $i) { "
        + leaves("ImportBatch")
        + " } }",
        {"ws": ids["ws"], "i": {"sourceRowCount": 1, "shipments": GQL_ROWS}},
    )
    ids["import_gql"] = second["registerImport"]["id"]
    refs.answers["import_gql"] = ("gql registerImport answer", second["registerImport"])

    calc = await rest(
        api,
        f"/api/v2/workspaces/{ids['ws']}/calculate",
        {
            "assumptions_snapshot": {"note": "Q1", "share": 0.25, "nested": {"list": [1, 2.5, None]}},
            "legacy_report_id": ids["legacy"],
        },
        status=200,
    )
    ids["run_first"] = calc["data"]["calculation_run"]["id"]
    refs.answers["run_first"] = ("rest calculate answer", calc["data"]["calculation_run"])
    # The assessment gains its pack once one is generated from the run: compared without it.
    assessment = {k: v for k, v in calc["data"]["quality_assessment"].items() if k != "report_pack_id"}
    refs.answers["quality_first"] = ("rest calculate answer", assessment)
    ids["pack_first"] = (await rest(api, f"/api/v2/workspaces/{ids['ws']}/packs", {}))["data"]["id"]
    done = await gql(
        api,
        "mutation($ws: UUID!) { calculateWorkspace(workspaceId: $ws) { calculationRun { id } } }",
        {"ws": ids["ws"]},
    )
    ids["run"] = done["calculateWorkspace"]["calculationRun"]["id"]
    made = await gql(api, "mutation($ws: UUID!) { generatePack(workspaceId: $ws) { pack { id } } }", {"ws": ids["ws"]})
    ids["pack"] = made["generatePack"]["pack"]["id"]

    asked = await api.post(f"/api/v2/packs/{ids['pack']}/approvals", {"action_type": "requested", "comment": "please"})
    assert asked.status_code == 201, asked.text
    ids["approval"] = asked.headers["Location"].rsplit("/", 1)[1]
    await gql(
        api,
        "mutation($p: UUID!) { recordApproval(packId: $p, input: {actionType: APPROVED}) { statusAfter } }",
        {"p": ids["pack"]},
    )

    item = await rest(
        api,
        "/api/v2/evidence-items",
        {
            "evidence_type": "fuel_receipt",
            "title": "Diesel March",
            "file_name": "r-0317.pdf",
            "file_url": "https://files.example.com/r-0317.pdf",
            "workspace_id": ids["ws"],
            "file_sha256": "ab" * 32,
            "mime_type": "application/pdf",
            "issue_date": "2025-03-17",
            "valid_from": "2025-03-01",
            "valid_to": "2025-03-31",
            "source_system": "erp",
            "verification_status": "verified",
            "extracted_metadata_json": {"litres": 412.5, "pages": [{"n": 1}]},
            "notes": "scanned",
        },
    )
    ids["item"] = item["data"]["id"]
    refs.answers["item"] = ("rest POST answer", item["data"])
    made = await gql(
        api,
        'mutation { createEvidenceItem(input: {evidenceType: OTHER, title: "Policy", '
        'fileName: "p.pdf", fileUrl: "https://files.example.com/p.pdf"}) { ' + leaves("EvidenceItem") + " } }",
    )
    ids["item_org"] = made["createEvidenceItem"]["id"]
    refs.answers["item_org"] = ("gql createEvidenceItem answer", made["createEvidenceItem"])
    ids["item_pack"] = (
        await rest(
            api,
            "/api/v2/evidence-items",
            {
                "evidence_type": "telematics",
                "title": "GPS",
                "file_name": "g.json",
                "file_url": "https://files.example.com/g.json",
                "report_pack_id": ids["pack"],
            },
        )
    )["data"]["id"]

    ids["endpoint"] = (
        await rest(
            api,
            "/api/v2/webhook-endpoints",
            {"url": DEAD_HOOK, "description": "ops", "event_types": ["pack.generated", "workspace.created"]},
        )
    )["data"]["id"]
    made = await gql(
        api,
        "mutation($u: String!) { createWebhookEndpoint(input: {url: $u}) { endpoint { "
        + leaves("WebhookEndpoint")
        + " } } }",
        {"u": DEAD_HOOK},
    )
    ids["endpoint_plain"] = made["createWebhookEndpoint"]["endpoint"]["id"]
    refs.answers["endpoint_plain"] = ("gql createWebhookEndpoint answer", made["createWebhookEndpoint"]["endpoint"])
    changed = await api.patch(f"/api/v2/webhook-endpoints/{ids['endpoint']}", {"description": "ops team"})
    assert changed.status_code == 200, changed.text
    refs.answers["endpoint"] = ("rest PATCH answer", changed.json()["data"])

    tested = await rest(api, "/api/v2/webhooks/test", {"target_url": DEAD_HOOK, "workspace_id": ids["ws"]}, status=502)
    ids["delivery"] = tested["details"]["delivery_id"]
    # The test's outcome (REST: in the 502's details) names the attempt it recorded.
    outcome = {k: v for k, v in tested["details"].items() if k not in ("code", "request_id", "delivery_id")}
    refs.answers["delivery"] = ("rest webhook test answer", {"id": ids["delivery"], **outcome})
    made = await gql(
        api, "mutation($e: UUID!) { testWebhook(input: {endpointId: $e}) { deliveryId } }", {"e": ids["endpoint"]}
    )
    ids["delivery_endpoint"] = made["testWebhook"]["deliveryId"]

    made = await gql(
        api,
        'mutation { createApiKey(input: {name: "ci", scope: WRITE, '
        'expiresAt: "2031-01-31T18:00:00Z"}) { apiKey { ' + leaves("ApiKey") + " } } }",
    )
    ids["api_key"] = made["createApiKey"]["apiKey"]["id"]
    refs.answers["api_key"] = ("gql createApiKey answer", made["createApiKey"]["apiKey"])
    return refs
