"""The event log (DESIGN.md §13, docs/events.md): a full workflow writes its events in order and
without gaps, each valid against its documented schema and carrying its request's id and key;
REST and GraphQL read the same log; an organisation sees only its own; refused requests write
nothing; concurrent writers are numbered 1..n; the audit trail artifact is read from the log."""

from __future__ import annotations

import asyncio
import base64
import csv
import functools
import hashlib
import io
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from evidence_gateway.core import checkpoints
from evidence_gateway.core.events import EventType
from evidence_gateway.resolvers.legacy import import_legacy_reports
from evidence_gateway.webhooks.dispatcher import Dispatcher
from tests.conftest import Api, create_workspace, gql_code
from tests.test_packs import ROWS
from tests.waiting import eventually

DOC = Path(__file__).resolve().parents[1] / "docs" / "events.md"
FORMATS = Draft202012Validator.FORMAT_CHECKER
ORG_A = "org-a"  # the organisation of the `api` fixture's key (tests/conftest.py)

WS_CREATED = EventType.workspace_created.value
WS_MOVED = EventType.workspace_status_changed.value
IMPORTED = EventType.import_registered.value
CALCULATED = EventType.calculation_completed.value
CALC_FAILED = EventType.calculation_failed.value
GENERATED = EventType.pack_generated.value
PACK_FAILED = EventType.pack_failed.value
PACK_MOVED = EventType.pack_status_changed.value
EVIDENCE = EventType.evidence_item_created.value
LEGACY = EventType.legacy_report_imported.value
EP_CREATED = EventType.webhook_endpoint_created.value
EP_UPDATED = EventType.webhook_endpoint_updated.value
EP_ROTATED = EventType.webhook_endpoint_secret_rotated.value
EP_DISABLED = EventType.webhook_endpoint_disabled.value
EP_DELETED = EventType.webhook_endpoint_deleted.value
KEY_CREATED = EventType.api_key_created.value
KEY_REVOKED = EventType.api_key_revoked.value
RECIPIENT_CREATED = EventType.data_recipient_created.value
RECIPIENT_REVOKED = EventType.data_recipient_revoked.value
RECIPIENT_HOST = EventType.data_recipient_host_changed.value
PUBLISHED = EventType.publication_created.value
WITHDRAWN = EventType.publication_withdrawn.value

# GraphQL field -> REST field of an event.
GQL_NAMES = {
    "id": "id", "sequence": "sequence", "cursor": "cursor", "type": "type", "actor": "actor", "requestId": "request_id",
    "subjectType": "subject_type", "subjectId": "subject_id", "workspaceId": "workspace_id", "data": "data",
}  # fmt: skip
EVENTS_QUERY = """
query ($after: String, $first: Int!) {
  events(after: $after, first: $first) {
    items { id sequence cursor type occurredAt actor requestId subjectType subjectId workspaceId data }
    nextCursor
    hasMore
  }
}"""


# ---- the catalogue ----------------------------------------------------------------------------


