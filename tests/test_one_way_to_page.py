"""One way to page (issue 30): a Relay connection for every list, nested ones batched, the older
list fields deprecated with a date, and a ``Link`` header on every paged REST list."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from evidence_gateway.resolvers import connections
from evidence_gateway.rest_compat.openapi import document
from evidence_gateway.rest_compat.openapi_routes import OPERATIONS
from evidence_gateway.schema import relay
from tests.conftest import Api, create_workspace, gql_code
from tests.sqlcount import count_statements

NESTED = """query($after: String) {
  workspacesConnection(first: FIRST) {
    nodes {
      name
      importsConnection(first: INNER, after: $after) {
        totalCount nodes { sourceRowCount } pageInfo { hasNextPage hasPreviousPage endCursor }
      }
      packsConnection(first: INNER) { totalCount nodes { id } }
      calculationRunsConnection(first: INNER) { totalCount nodes { id } }
      evidenceItemsConnection(first: INNER) { totalCount nodes { title } }
    }
  }
}"""


def nested(first: int, inner: int) -> str:
    """The document with literal sizes (the cost limit counts a size variable as a full page)."""
    return NESTED.replace("FIRST", str(first)).replace("INNER", str(inner))


async def _workspaces_with_imports(api: Api, count: int, imports: int) -> list[dict[str, Any]]:
    made = []
    for i in range(count):
        ws = await create_workspace(api, name=f"ws-{i}")
        for n in range(imports):
            resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": n + 1})
            assert resp.status_code == 201
        made.append(ws)
    return made


async def test_nested_connections_page_each_parent_and_cost_the_same_for_1_or_many(api: Api) -> None:
    await _workspaces_with_imports(api, 6, 3)
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    counts = []
    for first in (1, 6):
        with count_statements(db) as log:
            body = await api.gql(nested(first, 2))
        assert "errors" not in body, body
        nodes = body["data"]["workspacesConnection"]["nodes"]
        assert len(nodes) == first
        for node in nodes:
            page = node["importsConnection"]
            # Newest first, two of three, per workspace, and each workspace's own total.
            assert [n["sourceRowCount"] for n in page["nodes"]] == [3, 2]
            assert page["totalCount"] == 3 and page["pageInfo"]["hasNextPage"] is True
            assert page["pageInfo"]["hasPreviousPage"] is False
        counts.append(log.count)
    assert counts[0] >= 5  # the hook counts
    assert counts[1] == counts[0], f"1 workspace: {counts[0]} statements, 6: {counts[1]}"

    # The next page from a cursor: the probe for rows before it is one statement for the batch too.
    cursor = nodes[0]["importsConnection"]["pageInfo"]["endCursor"]
    with count_statements(db) as log:
        body = await api.gql(nested(1, 2), {"after": cursor})
    page = body["data"]["workspacesConnection"]["nodes"][0]["importsConnection"]
    assert [n["sourceRowCount"] for n in page["nodes"]] == [1]
    assert page["pageInfo"] == {"hasNextPage": False, "hasPreviousPage": True, "endCursor": page["pageInfo"][
        "endCursor"]}  # fmt: skip


async def test_nested_connection_arguments_are_checked(api: Api) -> None:
    await _workspaces_with_imports(api, 1, 1)
    body = await api.gql(nested(1, 101))
    assert gql_code(body) == "BAD_USER_INPUT"
    body = await api.gql(nested(1, 1), {"after": "bm90IGEgY3Vyc29y"})
    assert gql_code(body) == "BAD_USER_INPUT"


async def test_a_failed_nested_field_answers_only_after_its_siblings_stopped_reading(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused page fails its field; graphql-core cancels the siblings and the DataLoader their
    batches, but a read already in the driver is not cut off: the answer waits for it, so no read
    outlives its request (left behind, one kept a connection half closed and hung the loop)."""
    await _workspaces_with_imports(api, 1, 1)
    real = connections.nested
    siblings_reading, refused, release = asyncio.Event(), asyncio.Event(), asyncio.Event()
    reading: list[str] = []
    finished: list[str] = []

    async def held(ctx: Any, relation: str, parents: list[Any], *args: Any, **page: Any) -> Any:
        if relation == "workspace.imports":  # refused, once the three siblings are reading
            await siblings_reading.wait()
            try:
                return await real(ctx, relation, parents, *args, **page)
            finally:
                refused.set()
        reading.append(relation)
        if len(reading) == 3:
            siblings_reading.set()
        await release.wait()
        try:
            return await real(ctx, relation, parents, *args, **page)  # refused as well: first: 101
        finally:
            finished.append(relation)

    monkeypatch.setattr(relay.connections, "nested", held)
    document = nested(1, 101)
    asking = asyncio.ensure_future(api.gql(document))
    await asyncio.wait_for(refused.wait(), 60)  # bounded: a broken hook fails, never hangs
    for _ in range(500):  # turns of the loop, not time: the answer needs no I/O from here
        await asyncio.sleep(0)
    assert not asking.done(), "answered while sibling batches were still reading"
    release.set()
    body = await asyncio.wait_for(asking, 60)
    assert gql_code(body) == "BAD_USER_INPUT", document
    assert sorted(finished) == ["workspace.calculation_runs", "workspace.evidence_items", "workspace.packs"]


