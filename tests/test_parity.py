"""One behaviour, two transports: each operation through REST and through GraphQL on fresh
data must leave the same state and fail with the same class of error."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from evidence_gateway.resolvers.organizations import create_api_key
from tests.conftest import Api, create_workspace, gql_answer

Env = dict[str, Any]

# REST status -> GraphQL extensions.code: the two mappings of the one error family.
STATUS_CLASS = {401: "UNAUTHENTICATED", 404: "NOT_FOUND", 409: "CONFLICT", 422: "BAD_USER_INPUT", 400: "BAD_USER_INPUT"}


def rest_outcome(resp: httpx.Response) -> str:
    return "ok" if resp.status_code < 300 else STATUS_CLASS.get(resp.status_code, f"HTTP {resp.status_code}")


def gql_outcome(body: dict[str, Any]) -> str:
    errors = body.get("errors")
    return errors[0]["extensions"]["code"] if errors else "ok"


@dataclass
class Scenario:
    name: str
    setup: Callable[[Api, Api], Awaitable[Env]]
    rest: Callable[[Api, Api, Env], Awaitable[str]]
    gql: Callable[[Api, Api, Env], Awaitable[str]]
    state: Callable[[Api, Env], Awaitable[Any]]
    expected: str


async def _nothing(api: Api, api_b: Api) -> Env:
    return {}


async def _one_workspace(api: Api, api_b: Api) -> Env:
    return {"ws": await create_workspace(api, name="parity", reporting_period_start="2025-01-01")}


async def _workspaces_state(api: Api, env: Env) -> Any:
    body = (await api.get("/api/v2/workspaces")).json()
    return [(w["name"], w["status"], w["reporting_period_start"]) for w in body["data"]]


GQL_CREATE = "mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id } }"
GQL_IMPORT = "mutation($id: UUID!, $i: RegisterImportInput!) { registerImport(workspaceId: $id, input: $i) { id } }"
GQL_GET = "query($id: UUID!) { workspace(id: $id) { id } }"


def create_scenario(name: str, rest_body: dict[str, Any], gql_input: dict[str, Any], expected: str) -> Scenario:
    async def rest(api: Api, api_b: Api, env: Env) -> str:
        return rest_outcome(await api.post("/api/v2/workspaces", rest_body))

    async def gql(api: Api, api_b: Api, env: Env) -> str:
        return gql_outcome(await api.gql(GQL_CREATE, {"i": gql_input}))

    return Scenario(name, _nothing, rest, gql, _workspaces_state, expected)


def import_scenario(name: str, rows: list[dict[str, Any]], gql_rows: list[dict[str, Any]], expected: str,
                    *, as_other_org: bool = False) -> Scenario:  # fmt: skip
    async def rest(api: Api, api_b: Api, env: Env) -> str:
        caller = api_b if as_other_org else api
        body = {"source_row_count": len(rows), "shipments": rows}
        return rest_outcome(await caller.post(f"/api/v2/workspaces/{env['ws']['id']}/imports", body))

    async def gql(api: Api, api_b: Api, env: Env) -> str:
        caller = api_b if as_other_org else api
        variables = {"id": env["ws"]["id"], "i": {"sourceRowCount": len(gql_rows), "shipments": gql_rows}}
        return gql_outcome(await caller.gql(GQL_IMPORT, variables))

    return Scenario(name, _one_workspace, rest, gql, _workspaces_state, expected)


def get_scenario(name: str, *, other_org: bool, expected: str) -> Scenario:
    async def rest(api: Api, api_b: Api, env: Env) -> str:
        caller = api_b if other_org else api
        wid = env["ws"]["id"] if other_org else str(uuid.uuid4())
        return rest_outcome(await caller.get(f"/api/v2/workspaces/{wid}"))

    async def gql(api: Api, api_b: Api, env: Env) -> str:
        caller = api_b if other_org else api
        wid = env["ws"]["id"] if other_org else str(uuid.uuid4())
        body = await caller.gql(GQL_GET, {"id": wid})
        # REST's 404 is GraphQL's null lookup (docs/graphql-schema.md): no error, no record.
        return "NOT_FOUND" if gql_answer(body) == {"data": {"workspace": None}, "_status": 200} else gql_outcome(body)

    return Scenario(name, _one_workspace, rest, gql, _workspaces_state, expected)


async def _rest_no_key(api: Api, api_b: Api, env: Env) -> str:
    return rest_outcome(await api.post("/api/v2/workspaces", {"name": "x"}, key=None))


async def _gql_no_key(api: Api, api_b: Api, env: Env) -> str:
    return gql_outcome(await api.gql(GQL_CREATE, {"i": {"name": "x"}}, key=None))


ROWS = [
    {"mode": "road", "distance_km": 420, "mass_tonnes": 12},
    {"mode": "rail", "distance_km": 900, "mass_tonnes": 30},
]


async def _imported(api: Api, api_b: Api) -> Env:
    env = await _one_workspace(api, api_b)
    resp = await api.post(f"/api/v2/workspaces/{env['ws']['id']}/imports", {"source_row_count": 2, "shipments": ROWS})
    assert resp.status_code == 201
    return env


async def _calculated(api: Api, api_b: Api) -> Env:
    env = await _imported(api, api_b)
    assert (await api.post(f"/api/v2/workspaces/{env['ws']['id']}/calculate", {})).status_code == 200
    return env


async def _with_pack(api: Api, api_b: Api) -> Env:
    env = await _calculated(api, api_b)
    resp = await api.post(f"/api/v2/workspaces/{env['ws']['id']}/packs", {})
    assert resp.status_code == 201
    env["pack"] = resp.json()["data"]
    return env


async def _workspace_state(api: Api, env: Env) -> Any:
    data = (await api.get(f"/api/v2/workspaces/{env['ws']['id']}")).json()["data"]
    run, pack, quality = data["latest_calculation_run"], data["latest_pack"], data["latest_quality_assessment"]
    return (
        data["status"],
        run and (run["status"], run["rerun_hash"]),
        quality and (quality["coverage_score"], quality["primary_data_percent"]),
        # pack_hash differs between fresh environments: the files name their own record ids.
        pack and (pack["version_number"], pack["status"], pack["pack_hash"] is not None),
    )


async def _evidence_state(api: Api, env: Env) -> Any:
    body = (await api.get("/api/v2/evidence-items", params={"workspace_id": env["ws"]["id"]})).json()
    return [(e["title"], e["attachment_scope"], e["verification_status"]) for e in body["data"]]


GQL_CALCULATE = "mutation($id: UUID!) { calculateWorkspace(workspaceId: $id) { status } }"
GQL_PACK = "mutation($id: UUID!) { generatePack(workspaceId: $id) { pack { id } } }"
GQL_APPROVAL = (
    "mutation($id: UUID!, $i: RecordApprovalInput!) { recordApproval(packId: $id, input: $i) { statusAfter } }"
)
GQL_EVIDENCE = "mutation($i: CreateEvidenceItemInput!) { createEvidenceItem(input: $i) { id } }"


def workspace_action(name: str, setup: Callable[[Api, Api], Awaitable[Env]], action: str, gql_doc: str,
                     expected: str, *, as_other_org: bool = False) -> Scenario:  # fmt: skip
    async def rest(api: Api, api_b: Api, env: Env) -> str:
        caller = api_b if as_other_org else api
        return rest_outcome(await caller.post(f"/api/v2/workspaces/{env['ws']['id']}/{action}", {}))

    async def gql(api: Api, api_b: Api, env: Env) -> str:
        caller = api_b if as_other_org else api
        return gql_outcome(await caller.gql(gql_doc, {"id": env["ws"]["id"]}))

    return Scenario(name, setup, rest, gql, _workspace_state, expected)


def approval_scenario(name: str, action_type: str, expected: str) -> Scenario:
    async def rest(api: Api, api_b: Api, env: Env) -> str:
        resp = await api.post(f"/api/v2/packs/{env['pack']['id']}/approvals", {"action_type": action_type})
        return rest_outcome(resp)

    async def gql(api: Api, api_b: Api, env: Env) -> str:
        variables = {"id": env["pack"]["id"], "i": {"actionType": action_type.upper()}}  # GraphQL enum name
        return gql_outcome(await api.gql(GQL_APPROVAL, variables))

    return Scenario(name, _with_pack, rest, gql, _workspace_state, expected)


def evidence_scenario(name: str, expected: str, *, foreign_workspace: bool) -> Scenario:
    async def setup(api: Api, api_b: Api) -> Env:
        env = await _one_workspace(api, api_b)
        env["other_ws"] = await create_workspace(api_b, name="theirs")
        return env

    def target(env: Env) -> str:
        return str(env["other_ws"]["id"] if foreign_workspace else env["ws"]["id"])

    async def rest(api: Api, api_b: Api, env: Env) -> str:
        body = {"evidence_type": "fuel_receipt", "title": "Diesel March", "file_name": "r.pdf",
                "file_url": "https://files.example.com/r.pdf", "workspace_id": target(env)}  # fmt: skip
        return rest_outcome(await api.post("/api/v2/evidence-items", body))

    async def gql(api: Api, api_b: Api, env: Env) -> str:
        data = {"evidenceType": "FUEL_RECEIPT", "title": "Diesel March", "fileName": "r.pdf",
                "fileUrl": "https://files.example.com/r.pdf", "workspaceId": target(env)}  # fmt: skip
        return gql_outcome(await api.gql(GQL_EVIDENCE, {"i": data}))

    return Scenario(name, setup, rest, gql, _evidence_state, expected)


SCENARIOS = [
    create_scenario("create workspace", {"name": "A", "reporting_period_start": "2025-01-01"},
                    {"name": "A", "reportingPeriodStart": "2025-01-01"}, "ok"),
    create_scenario("create with end before start",
                    {"name": "A", "reporting_period_start": "2025-02-01", "reporting_period_end": "2025-01-01"},
                    {"name": "A", "reportingPeriodStart": "2025-02-01", "reportingPeriodEnd": "2025-01-01"},
                    "BAD_USER_INPUT"),
    create_scenario("create with blank name", {"name": " "}, {"name": " "}, "BAD_USER_INPUT"),
    Scenario("create without a key", _nothing, _rest_no_key, _gql_no_key, _workspaces_state, "UNAUTHENTICATED"),
    get_scenario("read unknown workspace", other_org=False, expected="NOT_FOUND"),
    get_scenario("read other organisation's workspace", other_org=True, expected="NOT_FOUND"),
    import_scenario("import rows", [{"mode": "road", "distance_km": 5, "mass_tonnes": 1}],
                    [{"mode": "ROAD", "distanceKm": 5, "massTonnes": 1}], "ok"),
    import_scenario("import a bad row", [{"mode": "road", "distance_km": -5}],
                    [{"mode": "ROAD", "distanceKm": -5}], "BAD_USER_INPUT"),
    import_scenario("import into other organisation's workspace", [], [], "NOT_FOUND", as_other_org=True),
    workspace_action("calculate imported rows", _imported, "calculate", GQL_CALCULATE, "ok"),
    workspace_action("calculate without any data", _one_workspace, "calculate", GQL_CALCULATE, "CONFLICT"),
    workspace_action("calculate other organisation's workspace", _imported, "calculate", GQL_CALCULATE,
                     "NOT_FOUND", as_other_org=True),
    workspace_action("generate a pack", _calculated, "packs", GQL_PACK, "ok"),
    workspace_action("generate a pack before calculating", _imported, "packs", GQL_PACK, "CONFLICT"),
    approval_scenario("request review", "requested", "ok"),
    approval_scenario("approve a pack not in review", "approved", "CONFLICT"),
    evidence_scenario("attach evidence to a workspace", "ok", foreign_workspace=False),
    evidence_scenario("attach evidence to another organisation's workspace", "BAD_USER_INPUT",
                      foreign_workspace=True),
]  # fmt: skip


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
async def test_rest_and_graphql_agree(app: Any, scenario: Scenario) -> None:
    outcomes, states = [], []
    for transport in ("rest", "gql"):
        # Fresh data for each transport: a new pair of organisations on the same app.
        suffix = f"{scenario.name}-{transport}"
        ka = await create_api_key(app.state.db, f"a-{suffix}")
        kb = await create_api_key(app.state.db, f"b-{suffix}")
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            api, api_b = Api(http, ka), Api(http, kb)
            env = await scenario.setup(api, api_b)
            run = scenario.rest if transport == "rest" else scenario.gql
            outcomes.append(await run(api, api_b, env))
            states.append(await scenario.state(api, env))
    assert outcomes == [scenario.expected, scenario.expected]
    assert states[0] == states[1]
