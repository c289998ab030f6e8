"""Nested GraphQL relations go through DataLoaders: statements per request do not grow with items."""

from __future__ import annotations

from tests.conftest import Api, create_workspace
from tests.sqlcount import count_statements

NESTED_LIST = """
query($perPage: Int!) {
  workspaces(page: 1, perPage: $perPage) {
    items {
      id name status
      imports { id sourceRowCount }
    }
    pagination { total }
  }
}"""


async def _populate(api: Api, n: int) -> None:
    for i in range(n):
        ws = await create_workspace(api, name=f"ws-{i}")
        resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1})
        assert resp.status_code == 201


async def _statements_for(api: Api, per_page: int) -> int:
    engine = api.http._transport.app.state.db.engine  # type: ignore[attr-defined]
    with count_statements(engine) as log:
        body = await api.gql(NESTED_LIST, {"perPage": per_page})
    assert "errors" not in body, body
    assert len(body["data"]["workspaces"]["items"]) == per_page
    return log.count


async def test_listing_100_workspaces_with_relations_costs_the_same_as_1(api: Api) -> None:
    await _populate(api, 100)
    one = await _statements_for(api, 1)
    hundred = await _statements_for(api, 100)
    assert one >= 4  # key lookup, count, page, imports: the hook really counts
    assert hundred == one, f"1 item: {one} statements, 100 items: {hundred}"