@functools.cache
def documented_schemas() -> dict[str, dict[str, Any]]:
    """docs/events.md: each ``### `type` `` (and ``### Envelope``) section and its one json block."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            current = sections.setdefault(line.removeprefix("### ").strip().strip("`"), [])
        elif line.startswith(("# ", "## ")):
            current = None
        elif current is not None:
            current.append(line)
    schemas = {}
    for name, lines in sections.items():
        blocks = re.findall(r"^```json\n(.*?)^```$", "\n".join(lines) + "\n", flags=re.M | re.S)
        assert len(blocks) == 1, f"docs/events.md section {name!r} needs exactly one json block"
        schema = json.loads(blocks[0])
        Draft202012Validator.check_schema(schema)
        schemas[name] = schema
    return schemas


def assert_documented(event: dict[str, Any]) -> None:
    """The envelope and the ``data`` of an event validate against docs/events.md."""
    schemas = documented_schemas()
    assert event["type"] in schemas, f"{event['type']} has no section in docs/events.md"
    for name, instance in (("Envelope", event), (event["type"], event["data"])):
        errors = Draft202012Validator(schemas[name], format_checker=FORMATS).iter_errors(instance)
        problems = sorted(f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors)
        assert not problems, f"event {event['sequence']} ({event['type']}) against {name!r}: {problems}"


def test_the_catalogue_has_one_valid_schema_per_event_type() -> None:
    assert set(documented_schemas()) == {"Envelope"} | {t.value for t in EventType}
    envelope = documented_schemas()["Envelope"]
    assert envelope["properties"]["type"]["enum"] == [t.value for t in EventType]


# ---- reading the log --------------------------------------------------------------------------


async def read_log(api: Api, *, limit: int = 7, key: str | None = "default") -> list[dict[str, Any]]:
    """Every event over REST, ``limit`` at a time, checking the cursor contract on the way."""
    events: list[dict[str, Any]] = []
    after = None
    while True:
        params = {"limit": limit, **({"after": after} if after else {})}
        resp = await api.get("/api/v2/events", params=params, key=key)
        assert resp.status_code == 200, resp.text
        page, pagination = resp.json()["data"], resp.json()["pagination"]
        events += page
        assert pagination["next_cursor"] == (page[-1]["cursor"] if page else after)
        if not pagination["has_more"]:
            return events
        assert len(page) == limit
        after = pagination["next_cursor"]


async def read_log_gql(api: Api, *, first: int = 5, key: str | None = "default") -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = None
    while True:
        body = await api.gql(EVENTS_QUERY, {"after": after, "first": first}, key=key)
        assert "errors" not in body, body
        page = body["data"]["events"]
        events += page["items"]
        if not page["hasMore"]:
            return events
        after = page["nextCursor"]


def cursor_text(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


# ---- a full workflow --------------------------------------------------------------------------


@contextmanager
def crash_at(checkpoint: str) -> Iterator[None]:
    """Long work raises at ``checkpoint``, as a bug in rendering or computing would."""

    async def crash() -> None:
        raise RuntimeError(f"crashed at {checkpoint}")

    remove = checkpoints.install(checkpoint, crash)
    try:
        yield
    finally:
        remove()


@dataclass
class Flow:
    """Requests with their X-Request-ID and the event types each must append, in order."""

    api: Api
    steps: list[tuple[str | None, list[str]]] = field(default_factory=list)
    answers: dict[str, httpx.Response] = field(default_factory=dict)

    async def post(
        self, rid: str, path: str, body: Any = None, *, emits: list[str], status: int = 201, method: str = "POST"
    ) -> Any:
        """The answer's ``data``; asserts the status and that X-Request-ID is echoed."""
        resp = await self.api.http.request(
            method, path, json=body, headers={"X-Request-ID": rid, **self.api._headers("default")}
        )
        assert resp.status_code == status, resp.text
        assert resp.headers["X-Request-ID"] == rid
        self.steps.append((rid, emits))
        self.answers[rid] = resp
        return resp.json().get("data") if resp.content else None

    async def gql(self, rid: str, query: str, variables: dict[str, Any], *, emits: list[str]) -> Any:
        """The GraphQL answer's ``data``; asserts it has no errors."""
        resp = await self.api.http.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"X-Request-ID": rid, **self.api._headers("default")},
        )
        assert resp.status_code == 200 and "errors" not in resp.json(), resp.text
        self.steps.append((rid, emits))
        self.answers[rid] = resp
        return resp.json()["data"]

    def data(self, rid: str) -> Any:
        return self.answers[rid].json()["data"]

    @property
    def expected(self) -> list[tuple[str | None, str]]:
        return [(rid, type_) for rid, types in self.steps for type_ in types]


LEGACY_RECORDS = [
    {"id": "6f1d7a52-8a3b-4c61-9d1e-2b7c0f4e9a10", "title": "FY2025 freight emissions",
     "reporting_period_start": "2025-01-01", "reporting_period_end": "2025-12-31", "total_co2e_kg": 48210.5,
     "shipment_count": 312},
    {"title": "FY2024 draft", "status": "draft", "total_co2e_kg": 51000},
]  # fmt: skip


