"""Every way to read a resource answers the same record (issue 25, item 4).

For each resource, the REST detail is the reference; its REST list item, the copies other
resources embed (a workspace's latest run, a pack's run and artifacts), the answers of writes
nothing changed since, the data of its latest event, GraphQL's typed query, ``node(id)``,
connection edges and nodes, page items, nested fields and subscriptions must show every one of its
fields with the same value, spelled the same: timestamps to the same digit, numbers as the same
JSON, nulls as nulls, one REST model's keys in one order. Only the documented naming differences
are normalised (snake_case REST, camelCase GraphQL; lowercase REST enum values, SCREAMING_SNAKE
GraphQL ones). List pages walked one at a time, by page or by cursor either way, give the items of
one big page; a persisted document answers what the document answers; ``keys list`` shows what
``apiKeys`` does. And the same script answers the same on SQLite and PostgreSQL, but for the
values of ids and instants, whose formats must match.
"""

from __future__ import annotations

from typing import Any

import pytest

from evidence_gateway.settings import Settings
from tests.conftest import Api
from tests.parity_lists import cli_problems, page_problems, persisted_problems, subscribed
from tests.parity_queries import BY_ID, LISTS, NODE, WORKSPACE_TREE, get_json, gql_data
from tests.parity_scenario import Refs, scenario
from tests.parity_support import (
    Anonymiser,
    Views,
    database_urls,
    first_difference,
    from_graphql,
    from_rest,
    running,
    unsigned,
)

# Fields the REST record has that a GraphQL path leaves out on purpose (docs/graphql-schema.md):
# the viewer is the organisation (no org_id per attempt); REST links the iLEAP file from the pack
# with its hash, GraphQL lists it among the artifacts; REST nests a legacy report's successor.
GQL_ABSENT = {
    "webhook_delivery": {"org_id"},
    "report_pack": {"ileap_shipment_footprints_sha256"},
}
# The webhook test's outcome is the attempt as the caller needs it, not the stored record.
ANSWER_ABSENT = {
    "rest webhook test answer": {
        "org_id",
        "api_key_id",
        "created_at",
        "endpoint_id",
        "event_id",
        "attempt",
        "duration_ms",
        # A test to a bare URL has no message to be owed: its state is the delivery log's business.
        "message_status",
        "next_attempt_at",
    },  # fmt: skip
    "rest calculate answer": {"report_pack_id"},
    # An API key event says which key and what it may do (docs/events.md, api_key.created).
    "rest event data (api_key": {"name", "last_used_at"},
}
# An event's subject_type -> the resource its data renders.
SUBJECTS = {
    "workspace": "workspace", "import_batch": "import_batch", "calculation_run": "calculation_run",
    "report_pack": "report_pack", "evidence_item": "evidence_item", "webhook_endpoint": "webhook_endpoint",
    "api_key": "api_key",
}  # fmt: skip
EMPTY_RELATIONS: dict[str, Any] = {
    "latestCalculationRun": None, "latestQualityAssessment": None, "latestPack": None, "calculationRuns": [],
    "calculationRunsConnection": {"edges": [], "nodes": []}, "packs": [], "packsConnection": {"edges": [], "nodes": []},
    "evidenceItems": [], "imports": [],
}  # fmt: skip
WORKSPACE_NESTED = ("latest_calculation_run", "latest_pack", "latest_quality_assessment")
PACK_NESTED = ("calculation_run", "quality_assessment", "artifacts")


def _legacy_rest(record: dict[str, Any]) -> dict[str, Any]:
    """REST nests a legacy report's successor with links; GraphQL gives the two ids."""
    successor = record["successor"]
    return {
        **from_rest(record, ["successor"]),
        "successor_workspace_id": successor["workspace_id"],
        "successor_report_pack_id": successor["report_pack_id"],
    }


