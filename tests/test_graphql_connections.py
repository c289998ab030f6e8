"""Cursor connections (keyset on (created_at, id)) and node(id): paging both ways, bad cursors,
organisation scoping, totalCount only when selected."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import update

from evidence_gateway.models import Workspace
from tests.conftest import Api, create_workspace, gql_answer, gql_code
from tests.sqlcount import count_statements
from tests.test_packs import calculated_workspace, generated

PAGE = """
query($first: Int, $after: String, $last: Int, $before: String) {
  workspacesConnection(first: $first, after: $after, last: $last, before: $before) {
    edges { cursor node { id name } }
    nodes { id }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}"""


async def _page(api: Api, **args: Any) -> dict[str, Any]:
    body = await api.gql(PAGE, args)
    assert "errors" not in body, body
    page: dict[str, Any] = body["data"]["workspacesConnection"]
    assert [e["node"]["id"] for e in page["edges"]] == [n["id"] for n in page["nodes"]]
    if page["edges"]:
        assert page["pageInfo"]["startCursor"] == page["edges"][0]["cursor"]
        assert page["pageInfo"]["endCursor"] == page["edges"][-1]["cursor"]
    return page


async def _rest_order(api: Api) -> list[str]:
    return [w["id"] for w in (await api.get("/api/v2/workspaces", params={"per_page": 100})).json()["data"]]


async def test_forward_and_backward_pages_walk_the_rest_order(api: Api) -> None:
    for i in range(7):
        await create_workspace(api, name=f"ws-{i}")
    expected = await _rest_order(api)
    seen, after, infos = [], None, []
    while True:
        page = await _page(api, first=3, after=after)
        seen += [n["id"] for n in page["nodes"]]
        infos.append((page["pageInfo"]["hasPreviousPage"], page["pageInfo"]["hasNextPage"]))
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == expected
    assert infos == [(False, True), (True, True), (True, False)]
    # Backward from the end: the same rows, pages in list order.
    back, before = [], None
    while True:
        page = await _page(api, last=3, before=before)
        back = [n["id"] for n in page["nodes"]] + back
        if not page["pageInfo"]["hasPreviousPage"]:
            break
        assert page["pageInfo"]["hasNextPage"] is (before is not None)
        before = page["pageInfo"]["startCursor"]
    assert back == expected
    # Between two cursors.
    first = await _page(api, first=7)
    cursors = [e["cursor"] for e in first["edges"]]
    middle = await _page(api, first=10, after=cursors[1], before=cursors[5])
    assert [n["id"] for n in middle["nodes"]] == expected[2:5]
    assert (await _page(api, first=0))["nodes"] == []


async def test_rows_with_the_same_timestamp_are_neither_skipped_nor_repeated(api: Api) -> None:
    for i in range(5):
        await create_workspace(api, name=f"same-{i}")
    async with api.http._transport.app.state.db.write() as session:  # type: ignore[attr-defined]
        await session.execute(update(Workspace).values(created_at=datetime(2026, 1, 1, tzinfo=UTC)))
    seen, after = [], None
    while True:
        page = await _page(api, first=2, after=after)
        seen += [n["id"] for n in page["nodes"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == await _rest_order(api)
    assert len(set(seen)) == 5


async def test_bad_arguments_and_cursors_are_bad_user_input(api: Api) -> None:
    ws = await calculated_workspace(api)
    await generated(api, ws["id"])
    packs = await api.gql(
        "query($id: UUID!) { workspace(id: $id) { packsConnection { edges { cursor } } } }", {"id": ws["id"]}
    )
    pack_cursor = packs["data"]["workspace"]["packsConnection"]["edges"][0]["cursor"]
    for args, field in (
        ({"after": "not-a-cursor"}, "after"),
        ({"before": "eyJhIjoxfQ"}, "before"),
        ({"after": pack_cursor}, "after"),  # a cursor of another list
        ({"first": 101}, "first"),
        ({"last": -1}, "last"),
        ({"first": 2, "last": 2}, "last"),
    ):
        body = await api.gql(PAGE, args)
        assert gql_code(body) == "BAD_USER_INPUT", args
        assert body["data"] is None
        assert field in body["errors"][0]["extensions"]["fields"], (args, body)


async def test_forged_cursors_are_refused_before_any_query(api: Api) -> None:
    def forged(*parts: Any) -> str:
        return base64.urlsafe_b64encode(json.dumps(list(parts)).encode()).decode().rstrip("=")

    events = "query($after: String) { eventsConnection(after: $after) { nodes { id } } }"
    for cursor in (forged("event", 2**63), forged("event", -1), forged("event", "1"), forged("event", 1, 2)):
        body = await api.gql(events, {"after": cursor})
        assert gql_code(body) == "BAD_USER_INPUT" and "after" in body["errors"][0]["extensions"]["fields"], cursor
    for cursor in (forged("workspace", "2026-01-01T00:00:00", str(uuid.uuid4())), forged("workspace", "x", "y")):
        body = await api.gql(PAGE, {"after": cursor})  # a naive time, then nonsense
        assert gql_code(body) == "BAD_USER_INPUT", cursor


async def test_connections_are_scoped_to_the_organisation(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api)
    await generated(api, ws["id"])
    mine = await _page(api, first=5)
    theirs = await api_b.gql(PAGE + "", {"first": 5, "after": mine["pageInfo"]["startCursor"]})
    assert theirs["data"]["workspacesConnection"]["nodes"] == []
    count = "{ workspacesConnection { totalCount } eventsConnection { totalCount } }"
    assert (await api_b.gql(count))["data"] == {
        "workspacesConnection": {"totalCount": 0},
        "eventsConnection": {"totalCount": 0},
    }
    nested = await api_b.gql(
        "query($id: UUID!) { workspace(id: $id) { packsConnection { totalCount } } }", {"id": ws["id"]}
    )
    assert nested["data"] == {"workspace": None}
    foreign = await api_b.gql("query($w: UUID) { evidenceItemsConnection(workspaceId: $w) { totalCount } }", {
        "w": ws["id"]})  # fmt: skip
    assert gql_code(foreign) == "NOT_FOUND"


async def test_every_list_has_a_connection(api: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    item = await api.post(
        "/api/v2/evidence-items",
        {"evidence_type": "other", "title": "t", "file_name": "f", "file_url": "https://e.example/f", "workspace_id":
         ws["id"]},
    )  # fmt: skip
    assert item.status_code == 201
    body = await api.gql(
        """query($id: UUID!) {
          workspace(id: $id) {
            packsConnection(first: 5) { totalCount nodes { id } }
            calculationRunsConnection(first: 5) { totalCount nodes { id status } }
          }
          evidenceItemsConnection(workspaceId: $id) { totalCount nodes { id } }
          eventsConnection(first: 2) { totalCount nodes { sequence type } pageInfo { hasNextPage } }
        }""",
        {"id": ws["id"]},
    )
    assert "errors" not in body, body
    data = body["data"]
    assert data["workspace"]["packsConnection"] == {"totalCount": 1, "nodes": [{"id": pack["id"]}]}
    assert data["workspace"]["calculationRunsConnection"]["nodes"][0]["status"] == "COMPLETED"
    assert data["evidenceItemsConnection"] == {"totalCount": 1, "nodes": [{"id": item.json()["data"]["id"]}]}
    events = data["eventsConnection"]
    assert [e["sequence"] for e in events["nodes"]] == [1, 2] and events["pageInfo"]["hasNextPage"] is True
    assert events["totalCount"] == len((await api.get("/api/v2/events", params={"limit": 200})).json()["data"])


async def test_total_count_is_counted_only_when_selected(api: Api) -> None:
    for i in range(3):
        await create_workspace(api, name=f"ws-{i}")
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    with count_statements(db) as without:
        assert "errors" not in await api.gql("{ workspacesConnection(first: 2) { nodes { id } } }")
    with count_statements(db) as with_total:
        body = await api.gql("{ workspacesConnection(first: 2) { totalCount nodes { id } } }")
    assert body["data"]["workspacesConnection"]["totalCount"] == 3
    assert not any("count(" in s.lower() for s in without.statements)
    assert with_total.count == without.count + 1


NODE = """query($id: UUID!) { node(id: $id) { __typename id
  ... on Workspace { name } ... on ReportPack { versionNumber } ... on Event { sequence } } }"""


async def test_node_finds_every_kind_of_the_callers_records_only(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    run_id = pack["calculation_run_id"]
    event = (await api.get("/api/v2/events", params={"limit": 1})).json()["data"][0]
    expected = {
        ws["id"]: {"__typename": "Workspace", "id": ws["id"], "name": ws["name"]},
        pack["id"]: {"__typename": "ReportPack", "id": pack["id"], "versionNumber": 1},
        run_id: {"__typename": "CalculationRun", "id": run_id},
        event["id"]: {"__typename": "Event", "id": event["id"], "sequence": 1},
    }
    for node_id, shape in expected.items():
        assert (await api.gql(NODE, {"id": node_id}))["data"]["node"] == shape
        assert gql_answer(await api_b.gql(NODE, {"id": node_id})) == {"data": {"node": None}, "_status": 200}
    assert (await api.gql(NODE, {"id": str(uuid.uuid4())}))["data"] == {"node": None}