async def full_flow(api: Api) -> Flow:
    """Every event type: workspace, two imports, a crashed and a completed calculation, a crashed
    pack, v2 published, an evidence item, v3 rejected, v4 archiving v3, and a legacy import."""
    flow = Flow(api)
    period = {"reporting_period_start": "2026-01-01", "reporting_period_end": "2026-03-31"}
    ws = await flow.post("create-ws", "/api/v2/workspaces", {"name": "Q1 freight", **period}, emits=[WS_CREATED])
    w = f"/api/v2/workspaces/{ws['id']}"
    first = {"source_row_count": 3, "source_filename": "q1-road.csv", "source_file_type": "csv", "shipments": ROWS[:3]}
    await flow.post("import-1", f"{w}/imports", first, emits=[IMPORTED, WS_MOVED])
    second = {"source_row_count": 1, "source_filename": "q1-air.csv", "source_system": "tms", "shipments": ROWS[3:]}
    await flow.post("import-2", f"{w}/imports", second, emits=[IMPORTED])
    with crash_at(checkpoints.CALCULATION_STARTED):
        await flow.post("calculate-crash", f"{w}/calculate", emits=[CALC_FAILED], status=500)
    await flow.post("calculate", f"{w}/calculate", emits=[CALCULATED, WS_MOVED], status=200)
    with crash_at(checkpoints.PACK_ALLOCATED):
        await flow.post("pack-crash", f"{w}/packs", emits=[PACK_FAILED], status=500)

    v2 = await flow.post("pack-v2", f"{w}/packs", emits=[GENERATED, WS_MOVED])
    approvals = f"/api/v2/packs/{v2['id']}/approvals"
    await flow.post("request-v2", approvals, {"action_type": "requested"}, emits=[PACK_MOVED])
    await flow.post("approve-v2", approvals, {"action_type": "approved", "comment": "ok"}, emits=[PACK_MOVED, WS_MOVED])
    await flow.post("publish-v2", approvals, {"action_type": "published"}, emits=[PACK_MOVED, WS_MOVED])
    evidence = {
        "evidence_type": "fuel_receipt", "title": "Diesel March", "file_name": "receipt-0317.pdf",
        "file_url": "https://files.example.com/0317.pdf", "file_sha256": "ab" * 32, "issue_date": "2026-03-17",
        "workspace_id": ws["id"],
    }  # fmt: skip
    await flow.post("evidence", "/api/v2/evidence-items", evidence, emits=[EVIDENCE])

    v3 = await flow.post("pack-v3", f"{w}/packs", emits=[GENERATED, WS_MOVED])
    approvals = f"/api/v2/packs/{v3['id']}/approvals"
    await flow.post("request-v3", approvals, {"action_type": "requested"}, emits=[PACK_MOVED])
    await flow.post("reject-v3", approvals, {"action_type": "rejected", "comment": "wrong period"}, emits=[PACK_MOVED])
    # v3 is back to draft: the next version archives it (reason superseded); v2 stays published.
    await flow.post("pack-v4", f"{w}/packs", emits=[GENERATED, PACK_MOVED])

    app = api.http._transport.app  # type: ignore[attr-defined]
    await import_legacy_reports(app.state.db, ORG_A, LEGACY_RECORDS)  # the CLI's `legacy import`
    flow.steps.append((None, [LEGACY, LEGACY]))
    await endpoint_lifecycle(flow, app)
    made = await flow.gql(
        "key-create",
        "mutation { createApiKey(input: {scope: READ}) { key apiKey { id } } }",
        {},
        emits=[KEY_CREATED],
    )
    revoke = "mutation($id: UUID!) { revokeApiKey(id: $id) { id revokedAt } }"
    await flow.gql("key-revoke", revoke, {"id": made["createApiKey"]["apiKey"]["id"]}, emits=[KEY_REVOKED])
    # Sharing the published pack with a customer (docs/ileap.md), then taking it back.
    customer = await flow.post("recipient-create", "/api/sharing/recipients", {"name": "Customer"},
                               emits=[RECIPIENT_CREATED])  # fmt: skip
    shared = {"recipient_id": customer["id"], "pack_id": v2["id"]}
    publication = await flow.post("publish", "/api/sharing/publications", shared, emits=[PUBLISHED])
    await flow.post(
        "withdraw", f"/api/sharing/publications/{publication['id']}/withdraw", emits=[WITHDRAWN], status=200
    )
    # Where its requests are answered: set, cleared, set again (the revocation below carries it).
    host = f"/api/sharing/recipients/{customer['id']}/host"
    answers_at = {"url": "http://127.0.0.1:9/pact", "client_id": "owner", "client_secret": "s3cret-at-their-host"}
    await flow.post("host-set", host, answers_at, emits=[RECIPIENT_HOST], status=200, method="PUT")
    await flow.post("host-clear", host, emits=[RECIPIENT_HOST], status=200, method="DELETE")
    await flow.post("host-set-again", host, answers_at, emits=[RECIPIENT_HOST], status=200, method="PUT")
    await flow.post("recipient-revoke", f"/api/sharing/recipients/{customer['id']}/revoke", emits=[RECIPIENT_REVOKED],
                    status=200)  # fmt: skip
    return flow