async def read_everything(api: Api, refs: Refs) -> tuple[dict[str, Views], list[tuple[str, Any]]]:
    """Every read path of every resource, and every answer in the order it was asked (the
    transcript two databases must agree on)."""
    transcript: list[tuple[str, Any]] = []
    views = {
        name: Views(name, absent={"gql": GQL_ABSENT.get(name, set()), **ANSWER_ABSENT})
        for name in (
            "workspace",
            "import_batch",
            "calculation_run",
            "quality",
            "report_pack",
            "artifact",
            "approval",
            "evidence_item",
            "webhook_endpoint",
            "webhook_delivery",
            "event",
            "legacy_report",
            "methodology",
            "api_key",
        )
    }

    async def rest(path: str, **params: Any) -> Any:
        body = await get_json(api, path, **params)
        transcript.append((path.replace(refs["ws"], "{ws}"), body))
        return body

    async def graphql(name: str, document: str, variables: dict[str, Any] | None = None) -> Any:
        data = await gql_data(api, document, variables)
        transcript.append((name, data))
        return data

    def add(resource: str, path: str, records: Any, rest_nested: tuple[str, ...] = ()) -> None:
        rows = records if isinstance(records, list) else [records]
        shaped = [
            None if r is None else unsigned(from_graphql(r) if path.startswith("gql") else from_rest(r, rest_nested))
            for r in rows
        ]
        views[resource].add(path, shaped)

    # REST: the details first (the reference of each resource), then lists and embedded copies.
    details = {}
    for ws in ("ws", "ws_minimal", "ws_third"):
        detail = details[ws] = (await rest(f"/api/v2/workspaces/{refs[ws]}"))["data"]
        add("workspace", "rest detail", detail, WORKSPACE_NESTED)
        add("calculation_run", "rest workspace.latest_calculation_run", detail["latest_calculation_run"])
        add("report_pack", "rest workspace.latest_pack", detail["latest_pack"])
        add("quality", "rest workspace.latest_quality_assessment", detail["latest_quality_assessment"])
    for batch in ("import", "import_gql"):
        add("import_batch", "rest detail", (await rest(f"/api/v2/imports/{refs[batch]}"))["data"])
    for run in ("run_first", "run"):
        detail = (await rest(f"/api/v2/calculation-runs/{refs[run]}"))["data"]
        add("calculation_run", "rest detail", detail, ("quality_assessment",))
        add("quality", "rest calculation_run.quality_assessment", detail["quality_assessment"])
    add("quality", "rest workspace quality", (await rest(f"/api/v2/workspaces/{refs['ws']}/quality"))["data"])
    for pack in ("pack_first", "pack"):
        detail = (await rest(f"/api/v2/packs/{refs[pack]}"))["data"]
        add("report_pack", "rest detail", detail, PACK_NESTED)
        add("calculation_run", "rest pack.calculation_run", detail["calculation_run"])
        add("quality", "rest pack.quality_assessment", detail["quality_assessment"])
        add("artifact", "rest pack.artifacts", detail["artifacts"])
        add("artifact", "rest pack artifacts", (await rest(f"/api/v2/packs/{refs[pack]}/artifacts"))["data"])
    add("approval", "rest detail", (await rest(f"/api/v2/approvals/{refs['approval']}"))["data"])
    for item in ("item", "item_org", "item_pack"):
        add("evidence_item", "rest detail", (await rest(f"/api/v2/evidence-items/{refs[item]}"))["data"])
    add("evidence_item", "rest list", (await rest("/api/v2/evidence-items", per_page=100))["data"])
    add(
        "evidence_item",
        "rest workspace list",
        (await rest("/api/v2/evidence-items", per_page=100, workspace_id=refs["ws"]))["data"],
    )
    for endpoint in ("endpoint", "endpoint_plain"):
        add("webhook_endpoint", "rest detail", (await rest(f"/api/v2/webhook-endpoints/{refs[endpoint]}"))["data"])
    add("webhook_endpoint", "rest list", (await rest("/api/v2/webhook-endpoints", per_page=100))["data"])
    add("webhook_delivery", "rest list", (await rest("/api/v2/webhooks/deliveries", per_page=100))["data"])
    add(
        "webhook_delivery",
        "rest endpoint deliveries",
        (await rest(f"/api/v2/webhook-endpoints/{refs['endpoint']}/deliveries", per_page=100))["data"],
    )
    log = (await rest("/api/v2/events", limit=200))["data"]
    add("event", "rest log", log)
    add("workspace", "rest list", (await rest("/api/v2/workspaces", per_page=100))["data"])
    for report in ("legacy", "legacy_draft"):
        add("legacy_report", "rest v1 detail", _legacy_rest((await rest(f"/api/v1/reports/{refs[report]}"))["data"]))
    add("legacy_report", "rest v1 list", [_legacy_rest(r) for r in (await rest("/api/v1/reports"))["data"]])
    add("methodology", "rest list", (await rest("/api/v2/methodology-profiles"))["data"])

    # GraphQL: the workspace's tree, the lists, the lookups by id, node(id).
    # A workspace with nothing in it: every relation null or empty, as REST's detail shows it.
    empty = await graphql("empty workspace tree", WORKSPACE_TREE, {"ws": refs["ws_minimal"]})
    add("workspace", "gql workspace", empty["workspace"])
    relations = {key: empty["workspace"][key] for key in EMPTY_RELATIONS}
    assert (relations, empty["qualityAssessment"]) == (EMPTY_RELATIONS, None), relations
    assert [details["ws_minimal"][k] for k in WORKSPACE_NESTED] == [None, None, None], details["ws_minimal"]

    tree = await graphql("workspace tree", WORKSPACE_TREE, {"ws": refs["ws"]})
    ws = tree["workspace"]
    add("workspace", "gql workspace", ws)
    add("calculation_run", "gql workspace.latestCalculationRun", ws["latestCalculationRun"])
    add("quality", "gql latestCalculationRun.qualityAssessment", ws["latestCalculationRun"]["qualityAssessment"])
    add("quality", "gql workspace.latestQualityAssessment", ws["latestQualityAssessment"])
    add("quality", "gql qualityAssessment", tree["qualityAssessment"])
    add("report_pack", "gql workspace.latestPack", ws["latestPack"])
    add("calculation_run", "gql workspace.calculationRuns", ws["calculationRuns"])
    add("quality", "gql calculationRuns.qualityAssessment", [r["qualityAssessment"] for r in ws["calculationRuns"]])
    add(
        "calculation_run",
        "gql calculationRunsConnection.edges",
        [e["node"] for e in ws["calculationRunsConnection"]["edges"]],
    )
    add("calculation_run", "gql calculationRunsConnection.nodes", ws["calculationRunsConnection"]["nodes"])
    add("report_pack", "gql packsConnection.edges", [e["node"] for e in ws["packsConnection"]["edges"]])
    add("report_pack", "gql packsConnection.nodes", ws["packsConnection"]["nodes"])
    add("evidence_item", "gql workspace.evidenceItems", ws["evidenceItems"])
    add("import_batch", "gql workspace.imports", ws["imports"])
    for pack in ws["packs"]:
        add("report_pack", "gql workspace.packs", pack)
        add("calculation_run", "gql pack.calculationRun", pack["calculationRun"])
        add("quality", "gql pack.qualityAssessment", pack["qualityAssessment"])
        add("artifact", "gql pack.artifacts", pack["artifacts"])
        add("approval", "gql pack.approvals", pack["approvals"])
        add("evidence_item", "gql pack.evidenceItems", pack["evidenceItems"])

    lists = {name: (await graphql(name, document))[name] for name, document in LISTS.items()}
    add("workspace", "gql workspaces", lists["workspaces"]["items"])
    add("workspace", "gql workspacesConnection.edges", [e["node"] for e in lists["workspacesConnection"]["edges"]])
    add("workspace", "gql workspacesConnection.nodes", lists["workspacesConnection"]["nodes"])
    add("evidence_item", "gql evidenceItems", lists["evidenceItems"]["items"])
    add(
        "evidence_item",
        "gql evidenceItemsConnection.edges",
        [e["node"] for e in lists["evidenceItemsConnection"]["edges"]],
    )
    add("evidence_item", "gql evidenceItemsConnection.nodes", lists["evidenceItemsConnection"]["nodes"])
    add("webhook_endpoint", "gql webhookEndpoints", lists["webhookEndpoints"]["items"])
    for endpoint in lists["webhookEndpoints"]["items"]:
        add("webhook_delivery", "gql webhookEndpoint.deliveries", endpoint["deliveries"]["items"])
    add("webhook_delivery", "gql webhookDeliveries", lists["webhookDeliveries"]["items"])
    add("event", "gql events", lists["events"]["items"])
    add("event", "gql eventsConnection.edges", [e["node"] for e in lists["eventsConnection"]["edges"]])
    add("event", "gql eventsConnection.nodes", lists["eventsConnection"]["nodes"])
    add("legacy_report", "gql legacyReports", lists["legacyReports"]["items"])
    add("methodology", "gql methodologyProfiles", lists["methodologyProfiles"])
    add("api_key", "gql apiKeys", lists["apiKeys"])

    for endpoint in ("endpoint", "endpoint_plain"):
        found = await graphql(
            "by id",
            BY_ID,
            {
                "pack": refs["pack_first"],
                "item": refs["item_pack"],
                "endpoint": refs[endpoint],
                "legacy": refs["legacy"],
            },
        )
        add("webhook_endpoint", "gql webhookEndpoint", found["webhookEndpoint"])
        add("webhook_delivery", "gql webhookEndpoint(id).deliveries", found["webhookEndpoint"]["deliveries"]["items"])
    add("report_pack", "gql pack", found["pack"])
    add("calculation_run", "gql pack(id).calculationRun", found["pack"]["calculationRun"])
    add("artifact", "gql pack(id).artifacts", found["pack"]["artifacts"])
    add("evidence_item", "gql evidenceItem", found["evidenceItem"])
    add("legacy_report", "gql legacyReport", found["legacyReport"])

    # The answers of writes nothing changed afterwards.
    resource_of = {
        "ws_minimal": "workspace",
        "ws_third": "workspace",
        "import": "import_batch",
        "import_gql": "import_batch",
        "item": "evidence_item",
        "item_org": "evidence_item",
        "endpoint": "webhook_endpoint",
        "endpoint_plain": "webhook_endpoint",
        "delivery": "webhook_delivery",
        "api_key": "api_key",
        "run_first": "calculation_run",
        "quality_first": "quality",
    }
    for role, (path, answer) in refs.answers.items():
        add(resource_of[role], path, answer)
    # An event's data is its resource as REST rendered it then: the same record, for those
    # nothing changed since (docs/events.md), beside the before and after of a status change.
    # Each record's latest event shows it as it is now (nothing here changes a record silently).
    latest = {e["subject_id"]: e for e in log}
    for event in latest.values():
        data = {k: v for k, v in event["data"].items() if k not in ("status_before", "status_after")}
        add(SUBJECTS[event["subject_type"]], f"rest event data ({event['type']})", data)

    events = lists["events"]["items"]
    nodes = [
        ("Workspace", "workspace", refs["ws"]),
        ("Workspace", "workspace", refs["ws_minimal"]),
        ("CalculationRun", "calculation_run", refs["run_first"]),
        ("ReportPack", "report_pack", refs["pack"]),
        ("EvidenceItem", "evidence_item", refs["item"]),
        ("EvidenceItem", "evidence_item", refs["item_org"]),
        ("Event", "event", events[0]["id"]),
        ("Event", "event", events[-1]["id"]),
    ]
    for kind, resource, node_id in nodes:
        node = (await graphql("node", NODE[kind], {"id": node_id}))["node"]
        assert node["__typename"] == kind
        add(resource, "gql node", node)
    return views, transcript


