"""BAD_USER_INPUT names the GraphQL argument path; REST keeps its own names for the same rule."""

from __future__ import annotations

import pytest

from evidence_gateway.schema import schema
from evidence_gateway.schema.input_paths import graphql_field_path
from tests.conftest import Api, create_workspace


def _field(parent: str, name: str) -> object:
    return schema._schema.get_type(parent).fields[name]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("parent", "field", "rest", "graphql"),
    [
        ("Query", "workspaces", "per_page", "perPage"),
        ("Query", "evidenceItems", "workspace_id", "workspaceId"),  # an argument, not an input field
        ("Mutation", "createEvidenceItem", "workspace_id", "input.workspaceId"),
        ("Mutation", "registerImport", "shipments[12].carrier_intensity_g_per_tkm",
         "input.shipments[12].carrierIntensityGPerTkm"),
        ("Mutation", "registerImport", "body", "input"),
        # Keys inside a JSON value are the caller's own: kept as sent, dots and brackets too.
        ("Mutation", "calculateWorkspace", "assumptions_snapshot.my_key.a[0].b_c",
         "input.assumptionsSnapshot.my_key.a[0].b_c"),
        ("Mutation", "createEvidenceItem", "extracted_metadata_json.pages[0].t\\u0000",
         "input.extractedMetadataJson.pages[0].t\\u0000"),
        ("Query", "events", "first", "first"),
        ("Mutation", "createWorkspace", "not_in_the_schema", "input.not_in_the_schema"),
    ],
)  # fmt: skip
def test_rest_paths_become_graphql_argument_paths(parent: str, field: str, rest: str, graphql: str) -> None:
    assert graphql_field_path(_field(parent, field), rest) == graphql  # type: ignore[arg-type]


async def test_nested_and_root_arguments_are_named_as_sent(api: Api) -> None:
    body = await api.gql("{ evidenceItems(perPage: 0) { items { id } } }")
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert list(body["errors"][0]["extensions"]["fields"]) == ["perPage"]
    created = await api.post("/api/v2/webhook-endpoints", {"url": "http://127.0.0.1:9/hook"})
    assert created.status_code == 201, created.text
    nested = await api.gql(
        "query($id: UUID!) { webhookEndpoint(id: $id) { id deliveries(page: 0, perPage: 500) { items { id } } } }",
        {"id": created.json()["data"]["id"]},
    )
    (error,) = nested["errors"]
    assert error["path"] == ["webhookEndpoint", "deliveries"]
    assert set(error["extensions"]["fields"]) == {"page", "perPage"}
    # The same rule on REST names REST's parameter.
    rest = await api.get("/api/v2/webhook-endpoints", params={"per_page": 500})
    assert set(rest.json()["details"]["fields"]) == {"per_page"}


async def test_aliases_do_not_change_the_names(api: Api) -> None:
    ws = await create_workspace(api)
    doc = """mutation($id: UUID!) { renamed: registerImport(workspaceId: $id,
      input: {sourceRowCount: 1, shipments: [{mode: ROAD, massTonnes: -1}]}) { id } }"""
    body = await api.gql(doc, {"id": ws["id"]})
    assert list(body["errors"][0]["extensions"]["fields"]) == ["input.shipments[0].massTonnes"]
