"""Typed GraphQL twins of the JSON and plain-string fields: the same values as their deprecated
twins (and as REST), in types a code generator can name."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from graphql import GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLObjectType, get_named_type

from evidence_gateway.schema import schema
from evidence_gateway.schema.common import deprecation_day
from tests.conftest import Api
from tests.parity_support import DEAD_HOOK
from tests.test_calculations import imported_workspace
from tests.test_evidence import item
from tests.test_legacy import load, record

# JSON or plain-string field -> its typed twin, and the twin's named type.
TWINS = {
    ("CalculationRun", "totalsByModeJson"): ("totalsByMode", "ModeTotals"),
    ("CalculationRun", "iso14083Json"): ("iso14083", "Iso14083Summary"),
    ("CalculationRun", "assumptionsSnapshotJson"): ("assumptionsSnapshot", "MetadataEntry"),
    ("DataQualityAssessment", "rulesTriggeredJson"): ("rulesTriggered", "QualityRule"),
    ("EvidenceItem", "extractedMetadataJson"): ("extractedMetadata", "MetadataEntry"),
    ("Event", "data"): ("detail", "EventData"),
    ("WebhookDelivery", "payload"): ("message", "WebhookPayload"),
    ("WebhookTestResult", "payload"): ("message", "WebhookPayload"),
    ("LegacyReport", "status"): ("reportStatus", "LegacyReportStatus"),
    ("MethodologyProfile", "boundary"): ("emissionBoundary", "EmissionBoundary"),
    ("WebhookEndpoint", "eventTypes"): ("subscribedEventTypes", "EventType"),
}


@pytest.mark.parametrize(("owner", "old"), list(TWINS), ids=[f"{o}.{f}" for o, f in TWINS])
def test_each_untyped_field_has_a_typed_twin_and_a_dated_deprecation(owner: str, old: str) -> None:
    twin, twin_type = TWINS[(owner, old)]
    gql_type = schema._schema.type_map[owner]
    assert isinstance(gql_type, GraphQLObjectType)
    deprecated, typed = gql_type.fields[old], gql_type.fields[twin]
    assert deprecation_day(deprecated.deprecation_reason) is not None, deprecated.deprecation_reason
    assert twin in (deprecated.deprecation_reason or "")
    assert typed.deprecation_reason is None
    named = get_named_type(typed.type)
    assert named.name == twin_type
    assert isinstance(named, GraphQLObjectType | GraphQLEnumType)


def test_no_output_field_left_without_a_typed_way() -> None:
    """Every JSON output is deprecated for a twin: a new JSON output field needs one too."""
    untyped = []
    for name, gql_type in schema._schema.type_map.items():
        if isinstance(gql_type, GraphQLObjectType) and not name.startswith("__"):
            for field_name, field in gql_type.fields.items():
                if get_named_type(field.type).name == "JSON" and field.deprecation_reason is None:
                    untyped.append(f"{name}.{field_name}")
    assert not untyped, untyped


def entries_as_dict(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {e["key"]: json.loads(e["valueJson"]) for e in entries}


RUN = """
mutation($ws: UUID!, $a: JSON) {
  calculateWorkspace(workspaceId: $ws, input: {assumptionsSnapshot: $a}) {
    calculationRun {
      totalsByModeJson iso14083Json assumptionsSnapshotJson
      totalsByMode { mode co2eKg co2eTtwKg co2eWttKg co2eWtwKg tonneKm shipmentCount
                     intensityTtwGPerTkm intensityWtwGPerTkm }
      iso14083 { headlineBoundary coverageTonneKmPercent
                 dataCategories { category rows co2eTtwKg co2eWtwKg tonneKm }
                 distanceTypes { distanceType rows tonneKm }
                 primaryDataShare { byEmissionsWtwPercent byRowsPercent }
                 excluded { rows estimated tonneKm co2eTtwKg co2eWtwKg }
                 methodNotes { note count } }
      assumptionsSnapshot { key valueJson text number boolean }
    }
    qualityAssessment { rulesTriggeredJson rulesTriggered { id severity count message } }
  }
}
"""


def snake_keys(obj: dict[str, Any], *skip: str) -> dict[str, Any]:
    return {re.sub(r"(?<!^)([A-Z])", r"_\1", k).lower(): v for k, v in obj.items() if k not in skip}


async def test_calculation_figures_typed_equal_their_json(api: Api) -> None:
    ws = await imported_workspace(api)
    assumptions = {"load_factor": "as declared", "utilisation": 0.8, "empty_runs": False, "legs": [1, 2]}
    body = await api.gql(RUN, {"ws": ws["id"], "a": assumptions})
    assert "errors" not in body, body
    run = body["data"]["calculateWorkspace"]["calculationRun"]
    by_mode = {t["mode"].lower(): snake_keys(t, "mode") for t in run["totalsByMode"]}
    assert by_mode == run["totalsByModeJson"] and set(by_mode) == {"road", "rail", "sea"}

    iso, raw = run["iso14083"], run["iso14083Json"]
    assert iso["headlineBoundary"] == raw["headline_boundary"] == "WTW"
    assert {c["category"].lower(): snake_keys(c, "category") for c in iso["dataCategories"]} == raw["data_categories"]
    assert {d["distanceType"].lower(): snake_keys(d, "distanceType") for d in iso["distanceTypes"]} == raw[
        "distance_types"
    ]
    assert snake_keys(iso["primaryDataShare"]) == raw["primary_data_share"]
    assert snake_keys(iso["excluded"]) == raw["excluded"] and iso["excluded"]["rows"] == 1
    assert {n["note"]: n["count"] for n in iso["methodNotes"]} == raw["method_notes"]
    assert iso["coverageTonneKmPercent"] == raw["coverage_tonne_km_percent"]

    assert entries_as_dict(run["assumptionsSnapshot"]) == run["assumptionsSnapshotJson"] == assumptions
    typed = {e["key"]: e for e in run["assumptionsSnapshot"]}
    assert typed["load_factor"]["text"] == "as declared" and typed["load_factor"]["number"] is None
    assert typed["utilisation"]["number"] == 0.8 and typed["empty_runs"]["boolean"] is False
    assert typed["legs"] == {"key": "legs", "valueJson": "[1,2]", "text": None, "number": None, "boolean": None}

    qa = body["data"]["calculateWorkspace"]["qualityAssessment"]
    rules = [{**r, "severity": r["severity"].lower()} for r in qa["rulesTriggered"]]
    assert rules == qa["rulesTriggeredJson"] and any(r["id"] == "missing_required_fields" for r in rules)

    # REST answers the same run with the same figures.
    rest = (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["latest_calculation_run"]
    assert rest["totals_by_mode_json"] == run["totalsByModeJson"] and rest["iso14083_json"] == raw


async def test_evidence_metadata_key_by_key(api: Api) -> None:
    metadata = {"litres": 412.5, "pages": [{"n": 1}], "station": "Shell A1", "checked": True}
    created = await api.post("/api/v2/evidence-items", item(extracted_metadata_json=metadata))
    assert created.status_code == 201, created.text
    body = await api.gql(
        "query($id: UUID!) { evidenceItem(id: $id) { extractedMetadataJson "
        "extractedMetadata { key valueJson text number boolean } } }",
        {"id": created.json()["data"]["id"]},
    )
    found = body["data"]["evidenceItem"]
    assert entries_as_dict(found["extractedMetadata"]) == found["extractedMetadataJson"] == metadata
    assert [e["key"] for e in found["extractedMetadata"]] == list(metadata)


async def test_events_typed_kind_and_status_move(api: Api) -> None:
    ws = await imported_workspace(api)
    body = await api.gql(
        "{ events(first: 50) { items { type kind subjectId data "
        "detail { resourceId reason error test workspaceStatusChange { before after } "
        "packStatusChange { before after actionType comment } } } } }"
    )
    assert "errors" not in body, body
    items = body["data"]["events"]["items"]
    assert [e["kind"] for e in items] == [e["type"].replace(".", "_").upper() for e in items]
    moved = [e for e in items if e["type"] == "workspace.status_changed"]
    assert moved, [e["type"] for e in items]
    for event in items:
        assert event["detail"]["resourceId"] == event["data"]["id"]
        assert event["detail"]["packStatusChange"] is None and event["detail"]["test"] is False
    for event in moved:
        change = event["detail"]["workspaceStatusChange"]
        assert change == {
            "before": event["data"]["status_before"].upper(),
            "after": event["data"]["status_after"].upper(),
        }
        assert event["subjectId"] == ws["id"]
    assert all(e["detail"]["workspaceStatusChange"] is None for e in items if e not in moved)


async def test_webhook_payloads_typed(api: Api) -> None:
    ws = await imported_workspace(api)
    tested = await api.gql(
        "mutation($u: String!, $w: UUID!) { testWebhook(input: {targetUrl: $u, workspaceId: $w}) { payload "
        "message { type kind timestamp eventId sequence subjectType subjectId workspaceId "
        "data { test resourceId } } } }",
        {"u": DEAD_HOOK, "w": ws["id"]},
    )
    assert "errors" not in tested, tested
    result = tested["data"]["testWebhook"]
    message, payload = result["message"], result["payload"]
    assert message["type"] == payload["type"] == "pack.published" and message["kind"] is None
    assert message["data"] == {"test": True, "resourceId": None}
    assert message["workspaceId"] == payload["data"]["workspace_id"] == ws["id"]
    assert message["eventId"] is None and message["sequence"] is None
    assert message["timestamp"].replace("+00:00", "Z")[:19] == payload["timestamp"][:19]

    # An endpoint subscribed to some types: its deliveries carry events, typed.
    endpoint = await api.post(
        "/api/v2/webhook-endpoints", {"url": DEAD_HOOK, "event_types": ["workspace.created", "pack.generated"]}
    )
    assert endpoint.status_code == 201, endpoint.text
    body = await api.gql(
        "query($id: UUID!) { webhookEndpoint(id: $id) { eventTypes subscribedEventTypes } }",
        {"id": endpoint.json()["data"]["id"]},
    )
    found = body["data"]["webhookEndpoint"]
    assert found["subscribedEventTypes"] == ["WORKSPACE_CREATED", "PACK_GENERATED"]
    assert [t.replace(".", "_").upper() for t in found["eventTypes"]] == found["subscribedEventTypes"]

    listed = await api.gql(
        "{ webhookDeliveries { items { payload message { type kind data { test } workspaceId } } } }"
    )
    delivery = listed["data"]["webhookDeliveries"]["items"][0]
    assert delivery["message"]["type"] == delivery["payload"]["type"]
    assert delivery["message"]["data"]["test"] is True


async def test_plain_strings_as_enums(api: Api) -> None:
    await load(api, "org-a", [record(status="draft"), record(title="Final one")])
    body = await api.gql("{ legacyReports { items { status reportStatus } } }")
    items = body["data"]["legacyReports"]["items"]
    assert sorted((i["status"], i["reportStatus"]) for i in items) == [("draft", "DRAFT"), ("final", "FINAL")]
    profiles = (await api.gql("{ methodologyProfiles { code boundary emissionBoundary } }"))["data"]
    pairs = {p["code"]: (p["boundary"], p["emissionBoundary"]) for p in profiles["methodologyProfiles"]}
    assert pairs == {"iso14083-wtw": ("WTW", "WTW"), "iso14083-ttw": ("TTW", "TTW")}


def test_enum_lists_are_non_null() -> None:
    field = schema._schema.type_map["WebhookEndpoint"].fields["subscribedEventTypes"]  # type: ignore[union-attr]
    assert isinstance(field.type, GraphQLNonNull) and isinstance(field.type.of_type, GraphQLList)