async def _disabled(api: Api) -> bool:
    return any(e["type"] == EP_DISABLED for e in await read_log(api, limit=200))


async def endpoint_lifecycle(flow: Flow, app: Any) -> None:
    """An endpoint nobody answers at: registered, changed, rotated, disabled by the dispatcher
    once its attempts have failed for longer than allowed (here: at once), deleted."""
    dead = {"url": "http://127.0.0.1:9/gone", "event_types": [EP_UPDATED, EP_ROTATED]}
    endpoint = await flow.post("endpoint-create", "/api/v2/webhook-endpoints", dead, emits=[EP_CREATED])
    path = f"/api/v2/webhook-endpoints/{endpoint['id']}"
    await flow.post(
        "endpoint-update", path, {"description": "nobody home"}, emits=[EP_UPDATED], status=200, method="PATCH"
    )
    await flow.post("endpoint-rotate", f"{path}/rotate-secret", emits=[EP_ROTATED], status=200)
    # Its two events fail: the first marks it failing, the second (past the limit) disables it.
    settings = app.state.settings.model_copy(
        update={"webhook_disable_after_seconds": 0, "webhook_retry_schedule": "0", "webhook_max_in_flight": 1}
    )
    dispatcher = Dispatcher(app.state.db, settings)
    await dispatcher.start()
    try:
        await eventually(lambda: _disabled(flow.api), "the dispatcher to disable the dead endpoint", within=20)
    finally:
        await dispatcher.stop(0)
    flow.steps.append((None, [EP_DISABLED]))
    await flow.post("endpoint-delete", path, emits=[EP_DELETED], status=204, method="DELETE")


@pytest.fixture
async def flow(api: Api) -> Flow:
    return await full_flow(api)


def by_request(events: list[dict[str, Any]], rid: str | None) -> list[dict[str, Any]]:
    return [e for e in events if e["request_id"] == rid]


async def test_a_full_workflow_writes_every_documented_event_in_order(api: Api, flow: Flow) -> None:
    events = await read_log(api, limit=7)

    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert [(e["request_id"], e["type"]) for e in events] == flow.expected
    for event in events:
        assert_documented(event)
    assert {e["type"] for e in events} == set(documented_schemas()) - {"Envelope"}, "a documented type never ran"
    # One transaction, one time: the events of a request share occurred_at.
    for rid, _types in flow.steps:
        if rid is not None:
            assert len({e["occurred_at"] for e in events if e["request_id"] == rid}) == 1

    # actor: the key of every request (approvals show its id); null for the command line.
    approval = by_request(events, "approve-v2")[0]["data"]["approval_action_id"]
    key_id = (await api.get(f"/api/v2/approvals/{approval}")).json()["data"]["api_key_id"]
    assert {e["actor"] for e in events if e["request_id"] is not None} == {key_id}
    assert {(e["actor"], e["request_id"], e["workspace_id"]) for e in by_request(events, None)} == {(None, None, None)}


