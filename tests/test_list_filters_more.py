"""Filters and orderings of the remaining lists (issue 30): webhook endpoints and deliveries,
legacy reports, a workspace's imports, and the REST event log newest first. The same declaration
serves GraphQL's ``filter:``/``orderBy:`` and REST's ``filter[...]``/``sort``; a filter only
narrows, so naming another organisation's endpoint, or an endpoint a non-admin key may not read,
answers nothing."""

from __future__ import annotations

import socket
from typing import Any

from evidence_gateway.resolvers.organizations import create_api_key
from tests.conftest import Api, create_workspace, error_body
from tests.test_legacy import load, record
from tests.webhook_receiver import running

ENDPOINTS = "/api/v2/webhook-endpoints"


def _closed_port() -> int:
    """A port nothing listens on (bound, then released): a refused connection, at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


async def _nodes(api: Api, query: str, field: str, variables: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    body = await api.gql(query, variables)
    assert "errors" not in body, body
    nodes: list[dict[str, Any]] = body["data"][field]["nodes"]
    return nodes


ENDPOINTS_GQL = """query($filter: WebhookEndpointFilter, $orderBy: WebhookEndpointOrder, $first: Int, $after: String) {
  webhookEndpointsConnection(filter: $filter, orderBy: $orderBy, first: $first, after: $after) {
    nodes { id url enabled } pageInfo { hasNextPage endCursor }
  }
}"""
DELIVERIES_GQL = """query($filter: WebhookDeliveryFilter, $orderBy: WebhookDeliveryOrder) {
  webhookDeliveriesConnection(filter: $filter, orderBy: $orderBy) { nodes { id delivered eventType } }
}"""
ENDPOINT_DELIVERIES_GQL = """query($id: UUID!, $filter: WebhookDeliveryFilter) {
  webhookEndpoint(id: $id) { deliveriesConnection(filter: $filter) { totalCount nodes { id delivered } } }
}"""


async def test_webhook_endpoints_and_deliveries_filtered_on_both_transports(api: Api, api_b: Api) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/gone"
    with running() as receiver:
        live = (await api.post(ENDPOINTS, {"url": receiver.url, "description": "ops"})).json()["data"]
        off = (await api.post(ENDPOINTS, {"url": dead, "enabled": False})).json()["data"]
        sent = await api.post("/api/v2/webhooks/test", {"endpoint_id": live["id"]})
        assert sent.status_code == 200, sent.text
        typed = {"target_url": receiver.url, "event_type": "workspace.created"}
        assert (await api.post("/api/v2/webhooks/test", typed)).status_code == 200
    assert (await api.post("/api/v2/webhooks/test", {"target_url": dead})).status_code == 502

    # Endpoints: by enabled flag and URL, either order, paged stably.
    assert [
        n["id"] for n in await _nodes(api, ENDPOINTS_GQL, "webhookEndpointsConnection", {"filter": {"enabled": False}})
    ] == [off["id"]]
    assert [
        n["id"]
        for n in await _nodes(api, ENDPOINTS_GQL, "webhookEndpointsConnection", {"filter": {"urlContains": "/GONE"}})
    ] == [off["id"]]
    rest = await api.get(ENDPOINTS, params={"filter[enabled]": "true"})
    assert [e["id"] for e in rest.json()["data"]] == [live["id"]] and rest.json()["pagination"]["total"] == 1
    oldest = {"orderBy": {"field": "CREATED_AT", "direction": "ASC"}, "first": 1}
    first = (await api.gql(ENDPOINTS_GQL, oldest))["data"]["webhookEndpointsConnection"]
    second = (await api.gql(ENDPOINTS_GQL, {**oldest, "after": first["pageInfo"]["endCursor"]}))["data"]
    assert [first["nodes"][0]["id"], second["webhookEndpointsConnection"]["nodes"][0]["id"]] == [live["id"], off["id"]]
    rest = await api.get(ENDPOINTS, params={"sort": "created_at"})
    assert [e["id"] for e in rest.json()["data"]] == [live["id"], off["id"]]  # fmt: skip

    # Deliveries: by outcome, event type and endpoint; the same rows on REST.
    failed = await _nodes(api, DELIVERIES_GQL, "webhookDeliveriesConnection", {"filter": {"delivered": False}})
    assert len(failed) == 1 and failed[0]["delivered"] is False
    created = {"filter": {"eventType": ["workspace.created"]}}
    assert [n["eventType"] for n in await _nodes(api, DELIVERIES_GQL, "webhookDeliveriesConnection", created)] == [
        "workspace.created"
    ]
    to_live = await _nodes(api, DELIVERIES_GQL, "webhookDeliveriesConnection", {"filter": {"endpointId": live["id"]}})
    assert len(to_live) == 1
    rest = await api.get("/api/v2/webhooks/deliveries", params={"filter[delivered]": "false"})
    assert [d["id"] for d in rest.json()["data"]] == [failed[0]["id"]]
    every = await api.get("/api/v2/webhooks/deliveries", params={"sort": "created_at"})
    newest = await api.get("/api/v2/webhooks/deliveries")
    assert [d["id"] for d in every.json()["data"]] == [d["id"] for d in reversed(newest.json()["data"])]
    assert len(every.json()["data"]) == 3

    # One endpoint's attempts, nested in GraphQL and on its REST list.
    body = await api.gql(ENDPOINT_DELIVERIES_GQL, {"id": live["id"], "filter": {"delivered": True}})
    assert body["data"]["webhookEndpoint"]["deliveriesConnection"]["totalCount"] == 1, body
    body = await api.gql(ENDPOINT_DELIVERIES_GQL, {"id": live["id"], "filter": {"delivered": False}})
    assert body["data"]["webhookEndpoint"]["deliveriesConnection"]["totalCount"] == 0, body
    resp = await api.get(f"{ENDPOINTS}/{live['id']}/deliveries", params={"filter[delivered]": "false"})
    assert resp.status_code == 200 and resp.json()["data"] == []
    resp = await api.get(f"{ENDPOINTS}/{live['id']}/deliveries", params={"filter[event_type]": "pack.published"})
    assert resp.status_code == 200 and len(resp.json()["data"]) == 1, resp.text

    # Clear errors, named by parameter.
    resp = await api.get("/api/v2/webhooks/deliveries", params={"filter[delivered]": "maybe"})
    assert resp.status_code == 422 and error_body(resp)["details"]["fields"] == {
        "filter[delivered]": "must be true or false"
    }
    resp = await api.get(ENDPOINTS, params={"sort": "url"})
    assert resp.status_code == 422 and "sort" in error_body(resp)["details"]["fields"]


async def test_a_webhook_filter_never_widens_what_a_caller_sees(api: Api, api_b: Api) -> None:
    with running() as receiver:
        live = (await api.post(ENDPOINTS, {"url": receiver.url})).json()["data"]
        assert (await api.post("/api/v2/webhooks/test", {"endpoint_id": live["id"]})).status_code == 200
        assert (await api.post("/api/v2/webhooks/test", {"target_url": receiver.url})).status_code == 200

    # Another organisation naming org A's endpoint: nothing, on every list and transport.
    theirs = {"filter": {"endpointId": live["id"]}}
    assert await _nodes(api_b, DELIVERIES_GQL, "webhookDeliveriesConnection", theirs) == []
    assert (
        await _nodes(api_b, ENDPOINTS_GQL, "webhookEndpointsConnection", {"filter": {"urlContains": "127.0.0.1"}}) == []
    )
    resp = await api_b.get("/api/v2/webhooks/deliveries", params={"filter[endpoint_id]": live["id"]})
    assert resp.status_code == 200 and resp.json()["data"] == [] and resp.json()["pagination"]["total"] == 0
    resp = await api_b.get(f"{ENDPOINTS}/{live['id']}/deliveries", params={"filter[delivered]": "true"})
    assert resp.status_code == 404

    # A read key of org A sees the tests to a bare URL only; naming the endpoint does not widen it.
    db = api.http._transport.app.state.db  # type: ignore[attr-defined]
    reader = await create_api_key(db, "org-a", scope="read")
    as_reader = Api(api.http, reader)
    assert len(await _nodes(as_reader, DELIVERIES_GQL, "webhookDeliveriesConnection")) == 1
    assert await _nodes(as_reader, DELIVERIES_GQL, "webhookDeliveriesConnection", theirs) == []
    resp = await as_reader.get("/api/v2/webhooks/deliveries", params={"filter[endpoint_id]": live["id"]})
    assert resp.status_code == 200 and resp.json()["data"] == []
    resp = await as_reader.get(ENDPOINTS, params={"filter[enabled]": "true"})
    assert resp.status_code == 403


LEGACY_GQL = """query($filter: LegacyReportFilter, $orderBy: LegacyReportOrder) {
  legacyReportsConnection(filter: $filter, orderBy: $orderBy) { totalCount nodes { id title reportStatus } }
}"""


async def test_legacy_reports_filtered_and_ordered(api: Api, api_b: Api) -> None:
    ids = await load(
        api,
        "org-a",
        [
            record(title="FY2024 road"),
            record(title="FY2025 road", status="draft"),
            record(title="FY2025 rail"),
        ],
    )
    await load(api_b, "org-b", [record(title="FY2025 road")])
    drafts = await _nodes(api, LEGACY_GQL, "legacyReportsConnection", {"filter": {"status": ["DRAFT"]}})
    assert [(n["id"], n["reportStatus"]) for n in drafts] == [(str(ids[1]), "DRAFT")]
    fy25 = await _nodes(api, LEGACY_GQL, "legacyReportsConnection", {"filter": {"titleContains": "fy2025"}})
    assert {n["id"] for n in fy25} == {str(ids[1]), str(ids[2])}
    up = {"orderBy": {"field": "CREATED_AT", "direction": "ASC"}}
    down = {"orderBy": {"field": "CREATED_AT", "direction": "DESC"}}
    ascending = [n["id"] for n in await _nodes(api, LEGACY_GQL, "legacyReportsConnection", up)]
    assert ascending == [n["id"] for n in reversed(await _nodes(api, LEGACY_GQL, "legacyReportsConnection", down))]
    assert sorted(ascending) == sorted(str(i) for i in ids)

    resp = await api.get("/api/v1/reports", params={"filter[title_contains]": "road", "sort": "created_at"})
    assert resp.status_code == 200 and resp.headers["deprecation"] == "@1767225600"
    assert {r["title"] for r in resp.json()["data"]} == {"FY2024 road", "FY2025 road"}
    assert resp.json()["pagination"]["total"] == 2
    resp = await api.get("/api/v1/reports", params={"filter[status]": "archived"})
    assert resp.status_code == 422 and "filter[status]" in error_body(resp)["details"]["fields"]


IMPORTS_GQL = """query($id: UUID!, $filter: ImportBatchFilter, $orderBy: ImportBatchOrder) {
  workspace(id: $id) { importsConnection(filter: $filter, orderBy: $orderBy) { totalCount nodes { sourceFilename } } }
}"""


async def test_a_workspaces_imports_filtered_and_ordered(api: Api) -> None:
    ws = await create_workspace(api, name="Imports")
    for name in ("q1.csv", "q2.xlsx", "Q1-fix.csv"):
        body = {"source_row_count": 1, "source_filename": name}
        assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    variables = {"id": ws["id"], "filter": {"sourceFilenameContains": "q1"}}
    body = await api.gql(IMPORTS_GQL, {**variables, "orderBy": {"field": "CREATED_AT", "direction": "ASC"}})
    page = body["data"]["workspace"]["importsConnection"]
    assert [n["sourceFilename"] for n in page["nodes"]] == ["q1.csv", "Q1-fix.csv"] and page["totalCount"] == 2
    body = await api.gql(IMPORTS_GQL, variables)
    assert [n["sourceFilename"] for n in body["data"]["workspace"]["importsConnection"]["nodes"]] == [
        "Q1-fix.csv",
        "q1.csv",
    ]
    body = await api.gql(IMPORTS_GQL, {"id": ws["id"], "filter": {"createdAt": {"lt": "2000-01-01T00:00:00Z"}}})
    assert body["data"]["workspace"]["importsConnection"]["totalCount"] == 0


async def test_the_rest_event_log_reads_newest_first_on_request(api: Api) -> None:
    for name in ("one", "two", "three"):
        await create_workspace(api, name=name)
    oldest = (await api.get("/api/v2/events")).json()["data"]
    assert [e["sequence"] for e in oldest] == sorted(e["sequence"] for e in oldest) and len(oldest) == 3

    resp = await api.get("/api/v2/events", params={"sort": "-sequence", "limit": 2})
    assert resp.status_code == 200, resp.text
    page = resp.json()
    assert [e["sequence"] for e in page["data"]] == [oldest[2]["sequence"], oldest[1]["sequence"]]
    assert page["pagination"]["has_more"] is True
    assert 'rel="next"' in resp.headers["link"] and "sort=-sequence" in resp.headers["link"]
    after = page["pagination"]["next_cursor"]
    rest = (await api.get("/api/v2/events", params={"sort": "-sequence", "after": after})).json()
    assert [e["sequence"] for e in rest["data"]] == [oldest[0]["sequence"]] and rest["pagination"]["has_more"] is False

    # With a filter, and the explicit default; an order the log has no key for is a clear 422.
    typed = await api.get("/api/v2/events", params={"sort": "-sequence", "filter[type]": "workspace.created"})
    assert [e["sequence"] for e in typed.json()["data"]] == [e["sequence"] for e in reversed(oldest)]
    assert (await api.get("/api/v2/events", params={"sort": "sequence"})).json()["data"] == oldest
    resp = await api.get("/api/v2/events", params={"sort": "-occurred_at"})
    assert resp.status_code == 422 and list(error_body(resp)["details"]["fields"]) == ["sort"]


def test_every_connection_takes_filter_and_order_by() -> None:
    """ "Filters and ordering on every list": each field answering a connection, top-level or
    nested, takes ``filter`` and ``orderBy`` (a new connection without them fails here)."""
    from graphql import GraphQLObjectType, get_named_type

    from evidence_gateway.schema import schema

    missing = [
        f"{owner.name}.{name}"
        for owner in schema._schema.type_map.values()
        if isinstance(owner, GraphQLObjectType) and not owner.name.startswith("__")
        for name, field in owner.fields.items()
        if get_named_type(field.type).name.endswith("Connection") and not {"filter", "orderBy"} <= set(field.args)
    ]
    assert missing == []