@pytest.fixture
def databases(settings: Settings, request: pytest.FixtureRequest) -> dict[str, str]:
    return database_urls(settings, request)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_every_read_path_and_page_agrees_and_both_databases_answer_alike(
    settings: Settings, databases: dict[str, str]
) -> None:
    transcripts = {}
    for database, url in databases.items():
        async with running(settings.model_copy(update={"database_url": url})) as run:
            refs = await scenario(run)
            views, transcript = await read_everything(run.api, refs)
            log = next(body["data"] for name, body in transcript if name == "/api/v2/events")
            pack, replayed = await subscribed(run, refs["pack"], log)
            views["report_pack"].add("gql subscription pack", [unsigned(from_graphql(pack))])
            views["event"].add("gql subscription events", [from_graphql(e) for e in replayed])
            problems = [p for v in views.values() for p in v.problems()]
            problems += await page_problems(run.api, refs) + await persisted_problems(run.api, refs)
            keys = next(body["apiKeys"] for name, body in transcript if name == "apiKeys")
            problems += await cli_problems(run, keys)
            assert problems == [], f"{database}:\n" + "\n".join(problems)
            anonymise = Anonymiser()
            transcripts[database] = [(name, anonymise(body)) for name, body in transcript]
    if len(transcripts) == 2:
        for (name, on_sqlite), (_, on_postgresql) in zip(transcripts["sqlite"], transcripts["postgresql"], strict=True):
            difference = first_difference(on_sqlite, on_postgresql)
            assert difference is None, f"{name}: SQLite and PostgreSQL differ at {difference}"