async def test_event_data_is_the_resource_as_rest_renders_it(api: Api, flow: Flow) -> None:
    events = await read_log(api, limit=50)

    def only(rid: str, type_: str) -> dict[str, Any]:
        [event] = [e for e in by_request(events, rid) if e["type"] == type_]
        return event

    ws = flow.data("create-ws")
    assert only("create-ws", WS_CREATED)["data"] == ws
    for n, rid in enumerate(("import-1", "import-2"), start=1):
        event = only(rid, IMPORTED)
        assert event["data"] == {**flow.data(rid), "data_version": n}
        assert (event["subject_type"], event["subject_id"]) == ("import_batch", flow.data(rid)["id"])
    calculated = flow.data("calculate")
    assert only("calculate", CALCULATED)["data"] == {
        **calculated["calculation_run"],
        "quality_assessment": calculated["quality_assessment"],
    }
    for rid in ("pack-v2", "pack-v3", "pack-v4"):
        assert only(rid, GENERATED)["data"] == {**flow.data(rid), "artifact_count": 9}
    assert only("evidence", EVIDENCE)["data"] == flow.data("evidence")
    # Endpoints belong to the organisation, not to a workspace; their secret is never in an event.
    created = only("endpoint-create", EP_CREATED)["data"]
    assert created == {k: v for k, v in flow.data("endpoint-create").items() if k not in ("secret", "secret_withheld")}
    assert only("endpoint-update", EP_UPDATED)["data"] == flow.data("endpoint-update")
    assert not any("secret" in e["data"] for e in events if e["subject_type"] == "webhook_endpoint")
    disabled = [e for e in events if e["type"] == EP_DISABLED]
    assert [e["data"]["status"] for e in disabled] == ["disabled"]
    # A key's events say which key and what it may do; never the key or its hash.
    made = flow.data("key-create")["createApiKey"]
    key_event = only("key-create", KEY_CREATED)
    assert key_event["subject_id"] == key_event["data"]["id"] == made["apiKey"]["id"]
    assert key_event["data"]["display_prefix"] == made["key"][:10] and key_event["data"]["scope"] == "read"
    revoked = only("key-revoke", KEY_REVOKED)["data"]
    assert revoked["revoked_at"] == flow.data("key-revoke")["revokeApiKey"]["revokedAt"].replace("+00:00", "Z")
    log_text = json.dumps(events)
    assert made["key"] not in log_text and hashlib.sha256(made["key"].encode()).hexdigest() not in log_text
    # A recipient's events name its public client id; never its secret or the secret's hash.
    customer = flow.data("recipient-create")
    assert only("recipient-create", RECIPIENT_CREATED)["data"] == {
        k: v for k, v in customer.items() if k not in ("client_secret", "revoked")
    }
    secret = customer["client_secret"]
    assert secret not in log_text and hashlib.sha256(secret.encode()).hexdigest() not in log_text
    # Its host's events name the URL and client id used there; never the secret held for it.
    assert only("host-set", RECIPIENT_HOST)["data"] == {
        k: v for k, v in flow.data("host-set").items() if k != "revoked"
    }
    assert only("host-clear", RECIPIENT_HOST)["data"]["host"] is None
    assert "s3cret-at-their-host" not in log_text
    assert only("withdraw", WITHDRAWN)["data"]["withdrawn_at"] == flow.data("withdraw")["withdrawn_at"]
    org_wide = (LEGACY, EP_CREATED, EP_UPDATED, EP_ROTATED, EP_DISABLED, EP_DELETED, KEY_CREATED, KEY_REVOKED)
    org_wide += (RECIPIENT_CREATED, RECIPIENT_REVOKED, RECIPIENT_HOST, PUBLISHED, WITHDRAWN)
    assert all(e["workspace_id"] == ws["id"] for e in events if e["type"] not in org_wide)

    # A crash after the work started is recorded: the run and the pack the 500 names.
    crashed_run = flow.answers["calculate-crash"].json()["details"]["run_id"]
    failed = only("calculate-crash", CALC_FAILED)
    assert failed["subject_id"] == crashed_run and failed["data"]["reason"] == "error"
    run = (await api.get(f"/api/v2/calculation-runs/{crashed_run}")).json()["data"]
    assert {**failed["data"], "quality_assessment": None} == {**run, "reason": "error"}
    crashed_pack = flow.answers["pack-crash"].json()["details"]["pack_id"]
    failed = only("pack-crash", PACK_FAILED)
    data = failed["data"]
    assert failed["subject_id"] == crashed_pack and "crashed at" in data["error"]
    assert (data["status_before"], data["status_after"], data["reason"]) == ("draft", "failed", "error")

    # Approvals: the event names the recorded action, which says the same.
    for rid in ("request-v2", "approve-v2", "publish-v2", "request-v3", "reject-v3"):
        event = only(rid, PACK_MOVED)
        location = flow.answers[rid].headers["Location"]
        assert location.endswith(f"/api/v2/approvals/{event['data']['approval_action_id']}")
        action = (await api.get(location)).json()["data"]
        answer = flow.data(rid)
        assert (answer["statusBefore"], answer["statusAfter"]) == (action["status_before"], action["status_after"])
        for key in ("action_type", "comment", "status_before", "status_after"):
            assert event["data"][key] == action[key]
        assert event["data"]["status"] == action["status_after"] and action["api_key_id"] == event["actor"]
    archived = only("pack-v4", PACK_MOVED)
    assert archived["subject_id"] == flow.data("pack-v3")["id"]
    assert (archived["data"]["status_before"], archived["data"]["status_after"]) == ("draft", "archived")

    # The legacy import: one event per record, as /v1 renders the report (without its links).
    for event in (e for e in events if e["type"] == LEGACY):
        report = (await api.get(f"/api/v1/reports/{event['subject_id']}")).json()["data"]
        assert {**event["data"], "successor": report["successor"]} == report


