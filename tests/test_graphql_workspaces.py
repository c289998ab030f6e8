"""Workspaces and imports over GraphQL: same resolvers, same rules, camelCase fields."""

from __future__ import annotations

import uuid

from tests.conftest import Api, create_workspace, gql_answer, gql_code

CREATE = """
mutation($input: CreateWorkspaceInput!) {
  createWorkspace(input: $input) { id orgId name status reportingPeriodStart reportingPeriodEnd createdAt }
}"""
IMPORT = """
mutation($id: UUID!, $input: RegisterImportInput!) {
  registerImport(workspaceId: $id, input: $input) { id workspaceId sourceRowCount shipmentCount }
}"""
LIST = """
query($page: Int!, $perPage: Int!) {
  workspaces(page: $page, perPage: $perPage) {
    items { id name status imports { id sourceRowCount } }
    pagination { page perPage total }
  }
}"""


async def test_create_and_read_back(api: Api) -> None:
    body = await api.gql(CREATE, {"input": {"name": "GQL ws", "reportingPeriodStart": "2025-01-01"}})
    created = body["data"]["createWorkspace"]
    assert created["status"] == "DRAFT"
    assert created["reportingPeriodStart"] == "2025-01-01"
    read = await api.gql("query($id: UUID!) { workspace(id: $id) { id name } }", {"id": created["id"]})
    assert read["data"]["workspace"] == {"id": created["id"], "name": "GQL ws"}
    # the same record is visible over REST
    rest = (await api.get(f"/api/v2/workspaces/{created['id']}")).json()["data"]
    assert rest["name"] == "GQL ws"


async def test_list_with_nested_imports_and_pagination(api: Api) -> None:
    ws = await create_workspace(api, name="first")
    await create_workspace(api, name="second")
    rows = [{"mode": "ROAD", "distanceKm": 10, "massTonnes": 1}, {"mode": "SEA", "distanceSource": "MODELLED"}]
    imp = await api.gql(IMPORT, {"id": ws["id"], "input": {"sourceRowCount": 2, "shipments": rows}})
    assert imp["data"]["registerImport"]["shipmentCount"] == 2
    body = await api.gql(LIST, {"page": 1, "perPage": 10})
    page = body["data"]["workspaces"]
    assert page["pagination"] == {"page": 1, "perPage": 10, "total": 2}
    assert [w["name"] for w in page["items"]] == ["second", "first"]
    assert page["items"][1]["status"] == "DATA_IMPORTED"
    assert page["items"][1]["imports"][0]["sourceRowCount"] == 2
    assert page["items"][0]["imports"] == []


async def test_validation_errors_are_bad_user_input_with_fields(api: Api) -> None:
    body = await api.gql(
        CREATE, {"input": {"name": "x", "reportingPeriodStart": "2025-06-01", "reportingPeriodEnd": "2025-01-01"}}
    )
    assert gql_code(body) == "BAD_USER_INPUT"
    assert "body" in body["errors"][0]["extensions"]["fields"] or body["errors"][0]["extensions"]["fields"]
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0


async def test_blank_name_and_bad_page_are_refused(api: Api) -> None:
    assert gql_code(await api.gql(CREATE, {"input": {"name": "  "}})) == "BAD_USER_INPUT"
    body = await api.gql(LIST, {"page": 0, "perPage": 10})
    assert gql_code(body) == "BAD_USER_INPUT"
    assert "page" in body["errors"][0]["extensions"]["fields"]
    too_big = await api.gql(LIST, {"page": 1, "perPage": 101})
    assert gql_code(too_big) == "BAD_USER_INPUT"
    assert list(too_big["errors"][0]["extensions"]["fields"]) == ["perPage"]


async def test_bad_row_in_import_is_named_by_index(api: Api) -> None:
    ws = await create_workspace(api)
    body = await api.gql(IMPORT, {"id": ws["id"], "input": {"sourceRowCount": 1, "shipments": [
        {"mode": "ROAD"}, {"mode": "AIR", "distanceKm": -5}]}})  # fmt: skip
    assert gql_code(body) == "BAD_USER_INPUT"
    # GraphQL names the argument path in its own names; REST says shipments[1].distance_km.
    assert body["errors"][0]["extensions"]["fields"] == {
        "input.shipments[1].distanceKm": "Input should be greater than or equal to 0"
    }


async def test_bad_values_are_bad_user_input_and_bad_documents_fail_validation(api: Api) -> None:
    """A variable's value is the user's input; a literal or a field in the document is the program's."""
    body = await api.gql(CREATE, {"input": {"name": "x", "reportingPeriodStart": "not-a-date"}})
    assert gql_code(body) == "BAD_USER_INPUT"
    body = await api.gql('{ workspace(id: "nope") { id } }')
    assert gql_code(body) == "GRAPHQL_VALIDATION_FAILED"
    body = await api.gql("{ workspaces { nope } }")
    assert gql_code(body) == "GRAPHQL_VALIDATION_FAILED"


async def test_other_organisation_gets_null_or_not_found(api: Api, api_b: Api) -> None:
    ws = await create_workspace(api)
    # A lookup answers null without an error: the same answer as for an unknown id.
    body = await api_b.gql("query($id: UUID!) { workspace(id: $id) { id } }", {"id": ws["id"]})
    assert gql_answer(body) == {"data": {"workspace": None}, "_status": 200}
    body = await api_b.gql(IMPORT, {"id": ws["id"], "input": {"sourceRowCount": 1}})
    assert gql_code(body) == "NOT_FOUND"
    unknown = await api.gql("query($id: UUID!) { workspace(id: $id) { id } }", {"id": str(uuid.uuid4())})
    assert gql_answer(unknown) == {"data": {"workspace": None}, "_status": 200}
    listing = await api_b.gql(LIST, {"page": 1, "perPage": 10})
    assert listing["data"]["workspaces"]["pagination"]["total"] == 0


async def test_malformed_graphql_request_is_json_error(api: Api) -> None:
    resp = await api.http.post(
        "/graphql", content=b"{oops", headers={"Authorization": f"Bearer {api.key}", "Content-Type": "application/json"}
    )
    assert resp.status_code == 400
    assert resp.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


async def test_graphiql_is_served_on_browser_get(api: Api) -> None:
    resp = await api.http.get("/graphql", headers={"Accept": "text/html"})
    assert resp.status_code == 200
    assert "graphiql" in resp.text.lower()