async def test_top_level_connections_for_the_formerly_paged_lists(api: Api, api_b: Api) -> None:
    for i in range(3):
        resp = await api.post("/api/v2/webhook-endpoints", {"url": f"http://127.0.0.1:9/{i}"})
        assert resp.status_code == 201, resp.text
    query = """{
      webhookEndpointsConnection(first: 2) { totalCount nodes { url deliveriesConnection(first: 5) { totalCount } } }
      webhookDeliveriesConnection(first: 2) { totalCount nodes { id } }
      legacyReportsConnection(first: 2) { totalCount nodes { id } }
    }"""
    body = await api.gql(query)
    assert "errors" not in body, body
    endpoints = body["data"]["webhookEndpointsConnection"]
    assert endpoints["totalCount"] == 3
    assert [n["url"] for n in endpoints["nodes"]] == ["http://127.0.0.1:9/2", "http://127.0.0.1:9/1"]
    assert all(n["deliveriesConnection"] == {"totalCount": 0} for n in endpoints["nodes"])
    assert body["data"]["webhookDeliveriesConnection"] == {"totalCount": 0, "nodes": []}
    # Another organisation sees none of them.
    other = await api_b.gql(query)
    assert "errors" not in other, other
    assert other["data"]["webhookEndpointsConnection"] == {"totalCount": 0, "nodes": []}


async def test_another_organisations_nested_rows_never_appear(api: Api, api_b: Api) -> None:
    await _workspaces_with_imports(api, 2, 2)
    await _workspaces_with_imports(api_b, 1, 1)
    body = await api_b.gql(nested(10, 10))
    nodes = body["data"]["workspacesConnection"]["nodes"]
    assert len(nodes) == 1 and nodes[0]["importsConnection"]["totalCount"] == 1


DATED = re.compile(r"^Deprecated since \d{4}-\d{2}-\d{2}; use [a-zA-Z]+Connection\.$")
REPLACED = {
    ("Query", "workspaces"),
    ("Query", "evidenceItems"),
    ("Query", "webhookEndpoints"),
    ("Query", "webhookDeliveries"),
    ("Query", "events"),
    ("Workspace", "imports"),
    ("Workspace", "packs"),
    ("Workspace", "calculationRuns"),
    ("Workspace", "evidenceItems"),
    ("ReportPack", "evidenceItems"),
    ("WebhookEndpoint", "deliveries"),
}


async def test_every_list_outside_a_connection_is_deprecated_with_a_date(api: Api) -> None:
    body = await api.gql(
        "{ __schema { types { name fields(includeDeprecated: true) { name isDeprecated deprecationReason "
        "type { name kind ofType { name kind ofType { name kind ofType { name } } } } } } } }"
    )
    found: dict[tuple[str, str], str | None] = {}
    for t in body["data"]["__schema"]["types"]:
        if t["name"].startswith("__") or not t["fields"]:
            continue
        for f in t["fields"]:
            ty = f["type"]
            while ty.get("ofType") and ty["kind"] != "LIST":
                ty = ty["ofType"]
            is_page = (ty["name"] or "").endswith("Page")
            if ty["kind"] == "LIST" or is_page:
                found[(t["name"], f["name"])] = f["deprecationReason"] if f["isDeprecated"] else None
    for key in REPLACED:
        assert found[key] is not None and DATED.match(found[key]), (key, found.get(key))
    # What stays a plain list is bounded by nature (a pack's nine artifacts, the seeded profiles…).
    undated = {k for k, reason in found.items() if reason is None}
    assert not undated & REPLACED


def _links(resp: Any) -> dict[str, str]:
    out = {}
    for part in resp.headers["link"].split(", "):
        url, rel = re.fullmatch(r'<([^>]+)>; rel="([\w-]+)"', part).groups()  # type: ignore[union-attr]
        out[rel] = url
    return out


async def test_rest_lists_answer_a_link_header(api: Api) -> None:
    for i in range(5):
        await create_workspace(api, name=f"ws-{i}")
    resp = await api.get("/api/v2/workspaces", params={"page": 2, "per_page": 2})
    assert resp.status_code == 200 and resp.json()["pagination"] == {"page": 2, "per_page": 2, "total": 5}
    links = _links(resp)
    assert set(links) == {"first", "prev", "next", "last"}
    assert links["next"].endswith("/api/v2/workspaces?page=3&per_page=2")
    assert links["last"].endswith("page=3&per_page=2") and links["first"].endswith("page=1&per_page=2")
    last = await api.get(links["last"].split("://", 1)[1].split("/", 1)[1].join(["/", ""]))
    assert set(_links(last)) == {"first", "prev", "last"} and len(last.json()["data"]) == 1

    # Every paged list has one, including the event log's cursor list.
    for path in (
        "/api/v2/evidence-items",
        "/api/v2/webhook-endpoints",
        "/api/v2/webhooks/deliveries",
        "/api/v1/reports",
    ):
        resp = await api.get(path)
        assert resp.status_code == 200, (path, resp.text)
        assert {"first", "last"} <= set(_links(resp)), path
    assert "successor-version" in _links(resp)  # /v1/reports: the deprecation's link kept
    events = await api.get("/api/v2/events", params={"limit": 2})
    links = _links(events)
    cursor = events.json()["pagination"]["next_cursor"]
    assert links["next"].endswith(f"after={cursor}") and "limit=2" in links["next"]


def test_the_openapi_document_declares_the_link_header_of_every_paged_list() -> None:
    paths = document()["paths"]
    paged = [op for op in OPERATIONS if op.ok.shape == "page" or op.op_id == "listEvents"]
    assert len(paged) >= 8
    for op in paged:
        headers = paths[op.path][op.method]["responses"]["200"].get("headers", {})
        assert "Link" in headers, op.op_id