async def test_status_changes_chain_and_end_where_the_resources_are(api: Api, flow: Flow) -> None:
    """Each status_before is the status the previous event of that subject left it in."""
    events = await read_log(api, limit=50)
    last: dict[str, str] = {}
    for event in events:
        data, subject = event["data"], event["subject_id"]
        if "status_before" in data:
            assert data["status_after"] == data["status"]
            if subject in last:
                assert data["status_before"] == last[subject], event
        if "status" in data:
            last[subject] = data["status"]
    ws = flow.data("create-ws")["id"]
    assert last[ws] == (await api.get(f"/api/v2/workspaces/{ws}")).json()["data"]["status"] == "review_needed"
    versions = [flow.data(rid)["id"] for rid in ("pack-v2", "pack-v3", "pack-v4")]
    for pack in versions:
        assert last[pack] == (await api.get(f"/api/v2/packs/{pack}")).json()["data"]["status"]
    assert [last[pack] for pack in versions] == ["published", "archived", "generated"]


async def test_pack_status_changes_show_the_links_rest_shows(api: Api, flow: Flow) -> None:
    """An event carries the resource as REST renders it: a moved pack keeps its artifacts' links."""
    for event in await read_log(api, limit=50):
        if event["type"] == PACK_MOVED:
            pack = (await api.get(f"/api/v2/packs/{event['subject_id']}")).json()["data"]
            urls = {k: v for k, v in pack.items() if k.endswith("_url")}
            assert {k: event["data"][k] for k in urls} == urls, event["request_id"]


async def test_graphql_reads_the_same_log(api: Api, flow: Flow) -> None:
    rest = await read_log(api, limit=200)
    gql = await read_log_gql(api, first=5)
    assert [e["id"] for e in gql] == [e["id"] for e in rest]
    for g, r in zip(gql, rest, strict=True):
        assert {name: g[name] for name in GQL_NAMES} == {name: r[rest_name] for name, rest_name in GQL_NAMES.items()}
        assert g["occurredAt"] == r["occurred_at"]  # one timestamp format (Z) on both transports
    # The cursors are the same: one read by REST continues over GraphQL.
    middle = rest[9]["cursor"]
    body = await api.gql(EVENTS_QUERY, {"after": middle, "first": 2})
    assert [e["id"] for e in body["data"]["events"]["items"]] == [e["id"] for e in rest[10:12]]


