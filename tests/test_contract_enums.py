"""The v2 contract's closed enums, read from the contract itself (docs/evidence-api-v2.md).

Every ``enum a, b, c`` of the contract's resource tables and request bodies is parsed from the
markdown, so these tests follow the contract when it changes. Then:

- the OpenAPI document's schemas for those fields hold exactly the contract's values;
- after a full flow (workspace, import, calculation, pack, approvals, evidence, webhook test,
  registered webhook endpoints and their deliveries, events, legacy reports) every answer of
  every REST route, and every webhook payload a receiver got, is walked: an object that carries
  all the fields of a contract resource is that resource, and each of its enum fields must hold
  one of the contract's values; a field name the contract uses for one enum only is checked
  wherever it appears.

The contract is kept in the repository (docs/evidence-api-v2.md, as integrators received it);
``EVIDENCE_CONTRACT_SPEC`` names another copy to check against.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Route

from evidence_gateway import rest_compat
from evidence_gateway.resolvers.legacy import import_legacy_reports
from evidence_gateway.rest_compat.openapi import document
from evidence_gateway.settings import Settings
from tests.conftest import Api
from tests.waiting import eventually
from tests.webhook_receiver import Receiver, running

ROOT = Path(__file__).resolve().parent.parent
SPEC = ROOT / "docs" / "evidence-api-v2.md"

ENUM = re.compile(r"\benum ([a-z0-9_]+(?:, [a-z0-9_]+)*)")
# "`field` string (required; enum a, b)" and "`field` (enum a, b)" in an endpoint's body line.
BODY_ENUM = re.compile(r"`(\w+)`[^`]*?\((?:required; )?enum ([a-z0-9_]+(?:, [a-z0-9_]+)*)\)")
ENDPOINT = re.compile(r"^\*\*(GET|POST|PUT|PATCH|DELETE) (/\S+)\*\*")
CELL = re.compile(r"(?<!\\)\|")


def spec_path() -> Path:
    return Path(os.environ.get("EVIDENCE_CONTRACT_SPEC") or SPEC)


@dataclass
class Contract:
    # resource -> its field names (as the tables list them)
    fields: dict[str, set[str]] = field(default_factory=dict)
    # resource -> field -> the closed enum
    enums: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    # (METHOD, path under /api) -> body field -> the closed enum
    bodies: dict[tuple[str, str], dict[str, tuple[str, ...]]] = field(default_factory=dict)

    def unique_fields(self) -> dict[str, tuple[str, ...]]:
        """Field names that stand for one enum wherever the contract uses them."""
        seen: dict[str, set[tuple[str, ...]]] = {}
        for enums in (*self.enums.values(), *self.bodies.values()):
            for name, values in enums.items():
                seen.setdefault(name, set()).add(values)
        # A name some resource also uses without an enum is not one enum's everywhere.
        loose = {name for r, names in self.fields.items() for name in names if name not in self.enums.get(r, {})}
        return {name: next(iter(values)) for name, values in seen.items() if len(values) == 1 and name not in loose}


def _cells(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in CELL.split(line.strip())[1:-1]]


def parse_contract(text: str) -> Contract:
    """The resource tables (``## Resources and their fields``) and the endpoints' body lines."""
    contract = Contract()
    section = resource = None
    endpoint: tuple[str, str] | None = None
    pack_status_fields: list[tuple[str, str]] = []
    for line in text.splitlines():
        if line.startswith("## "):
            section, resource, endpoint = line[3:].strip(), None, None
        elif section == "Resources and their fields" and line.startswith("### "):
            resource = line[4:].strip()
        elif resource and line.startswith("|") and not line.startswith("|---"):
            cells = _cells(line)
            if not cells or cells[0] == "Field":
                continue
            names = [n.strip() for n in cells[0].split(",")]
            notes = " ".join(cells[1:])
            contract.fields.setdefault(resource, set()).update(names)
            found = ENUM.search(notes)
            for name in names:
                if found:
                    contract.enums.setdefault(resource, {})[name] = tuple(found.group(1).split(", "))
                elif re.search(r"\bpack status\b", notes):
                    # ApprovalActionResult: "string (pack status before the action)".
                    pack_status_fields.append((resource, name))
        elif section == "Endpoints" and (match := ENDPOINT.match(line)):
            endpoint = (match.group(1), "/api" + match.group(2))
        elif endpoint and line.startswith("- Body"):
            for name, values in BODY_ENUM.findall(line):
                contract.bodies.setdefault(endpoint, {})[name] = tuple(values.split(", "))
    for resource, name in pack_status_fields:
        contract.enums.setdefault(resource, {})[name] = contract.enums["ReportPack"]["status"]
    return contract


@pytest.fixture(scope="module")
def contract() -> Contract:
    parsed = parse_contract(spec_path().read_text(encoding="utf-8"))
    # The parser found what the contract closes (else it silently checks nothing).
    assert {"Workspace", "CalculationRun", "ReportPack", "PackArtifact", "EvidenceItem"} <= set(parsed.enums)
    assert "artifact_type" in parsed.enums["PackArtifact"] and parsed.bodies
    return parsed


# ---- the OpenAPI document ---------------------------------------------------------------------------


def _enum_of(doc: dict[str, Any], schema: dict[str, Any]) -> list[Any]:
    """The values a schema allows, through $ref and a nullable anyOf (null left out)."""
    if "$ref" in schema:
        return _enum_of(doc, doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in schema:
        return [v for branch in schema["anyOf"] if branch.get("type") != "null" for v in _enum_of(doc, branch)]
    assert "enum" in schema, f"not an enum: {schema}"
    return [v for v in schema["enum"] if v is not None]


def test_the_openapi_enums_are_the_contracts(contract: Contract) -> None:
    doc = document()
    schemas = doc["components"]["schemas"]
    checked = 0
    for resource, enums in contract.enums.items():
        # Detail variants inherit the fields (WorkspaceDetail, ReportPackDetail).
        for name in (resource, f"{resource}Detail"):
            if name not in schemas:
                continue
            for field_name, values in enums.items():
                got = _enum_of(doc, schemas[name]["properties"][field_name])
                assert got == list(values), f"{name}.{field_name}: {got} != contract {list(values)}"
                checked += 1
    for (method, path), enums in contract.bodies.items():
        body = doc["paths"][path.removeprefix("/api")][method.lower()]["requestBody"]
        properties = body["content"]["application/json"]["schema"]["properties"]
        for field_name, values in enums.items():
            got = _enum_of(doc, properties[field_name])
            assert got == list(values), f"{method} {path} body {field_name}: {got} != contract {list(values)}"
            checked += 1
    assert checked >= 10


# ---- real answers -----------------------------------------------------------------------------------


@dataclass
class Walker:
    """Checks every JSON value against the contract's enums and notes what it recognised."""

    contract: Contract
    problems: list[str] = field(default_factory=list)
    recognised: Counter[str] = field(default_factory=Counter)
    unique_seen: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self.unique = self.contract.unique_fields()

    def walk(self, where: str, value: Any, path: str = "$") -> None:
        if isinstance(value, list):
            for i, item in enumerate(value):
                self.walk(where, item, f"{path}[{i}]")
        elif isinstance(value, dict):
            self._check(where, value, path)
            for key, item in value.items():
                self.walk(where, item, f"{path}.{key}")

    def _check(self, where: str, obj: dict[str, Any], path: str) -> None:
        for resource, names in self.contract.fields.items():
            enums = self.contract.enums.get(resource)
            if enums and names <= obj.keys():
                self.recognised[resource] += 1
                for name, values in enums.items():
                    self._one(where, f"{path}.{name} ({resource})", obj[name], values)
        for name in self.unique.keys() & obj.keys():
            self.unique_seen[name] += 1
            self._one(where, f"{path}.{name}", obj[name], self.unique[name])

    def _one(self, where: str, at: str, value: Any, values: tuple[str, ...]) -> None:
        if value not in values:
            self.problems.append(f"{where} {at} = {value!r}, not one of the contract's {list(values)}")


def rest_routes() -> set[tuple[str, str]]:
    """Every REST operation the app serves (HEAD is GET without a body; the document is not data)."""
    return {
        (method, "/api" + route.path)
        for route in rest_compat.routes
        if isinstance(route, Route) and route.path != "/openapi.json"
        for method in route.methods or ()
        if method != "HEAD"
    }


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """The dispatcher runs, so registered endpoints get the events' webhook payloads."""
    return settings.model_copy(
        update={
            "dispatcher": True,
            "webhook_retry_schedule": "0,0,0",
            "webhook_connect_timeout_seconds": 1.0,
            "webhook_read_timeout_seconds": 2.0,
        }
    )


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as r:
        yield r


@dataclass
class Flow:
    api: Api
    walker: Walker
    visited: set[tuple[str, str]] = field(default_factory=set)

    async def call(self, method: str, template: str, *, expect: int = 200, json: Any = None, **kw: Any) -> Any:
        """One request to a route (``template`` with ``{id}``), its answer walked; the body's JSON."""
        path = template.format(**kw.pop("ids", {}))
        headers = kw.pop("headers", None)
        if method == "GET":
            resp = await self.api.get(path, params=kw.pop("params", None), headers=headers)
        elif method == "POST":
            resp = await self.api.post(path, json, headers=headers)
        elif method == "PATCH":
            resp = await self.api.patch(path, json)
        elif method == "PUT":
            resp = await self.api.http.put(path, json=json, headers={"Authorization": f"Bearer {self.api.key}"})
        else:
            resp = await self.api.delete(path)
        assert resp.status_code == expect, f"{method} {path}: {resp.status_code} {resp.text[:500]}"
        self.visited.add((method, template))
        if resp.headers.get("content-type", "").startswith("application/json") and resp.content:
            body = resp.json()
            if not template.endswith("/download"):  # a JSON artifact is a file, not an answer
                self.walker.walk(f"{method} {path}", body)
            return body
        return resp


def action_id_event(events: list[dict[str, Any]]) -> str:
    """The id of the first event of the log: one any inclusion proof can be asked for."""
    return str(events[0]["id"])


async def test_every_answer_holds_only_the_contracts_enum_values(
    api: Api, app: Starlette, contract: Contract, receiver: Receiver
) -> None:
    walker = Walker(contract)
    flow = Flow(api, walker)
    call = flow.call
    # A registered endpoint first, so every later event reaches it as a webhook payload.
    endpoint = (await call("POST", "/api/v2/webhook-endpoints", expect=201, json={"url": receiver.url}))["data"]
    eid = {"id": endpoint["id"]}
    legacy = {"title": "FY2025 freight", "total_co2e_kg": 1200.5, "shipment_count": 3}
    legacy_id = str((await import_legacy_reports(app.state.db, "org-a", [legacy]))[0])

    ws = (await call("POST", "/api/v2/workspaces", expect=201, json={"name": "Contract enums"}))["data"]
    wid = {"id": ws["id"]}
    await call("GET", "/api/v2/workspaces")
    rows = [
        {"external_id": "A", "mode": "road", "distance_km": 420, "mass_tonnes": 12, "distance_type": "actual"},
        {"external_id": "B", "mode": "rail", "distance_km": 900, "mass_tonnes": 30, "fuel_type": "electricity",
         "fuel_amount": 5000, "vehicle_payload_tonnes": 600, "electricity_country": "DE"},
        {"external_id": "C", "mode": "air", "mass_tonnes": 1},
    ]  # fmt: skip
    batch = await call(
        "POST", "/api/v2/workspaces/{id}/imports", expect=201, ids=wid, json={"source_row_count": 3, "shipments": rows}
    )
    await call("GET", "/api/v2/imports/{id}", ids={"id": batch["data"]["id"]})
    calc = await call("POST", "/api/v2/workspaces/{id}/calculate", ids=wid, json={"legacy_report_id": legacy_id})
    await call("GET", "/api/v2/calculation-runs/{id}", ids={"id": calc["data"]["calculation_run"]["id"]})
    await call("GET", "/api/v2/calculation-runs", params={"filter[status]": "completed"})
    await call("GET", "/api/v2/workspaces/{id}/quality", ids=wid)
    await call("GET", "/api/v2/methodology-profiles")

    pack = (await call("POST", "/api/v2/workspaces/{id}/packs", expect=201, ids=wid))["data"]
    pid = {"id": pack["id"]}
    detail = (await call("GET", "/api/v2/packs/{id}", ids=pid))["data"]
    await call("GET", "/api/v2/packs", params={"sort": "created_at"})
    listed = (await call("GET", "/api/v2/packs/{id}/artifacts", ids=pid))["data"]
    assert [a["artifact_type"] for a in listed] == [a["artifact_type"] for a in detail["artifacts"]]
    for artifact in listed:
        await call("GET", "/api/v2/artifacts/{id}/download", ids={"id": artifact["id"]})
    # The iLEAP export is not listed, and still reachable from the pack.
    ileap = await api.get(detail["ileap_shipment_footprints_url"])
    assert ileap.status_code == 200 and json.loads(ileap.content)["shipmentFootprints"]

    for action in ("requested", "approved", "published"):
        resp = await call("POST", "/api/v2/packs/{id}/approvals", expect=201, ids=pid, json={"action_type": action})
        assert resp["data"]["statusAfter"] in contract.enums["ReportPack"]["status"]
    refused = await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "rejected"})
    assert refused.status_code == 409  # published: nothing more
    actions = (await api.get("/api/v2/events", params={"limit": 200})).json()["data"]
    action_id = next(e["data"]["approval_action_id"] for e in actions if e["data"].get("approval_action_id"))
    await call("GET", "/api/v2/approvals/{id}", ids={"id": action_id})
    await call("GET", "/api/v2/workspaces/{id}", ids=wid)
    # The transparency log and the pack's bundle (extensions: their answers carry no contract enum).
    bundle = await call("GET", "/api/v2/packs/{id}/bundle", ids=pid)
    assert bundle.headers["content-type"] == "application/zip"
    first = (await call("GET", "/api/v2/log/checkpoint"))["data"]
    await call("GET", "/api/v2/log/proof/inclusion", params={"event": action_id_event(actions)})

    item = {
        "evidence_type": "fuel_receipt",
        "title": "Diesel, March",
        "file_name": "march.pdf",
        "file_url": "https://files.example/march.pdf",
        "workspace_id": ws["id"],
        "verification_status": "verified",
    }
    created = (await call("POST", "/api/v2/evidence-items", expect=201, json=item))["data"]
    await call("GET", "/api/v2/evidence-items", params={"workspace_id": ws["id"]})
    await call("GET", "/api/v2/evidence-items/{id}", ids={"id": created["id"]})
    now = (await call("GET", "/api/v2/log/checkpoint"))["data"]  # the log grew: a new checkpoint
    await call("GET", "/api/v2/log/proof/consistency", params={"from": first["size"], "to": now["size"]})

    test = {"target_url": receiver.url, "workspace_id": ws["id"], "report_pack_id": pack["id"]}
    await call("POST", "/api/v2/webhooks/test", json=test)
    await call("GET", "/api/v2/webhooks/deliveries")
    await call("GET", "/api/v1/reports")
    await call("GET", "/api/v1/reports/{id}", ids={"id": legacy_id})

    # Sharing with a data recipient (PACT host): the extension routes answer in the same envelopes.
    recipient = (await call("POST", "/api/sharing/recipients", expect=201, json={"name": "Customer"}))["data"]
    rid = {"id": recipient["id"]}
    await call("GET", "/api/sharing/recipients")
    shared = {"recipient_id": recipient["id"], "pack_id": pack["id"]}
    publication = (await call("POST", "/api/sharing/publications", expect=201, json=shared))["data"]
    await call("GET", "/api/sharing/publications")
    host = {"url": receiver.url, "client_id": "owner-at-customer", "client_secret": "s3cret-s3cret"}
    await call("PUT", "/api/sharing/recipients/{id}/host", ids=rid, json=host)
    await call("DELETE", "/api/sharing/recipients/{id}/host", ids=rid)
    await call("POST", "/api/sharing/publications/{id}/withdraw", ids={"id": publication["id"]})
    await call("POST", "/api/sharing/recipients/{id}/revoke", ids=rid)

    # Every event since the endpoint's registration reaches it; then its own routes.
    log = await call("GET", "/api/v2/events", params={"limit": 200})
    events = {e["id"] for e in log["data"]}

    async def all_sent() -> bool:
        return events <= set(receiver.ids())

    await eventually(all_sent, "every event delivered to the endpoint")
    for received in list(receiver.received):
        walker.walk(f"webhook {received.webhook_id}", json.loads(received.body))
    await call("GET", "/api/v2/webhook-endpoints")
    await call("GET", "/api/v2/webhook-endpoints/{id}", ids=eid)
    attempts = (await call("GET", "/api/v2/webhook-endpoints/{id}/deliveries", ids=eid))["data"]
    await call("POST", "/api/v2/webhook-endpoints/deliveries/{id}/retry", ids={"id": attempts[0]["id"]})
    await call("POST", "/api/v2/webhook-endpoints/{id}/rotate-secret", ids=eid)
    await call("PATCH", "/api/v2/webhook-endpoints/{id}", ids=eid, json={"description": "contract check"})
    await call("DELETE", "/api/v2/webhook-endpoints/{id}", expect=204, ids=eid)

    assert rest_routes() - flow.visited == set(), "routes this walk does not reach yet"
    assert walker.problems == []
    for resource in contract.enums:
        assert walker.recognised[resource] > 0, f"no {resource} was recognised in any answer"
    assert walker.unique_seen["artifact_type"] >= 16 and walker.unique_seen["evidence_type"] > 0

    # The walk would catch the ninth artifact type the contract does not list.
    broken = {**listed[0], "artifact_type": "ileap_shipment_footprints"}
    walker.walk("a pack answer listing the iLEAP file", {"data": [broken]})
    assert walker.problems == [
        "a pack answer listing the iLEAP file $.data[0].artifact_type (PackArtifact) = 'ileap_shipment_footprints', "
        f"not one of the contract's {list(contract.enums['PackArtifact']['artifact_type'])}",
        "a pack answer listing the iLEAP file $.data[0].artifact_type = 'ileap_shipment_footprints', "
        f"not one of the contract's {list(contract.enums['PackArtifact']['artifact_type'])}",
    ]


def test_the_parser_reads_the_contracts_forms() -> None:
    """The three ways the contract writes an enum: in a table's notes, in a body line after a type,
    and in a body line with ``required;``."""
    text = """## Resources and their fields
### Thing
| Field | Type | Notes |
|---|---|---|
| status | string | required; enum a, b_c |
| kind | string\\|null | |
### Result
| Field | Type |
|---|---|
| statusBefore | string (pack status before the action) |
### ReportPack
| Field | Type | Notes |
|---|---|---|
| status | string | enum x, y |
## Endpoints
**POST /v2/things/{id}** — make one.
- Body (required): `action` string (required; enum p, q); optional `note` string, `tier` (enum one, two).
"""
    parsed = parse_contract(text)
    assert parsed.fields["Thing"] == {"status", "kind"}
    assert parsed.enums["Thing"] == {"status": ("a", "b_c")}
    assert parsed.enums["Result"] == {"statusBefore": ("x", "y")}
    assert parsed.bodies == {("POST", "/api/v2/things/{id}"): {"action": ("p", "q"), "tier": ("one", "two")}}
