"""The worked example in GraphQL's shape (examples/q1-2026-import.graphql.json): the REST example's
rows as `registerImport` variables, kept equal to it, and giving the hand-checked totals."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from graphql import GraphQLEnumType, GraphQLInputObjectType, GraphQLList, GraphQLNonNull, GraphQLType

from evidence_gateway.schema import schema
from tests.conftest import Api, create_workspace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
REST_EXAMPLE = EXAMPLES / "q1-2026-import.json"
GRAPHQL_EXAMPLE = EXAMPLES / "q1-2026-import.graphql.json"
WORKSPACE_PLACEHOLDER = "00000000-0000-0000-0000-000000000000"

REGISTER = """mutation RegisterImport($workspaceId: UUID!, $input: RegisterImportInput!) {
  registerImport(workspaceId: $workspaceId, input: $input) { id shipmentCount sourceRowCount }
}"""

CALCULATE = """mutation Calculate($workspaceId: UUID!) {
  calculateWorkspace(workspaceId: $workspaceId, input: {assumptionsSnapshot: {note: "Q1 worked example"}}) {
    calculationRun { totalCo2eKg totalCo2eWtwKg totalCo2eTtwKg totalTonneKm shipmentCount excludedCo2eKg
                     totalsByMode { mode co2eKg tonneKm shipmentCount } }
    qualityAssessment { coverageScore rulesTriggered { id severity count } }
  }
}"""


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _unwrap(gql_type: GraphQLType) -> GraphQLType:
    while isinstance(gql_type, GraphQLNonNull | GraphQLList):
        gql_type = gql_type.of_type
    return gql_type


def as_graphql(value: Any, gql_type: GraphQLType) -> Any:
    """A REST body as the GraphQL input it is: camelCase fields, enum values in capitals."""
    named = _unwrap(gql_type)
    if isinstance(value, list):
        return [as_graphql(v, gql_type) for v in value]
    if isinstance(named, GraphQLInputObjectType):
        fields = {snake(name): (name, field.type) for name, field in named.fields.items()}
        out = {}
        for key, item in value.items():
            name, field_type = fields[key]  # a REST key without a GraphQL field fails here
            out[name] = as_graphql(item, field_type)
        return out
    if isinstance(named, GraphQLEnumType) and isinstance(value, str):
        assert value.upper() in named.values, (named.name, value)
        return value.upper()
    return value


def expected_example() -> dict[str, Any]:
    rest = json.loads(REST_EXAMPLE.read_text())
    variables = {
        "workspaceId": WORKSPACE_PLACEHOLDER,
        "input": as_graphql(rest, schema._schema.type_map["RegisterImportInput"]),
    }
    return {"operationName": "RegisterImport", "query": REGISTER, "variables": variables}


def test_the_graphql_example_is_the_rest_example() -> None:
    """Regenerate with: python -c 'from tests.test_graphql_example import write; write()'."""
    assert json.loads(GRAPHQL_EXAMPLE.read_text()) == expected_example()


def write() -> None:
    GRAPHQL_EXAMPLE.write_text(json.dumps(expected_example(), indent=1, ensure_ascii=False) + "\n")


async def test_the_graphql_example_gives_the_hand_checked_totals(api: Api) -> None:
    """docs/methodology.md's figures, reached over GraphQL alone (the REST run is tests/test_calculations.py's)."""
    made = await api.gql(
        'mutation { createWorkspace(input: {name: "Q1 2026 freight", reportingPeriodStart: "2026-01-01", '
        'reportingPeriodEnd: "2026-03-31"}) { id } }'
    )
    assert "errors" not in made, made
    ws_id = made["data"]["createWorkspace"]["id"]
    request = json.loads(GRAPHQL_EXAMPLE.read_text())  # noqa: ASYNC240 - a small fixture file
    request["variables"]["workspaceId"] = ws_id
    resp = await api.http.post("/graphql", json=request, headers={"Authorization": f"Bearer {api.key}"})
    imported = resp.json()
    assert "errors" not in imported, imported
    assert imported["data"]["registerImport"]["shipmentCount"] == 296
    assert imported["data"]["registerImport"]["sourceRowCount"] == 300

    body = await api.gql(CALCULATE, {"workspaceId": ws_id})
    assert "errors" not in body, body
    run = body["data"]["calculateWorkspace"]["calculationRun"]
    assert run["totalCo2eKg"] == run["totalCo2eWtwKg"] == 476012.20514
    assert run["totalCo2eTtwKg"] == 384444.154135
    assert (run["totalTonneKm"], run["shipmentCount"], run["excludedCo2eKg"]) == (12257900.000002, 293, 7963.90541)
    assert sum(m["shipmentCount"] for m in run["totalsByMode"]) == 293
    assert {m["mode"] for m in run["totalsByMode"]} == {"ROAD", "RAIL", "SEA", "AIR", "INLAND_WATERWAY"}
    assert body["data"]["calculateWorkspace"]["qualityAssessment"]["coverageScore"] == 97.67

    # The same rows over REST: the same workspace figures.
    rest_ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    rest_body = json.loads(REST_EXAMPLE.read_text())  # noqa: ASYNC240 - a small fixture file
    assert (await api.post(f"/api/v2/workspaces/{rest_ws['id']}/imports", rest_body)).status_code == 201
    rest_run = (await api.post(f"/api/v2/workspaces/{rest_ws['id']}/calculate")).json()["data"]["calculation_run"]
    by_mode = {m["mode"].lower(): m["co2eKg"] for m in run["totalsByMode"]}
    assert by_mode == {mode: t["co2e_kg"] for mode, t in rest_run["totals_by_mode_json"].items()}


def test_the_documented_scalar_mappings_cover_every_scalar() -> None:
    """docs/graphql.md's graphql-codegen and ariadne-codegen blocks name each scalar of the schema."""
    from graphql import GraphQLScalarType, specified_scalar_types

    ours = {
        name
        for name, t in schema._schema.type_map.items()
        if isinstance(t, GraphQLScalarType) and name not in specified_scalar_types
    }
    text = (Path(__file__).resolve().parent.parent / "docs" / "graphql.md").read_text()
    ts = re.search(r"scalars: \{(.*?)\}", text, re.S)
    assert ts is not None
    assert set(re.findall(r"^\s*(\w+): \"", ts.group(1), re.M)) == ours
    assert set(re.findall(r"^\[tool\.ariadne-codegen\.scalars\.(\w+)\]", text, re.M)) == ours
    config = (Path(__file__).resolve().parent / "typed_client" / "ariadne-codegen.toml").read_text()
    for name in ours:  # the same mapping the generated test client uses
        block = re.search(rf"\[tool\.ariadne-codegen\.scalars\.{name}\]\ntype = \"([^\"]+)\"", text)
        assert block is not None and f'type = "{block.group(1)}"' in config, name