async def test_the_audit_trail_lists_the_log(api: Api, flow: Flow) -> None:
    """v4's audit trail: the workspace's imports, runs, reviewed versions and approvals, in log
    order, up to v4's allocation (so v3's archiving, v4 itself and evidence are not in it)."""
    events = await read_log(api, limit=50)
    ws = flow.data("create-ws")["id"]
    reviewed = {flow.data("pack-v2")["id"], flow.data("pack-v3")["id"]}
    allocated_after = by_request(events, "reject-v3")[-1]["sequence"]
    audited = [
        e
        for e in events
        if e["workspace_id"] == ws
        and e["sequence"] <= allocated_after
        and (
            e["type"] in (IMPORTED, CALCULATED, CALC_FAILED)
            or (e["type"] == GENERATED and e["subject_id"] in reviewed)
            or (e["type"] == PACK_MOVED and "action_type" in e["data"])
        )
    ]
    v4 = flow.data("pack-v4")["id"]
    artifacts = (await api.get(f"/api/v2/packs/{v4}/artifacts")).json()["data"]
    url = next(a["signed_download_url"] for a in artifacts if a["artifact_type"] == "audit_trail")
    download = await api.http.get(url)
    assert download.status_code == 200
    rows = list(csv.DictReader(io.StringIO(download.text)))

    assert [r["event"] for r in rows] == [
        "import_registered", "import_registered", "calculation_failed", "calculation_completed",
        "pack_generated", "approval_requested", "approval_approved", "approval_published",
        "pack_generated", "approval_requested", "approval_rejected",
    ]  # fmt: skip
    assert [(r["subject_type"], r["subject_id"], r["actor_api_key_id"]) for r in rows] == [
        (e["subject_type"], e["subject_id"], e["actor"]) for e in audited
    ]
    assert [datetime.fromisoformat(r["occurred_at"]) for r in rows] == [
        datetime.fromisoformat(e["occurred_at"]) for e in audited
    ]


# ---- organisations, refusals, paging ----------------------------------------------------------


async def test_an_organisation_reads_only_its_own_log(api: Api, api_b: Api) -> None:
    a = await create_workspace(api)
    assert (await api.post(f"/api/v2/workspaces/{a['id']}/imports", {"source_row_count": 0})).status_code == 201
    b = await create_workspace(api_b)

    mine = await read_log(api_b)
    assert [(e["sequence"], e["type"], e["subject_id"]) for e in mine] == [(1, WS_CREATED, b["id"])]
    assert [e["id"] for e in await read_log_gql(api_b)] == [e["id"] for e in mine]
    theirs = await read_log(api)
    assert [e["sequence"] for e in theirs] == [1, 2, 3] and {e["subject_id"] for e in theirs}.isdisjoint({b["id"]})
    # A cursor is a position in the reader's own log, not a way into another's.
    after_a = theirs[0]["cursor"]
    assert (await api_b.get("/api/v2/events", params={"after": after_a})).json()["data"] == []


async def test_refused_requests_write_no_event(api: Api) -> None:
    ws = await create_workspace(api)
    w = f"/api/v2/workspaces/{ws['id']}"
    before = await read_log(api)
    refused = [
        ("/api/v2/workspaces", {"name": ""}, 422),
        ("/api/v2/workspaces", {"name": "x", "reporting_period_start": "2026-02-01",
                                "reporting_period_end": "2026-01-01"}, 422),
        (f"{w}/imports", {"source_row_count": -1}, 422),
        (f"{w}/imports", {"source_row_count": 1, "shipments": [{"mode": "spaceship"}]}, 422),
        (f"{w}/calculate", None, 409),  # no imports and no legacy report for the period
        (f"{w}/packs", None, 409),  # no completed calculation
        ("/api/v2/evidence-items", {"evidence_type": "fuel_receipt", "title": "t", "file_name": "f"}, 422),
        ("/api/v2/workspaces/00000000-0000-4000-8000-000000000000/imports", {"source_row_count": 1}, 404),
    ]  # fmt: skip
    for path, body, status in refused:
        resp = await api.post(path, body, headers={"X-Request-ID": "refused"})
        assert resp.status_code == status, (path, resp.text)
    assert await read_log(api) == before

    # An approval the pack's state does not allow (409) or that does not exist (422).
    body = {"source_row_count": 1, "shipments": ROWS[:1]}
    assert (await api.post(f"{w}/imports", body)).status_code == 201
    assert (await api.post(f"{w}/calculate")).status_code == 200
    pack = (await api.post(f"{w}/packs")).json()["data"]
    before = await read_log(api)
    for action, status in (("published", 409), ("approved", 409), ("rejected", 409), ("signed", 422)):
        resp = await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": action})
        assert resp.status_code == status, resp.text
    assert await read_log(api) == before
    # The numbers were not used up: the next change takes the next one.
    await create_workspace(api)
    assert [e["sequence"] for e in await read_log(api)] == list(range(1, len(before) + 2))


async def test_bad_cursors_and_page_sizes_are_refused(api: Api) -> None:
    await create_workspace(api)
    for params, name in (
        ({"after": "garbage"}, "after"),
        ({"after": cursor_text("evs1:x")}, "after"),
        ({"after": cursor_text("evs1:-1")}, "after"),
        ({"after": cursor_text("other:1")}, "after"),
        ({"limit": "0"}, "limit"),
        ({"limit": "201"}, "limit"),
        ({"limit": "ten"}, "limit"),
    ):
        resp = await api.get("/api/v2/events", params=params)
        assert resp.status_code == 422, (params, resp.text)
        details = resp.json()["details"]
        assert details["code"] == "invalid_input" and list(details["fields"]) == [name], (params, details)
    for variables, name in (
        ({"first": 0}, "first"),
        ({"first": 201}, "first"),
        ({"after": "junk", "first": 5}, "after"),
    ):
        body = await api.gql(EVENTS_QUERY, {"after": None, **variables})
        assert gql_code(body) == "BAD_USER_INPUT", body
        assert list(body["errors"][0]["extensions"]["fields"]) == [name], body
    for limit in ("1", "200"):
        assert (await api.get("/api/v2/events", params={"limit": limit})).status_code == 200


async def test_a_reader_at_the_end_keeps_its_cursor_and_gets_only_what_follows(api: Api) -> None:
    empty = (await api.get("/api/v2/events")).json()
    assert empty == {"data": [], "pagination": {"next_cursor": None, "has_more": False}}
    await create_workspace(api)
    [first] = (await api.get("/api/v2/events")).json()["data"]
    at_end = (await api.get("/api/v2/events", params={"after": first["cursor"]})).json()
    assert at_end == {"data": [], "pagination": {"next_cursor": first["cursor"], "has_more": False}}
    later = await create_workspace(api)
    [second] = (await api.get("/api/v2/events", params={"after": first["cursor"]})).json()["data"]
    assert (second["sequence"], second["subject_id"]) == (2, later["id"])


async def test_request_ids_are_echoed_and_recorded_over_both_transports(api: Api) -> None:
    async def recorded(resource_id: str) -> str:
        [event] = [e for e in await read_log(api) if e["subject_id"] == resource_id]
        return str(event["request_id"])

    # Not given, or not sane: the server makes one up, answers with it and records it.
    for sent in (None, "not sane: spaces", "x" * 201):
        headers = {"X-Request-ID": sent} if sent is not None else {}
        resp = await api.post("/api/v2/workspaces", {"name": "w"}, headers=headers)
        assert resp.status_code == 201
        assert re.fullmatch(r"[0-9a-f]{32}", resp.headers["X-Request-ID"])
        assert await recorded(resp.json()["data"]["id"]) == resp.headers["X-Request-ID"]
    mutation = {"query": 'mutation { createWorkspace(input: {name: "g"}) { id } }'}
    headers = {"Authorization": f"Bearer {api.key}", "X-Request-ID": "gql-create/1"}
    resp = await api.http.post("/graphql", json=mutation, headers=headers)
    assert resp.headers["X-Request-ID"] == "gql-create/1"
    assert await recorded(resp.json()["data"]["createWorkspace"]["id"]) == "gql-create/1"


async def test_concurrent_writes_are_numbered_one_to_n(api: Api) -> None:
    answers = await asyncio.gather(
        *(api.post("/api/v2/workspaces", {"name": f"ws {i}"}, headers={"X-Request-ID": f"c-{i}"}) for i in range(10))
    )
    assert [r.status_code for r in answers] == [201] * 10
    events = await read_log(api, limit=3)
    assert [e["sequence"] for e in events] == list(range(1, 11))
    assert {e["request_id"]: e["subject_id"] for e in events} == {
        f"c-{i}": r.json()["data"]["id"] for i, r in enumerate(answers)
    }
    for event in events:
        assert_documented(event)
