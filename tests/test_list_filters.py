"""Filters and orderings of the lists (issue 30): one declaration per list read by GraphQL's
``filter:``/``orderBy:`` and REST's ``filter[...]``/``sort``; filters combine, every ordering
pages stably by cursor across rows with equal keys, unknown fields are clear errors, and
another organisation's rows never appear whatever the filter."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import Api, create_workspace, error_body, gql_code
from tests.test_packs import calculated_workspace, generated

WORKSPACES = """query($filter: WorkspaceFilter, $orderBy: WorkspaceOrder, $first: Int, $after: String,
                     $last: Int, $before: String) {
  workspacesConnection(filter: $filter, orderBy: $orderBy, first: $first, after: $after, last: $last,
                       before: $before) {
    totalCount
    edges { cursor node { id name status } }
    pageInfo { hasNextPage hasPreviousPage endCursor startCursor }
  }
}"""


async def _import(api: Api, ws: dict[str, Any]) -> None:
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1})
    assert resp.status_code == 201, resp.text


async def _gql_page(api: Api, **variables: Any) -> dict[str, Any]:
    body = await api.gql(WORKSPACES, variables)
    assert "errors" not in body, body
    page: dict[str, Any] = body["data"]["workspacesConnection"]
    return page


async def test_filters_combine_on_both_transports(api: Api) -> None:
    north = await create_workspace(api, name="North depot")
    await create_workspace(api, name="north hub")
    south = await create_workspace(api, name="South depot")
    for ws in (north, south):
        await _import(api, ws)

    page = await _gql_page(api, filter={"status": ["DATA_IMPORTED"], "nameContains": "NORTH"})
    assert [e["node"]["name"] for e in page["edges"]] == ["North depot"]
    assert page["totalCount"] == 1
    page = await _gql_page(api, filter={"status": ["DATA_IMPORTED", "DRAFT"], "nameContains": "depot"})
    assert sorted(e["node"]["name"] for e in page["edges"]) == ["North depot", "South depot"]
    page = await _gql_page(api, filter={"nameContains": "nORth"})
    assert sorted(e["node"]["name"] for e in page["edges"]) == ["North depot", "north hub"]

    resp = await api.get(
        "/api/v2/workspaces", params={"filter[status]": "data_imported", "filter[name_contains]": "NORTH"}
    )
    assert resp.status_code == 200, resp.text
    assert [w["name"] for w in resp.json()["data"]] == ["North depot"]
    assert resp.json()["pagination"] == {"page": 1, "per_page": 20, "total": 1}
    # The same value list, repeated or comma-separated.
    repeated = await api.get("/api/v2/workspaces?filter[status]=draft&filter[status]=data_imported")
    joined = await api.get("/api/v2/workspaces?filter[status]=draft,data_imported")
    assert len(repeated.json()["data"]) == len(joined.json()["data"]) == 3

    # A time range: created at or after the second workspace, before the third.
    second = (await api.get("/api/v2/workspaces", params={"sort": "created_at"})).json()["data"][1]
    third = (await api.get("/api/v2/workspaces", params={"sort": "created_at"})).json()["data"][2]
    ranged = await api.get(
        "/api/v2/workspaces",
        params={"filter[created_at][gte]": second["created_at"], "filter[created_at][lt]": third["created_at"]},
    )
    assert [w["id"] for w in ranged.json()["data"]] == [second["id"]]
    page = await _gql_page(api, filter={"createdAt": {"gte": second["created_at"], "lt": third["created_at"]}})
    assert [e["node"]["id"] for e in page["edges"]] == [second["id"]]
    # Characters that mean something to LIKE are matched literally.
    assert (await _gql_page(api, filter={"nameContains": "%"}))["totalCount"] == 0
    assert (await _gql_page(api, filter={"nameContains": "_"}))["totalCount"] == 0


async def test_without_the_new_parameters_a_list_answers_as_before(api: Api) -> None:
    for name in ("b", "a", "c"):
        await create_workspace(api, name=name)
    plain = (await api.get("/api/v2/workspaces")).json()
    assert [w["name"] for w in plain["data"]] == ["c", "a", "b"]  # newest first
    # The default order named explicitly, and other unknown parameters still ignored.
    unrelated = {"sort": "-created_at", "foo": "1", "filters": "x", "filtered": "y"}
    assert (await api.get("/api/v2/workspaces", params=unrelated)).json() == plain
    first = await _gql_page(api, first=2)
    named = await _gql_page(api, first=2, orderBy={"field": "CREATED_AT", "direction": "DESC"})
    assert first == named  # the same cursors too: a client's saved cursor keeps working


async def _walk(api: Api, order: dict[str, str], size: int) -> list[str]:
    """Every workspace by following endCursor, asserting no page repeats a row."""
    seen: list[str] = []
    after = None
    while True:
        page = await _gql_page(api, orderBy=order, first=size, after=after)
        ids = [e["node"]["id"] for e in page["edges"]]
        assert not set(ids) & set(seen)
        seen += ids
        if not page["pageInfo"]["hasNextPage"]:
            return seen
        after = page["pageInfo"]["endCursor"]


async def test_every_ordering_pages_stably_across_equal_keys(api: Api) -> None:
    made = [await create_workspace(api, name=name) for name in ("same", "b", "same", "a", "same", "same", "c")]
    await _import(api, made[1])  # one updated_at differs from its created_at
    by_name = sorted(made, key=lambda w: (w["name"], w["id"]))
    expected_asc = [w["id"] for w in by_name]

    assert await _walk(api, {"field": "NAME", "direction": "ASC"}, 2) == expected_asc
    assert await _walk(api, {"field": "NAME", "direction": "DESC"}, 3) == expected_asc[::-1]
    for field in ("UPDATED_AT", "CREATED_AT"):
        for direction in ("ASC", "DESC"):
            walked = await _walk(api, {"field": field, "direction": direction}, 2)
            assert sorted(walked) == sorted(w["id"] for w in made)
    created_asc = await _walk(api, {"field": "CREATED_AT", "direction": "ASC"}, 2)
    assert created_asc == [w["id"] for w in made]
    updated_asc = await _walk(api, {"field": "UPDATED_AT", "direction": "ASC"}, 3)
    assert updated_asc[-1] == made[1]["id"]  # the import touched it last

    # Backwards from the end gives the same rows in the same order.
    order = {"field": "NAME", "direction": "ASC"}
    last = await _gql_page(api, orderBy=order, last=4)
    assert [e["node"]["id"] for e in last["edges"]] == expected_asc[-4:]
    assert last["pageInfo"]["hasPreviousPage"] is True
    before = await _gql_page(api, orderBy=order, last=4, before=last["pageInfo"]["startCursor"])
    assert [e["node"]["id"] for e in before["edges"]] == expected_asc[:3]
    assert before["pageInfo"]["hasNextPage"] is True and before["pageInfo"]["hasPreviousPage"] is False

    # REST pages the same order by page/per_page.
    rest: list[str] = []
    for number in (1, 2, 3):
        resp = await api.get("/api/v2/workspaces", params={"sort": "name", "per_page": 3, "page": number})
        rest += [w["id"] for w in resp.json()["data"]]
    assert rest == expected_asc
    first_page = await api.get("/api/v2/workspaces", params={"sort": "name", "per_page": 3})
    next_link = next(link for link in first_page.headers["Link"].split(", ") if link.endswith('rel="next"'))
    assert "sort=name" in next_link and "page=2" in next_link  # the order kept
    resp = await api.get("/api/v2/workspaces", params={"sort": "-name", "per_page": 7})
    assert [w["id"] for w in resp.json()["data"]] == expected_asc[::-1]

    # A cursor is valid in the order that made it only.
    cursor = (await _gql_page(api, orderBy=order, first=1))["pageInfo"]["endCursor"]
    body = await api.gql(WORKSPACES, {"after": cursor, "orderBy": {"field": "UPDATED_AT", "direction": "ASC"}})
    assert gql_code(body) == "BAD_USER_INPUT"
    body = await api.gql(WORKSPACES, {"after": cursor})
    assert gql_code(body) == "BAD_USER_INPUT"


async def test_unknown_fields_and_values_are_clear_errors(api: Api) -> None:
    await create_workspace(api)
    resp = await api.get("/api/v2/workspaces", params={"filter[colour]": "red", "sort": "colour"})
    assert resp.status_code == 422
    body = error_body(resp)
    fields = body["details"]["fields"]
    assert fields["filter[colour]"] == "unknown filter field; one of: status, created_at, updated_at, name_contains"
    assert fields["sort"] == "unknown order field colour; one of: created_at, updated_at, name"
    assert body["details"]["code"] == "invalid_input"
    resp = await api.get("/api/v2/workspaces", params={"filter[status]": "draft,bogus"})
    assert resp.status_code == 422
    assert resp.json()["details"]["fields"]["filter[status]"].startswith("unknown value(s) bogus; one of: draft,")
    resp = await api.get("/api/v2/workspaces", params={"filter[created_at][gte]": "2026-01-01"})
    assert resp.json()["details"]["fields"] == {"filter[created_at][gte]": "must carry an offset (Z or +01:00)"}
    resp = await api.get("/api/v2/workspaces", params={"filter[created_at][after]": "2026-01-01T00:00:00Z"})
    assert resp.json()["details"]["fields"] == {"filter[created_at][after]": "unknown bound; gte or lt"}
    for bad in ("a\x00b", ""):
        resp = await api.get("/api/v2/workspaces", params={"filter[name_contains]": bad})
        assert resp.status_code == 422 and list(resp.json()["details"]["fields"]) == ["filter[name_contains]"]
    resp = await api.get("/api/v2/workspaces", params={"filter[created_at][lt]": "0001-01-01T00:00:00+01:00"})
    assert resp.json()["details"]["fields"] == {"filter[created_at][lt]": "out of range"}
    resp = await api.get("/api/v2/workspaces", params={"filter[status]": ","})
    assert resp.json()["details"]["fields"] == {"filter[status]": "give one or more values"}
    lone_surrogate = json.dumps({"query": WORKSPACES, "variables": {"filter": {"nameContains": "\ud800"}}})
    headers = {"Authorization": f"Bearer {api.key}", "Content-Type": "application/json"}
    resp = await api.http.post("/graphql", content=lone_surrogate, headers=headers)
    assert gql_code(resp.json()) == "BAD_USER_INPUT", resp.text
    resp = await api.get("/api/v2/workspaces", params={"filter[name_contains": "x"})
    assert resp.status_code == 422 and "filter[name_contains" in resp.json()["details"]["fields"]

    # GraphQL: the input type refuses an undeclared field before anything runs.
    body = await api.gql(WORKSPACES, {"filter": {"colour": "red"}})
    assert gql_code(body) in ("BAD_USER_INPUT", "GRAPHQL_VALIDATION_FAILED")
    assert "colour" in body["errors"][0]["message"]
    body = await api.gql(WORKSPACES, {"orderBy": {"field": "COLOUR", "direction": "ASC"}})
    assert "COLOUR" in body["errors"][0]["message"]
    # What the type cannot check, the declaration does, naming the field as REST does.
    body = await api.gql('{ eventsConnection(filter: {type: ["workspace.made"]}) { totalCount } }')
    assert gql_code(body) == "BAD_USER_INPUT"
    fields = body["errors"][0]["extensions"]["fields"]
    assert list(fields) == ["filter.type"] and fields["filter.type"].startswith("unknown value(s) workspace.made;")
    body = await api.gql(WORKSPACES, {"filter": {"nameContains": ""}})
    assert gql_code(body) == "BAD_USER_INPUT"
    assert body["errors"][0]["extensions"]["fields"] == {"filter.nameContains": "must be text of 1 to 200 characters"}


async def test_another_organisations_rows_never_appear(api: Api, api_b: Api) -> None:
    mine = await create_workspace(api, name="Shared name")
    theirs = await create_workspace(api_b, name="Shared name")
    await _import(api_b, theirs)

    page = await _gql_page(api, filter={"nameContains": "shared"})
    assert [e["node"]["id"] for e in page["edges"]] == [mine["id"]] and page["totalCount"] == 1
    assert (await _gql_page(api, filter={"status": ["DATA_IMPORTED"]}))["totalCount"] == 0
    resp = await api.get("/api/v2/workspaces", params={"filter[name_contains]": "shared", "sort": "name"})
    assert [w["id"] for w in resp.json()["data"]] == [mine["id"]]

    # Naming another organisation's workspace narrows to nothing; it never widens.
    query = """query($ws: UUID!) {
      eventsConnection(filter: {workspaceId: $ws}) { totalCount }
      packsConnection(filter: {workspaceId: $ws}) { totalCount }
      calculationRunsConnection(filter: {workspaceId: $ws}) { totalCount }
    }"""
    body = await api.gql(query, {"ws": theirs["id"]})
    assert body["data"] == {
        "eventsConnection": {"totalCount": 0},
        "packsConnection": {"totalCount": 0},
        "calculationRunsConnection": {"totalCount": 0},
    }
    resp = await api.get("/api/v2/events", params={"filter[workspace_id]": theirs["id"]})
    assert resp.status_code == 200 and resp.json()["data"] == []
    resp = await api.get("/api/v2/events", params={"filter[type]": "import.registered"})
    assert resp.json()["data"] == []  # only organisation B registered an import


async def test_events_by_type_time_and_either_direction(api: Api) -> None:
    first = await create_workspace(api, name="one")
    await _import(api, first)
    second = await create_workspace(api, name="two")
    await _import(api, second)
    query = """query($filter: EventFilter, $orderBy: EventOrder, $after: String) {
      eventsConnection(filter: $filter, orderBy: $orderBy, first: 1, after: $after) {
        totalCount nodes { type sequence workspaceId occurredAt } pageInfo { endCursor hasNextPage }
      }
    }"""
    body = await api.gql(
        query, {"filter": {"type": ["import.registered"]}, "orderBy": {"field": "SEQUENCE", "direction": "DESC"}}
    )
    page = body["data"]["eventsConnection"]
    assert page["totalCount"] == 2 and page["nodes"][0]["workspaceId"] == second["id"]
    body = await api.gql(
        query,
        {
            "filter": {"type": ["import.registered"]},
            "orderBy": {"field": "SEQUENCE", "direction": "DESC"},
            "after": page["pageInfo"]["endCursor"],
        },
    )
    page = body["data"]["eventsConnection"]
    assert page["nodes"][0]["workspaceId"] == first["id"] and page["pageInfo"]["hasNextPage"] is False

    everything = (await api.gql("{ eventsConnection(first: 50) { nodes { type occurredAt workspaceId } } }"))["data"]
    nodes = everything["eventsConnection"]["nodes"]
    at = next(i for i, n in enumerate(nodes) if n["workspaceId"] == second["id"])
    since = nodes[at]["occurredAt"]  # from the second workspace's creation on
    body = await api.gql(query, {"filter": {"occurredAt": {"gte": since}}})
    assert body["data"]["eventsConnection"]["totalCount"] == len(nodes) - at
    body = await api.gql(query, {"filter": {"occurredAt": {"lt": since}, "workspaceId": second["id"]}})
    assert body["data"]["eventsConnection"]["totalCount"] == 0

    resp = await api.get("/api/v2/events", params={"filter[type]": "workspace.created,import.registered", "limit": 3})
    assert [e["type"] for e in resp.json()["data"]] == ["workspace.created", "import.registered", "workspace.created"]
    resp = await api.get("/api/v2/events", params={"filter[workspace_id]": second["id"]})
    assert {e["workspace_id"] for e in resp.json()["data"]} == {second["id"]}
    resp = await api.get("/api/v2/events", params={"sort": "-sequence", "filter[workspace_id]": second["id"]})
    sequences = [e["sequence"] for e in resp.json()["data"]]
    assert resp.status_code == 200 and sequences == sorted(sequences, reverse=True) and sequences


async def test_packs_awaiting_approval_and_runs_by_status(api: Api, api_b: Api) -> None:
    ws = await calculated_workspace(api, name="Q1")
    await generated(api, ws["id"])
    pending = (await generated(api, ws["id"]))["data"]
    resp = await api.post(f"/api/v2/packs/{pending['id']}/approvals", {"action_type": "requested"})
    assert resp.status_code == 201, resp.text
    other = await calculated_workspace(api_b, name="Q1")
    other_pack = (await generated(api_b, other["id"]))["data"]
    assert (
        await api_b.post(f"/api/v2/packs/{other_pack['id']}/approvals", {"action_type": "requested"})
    ).status_code == 201

    body = await api.gql(
        """{
          packsConnection(filter: {status: [IN_REVIEW]}) { totalCount nodes { id status versionNumber } }
          all: packsConnection(orderBy: {field: CREATED_AT, direction: ASC}) { nodes { versionNumber } }
          calculationRunsConnection(filter: {status: [COMPLETED]}) { totalCount nodes { workspaceId } }
          failed: calculationRunsConnection(filter: {status: [FAILED]}) { totalCount }
        }"""
    )
    assert "errors" not in body, body
    data = body["data"]
    assert data["packsConnection"]["nodes"] == [{"id": pending["id"], "status": "IN_REVIEW", "versionNumber": 2}]
    assert [n["versionNumber"] for n in data["all"]["nodes"]] == [1, 2]
    assert data["calculationRunsConnection"] == {"totalCount": 1, "nodes": [{"workspaceId": ws["id"]}]}
    assert data["failed"] == {"totalCount": 0}

    # The nested connections take the same arguments, batched per page of parents as before.
    nested = await api.gql(
        """{ workspacesConnection { nodes { id
              packsConnection(filter: {status: [IN_REVIEW]}) { totalCount nodes { id } }
              oldestFirst: packsConnection(orderBy: {field: CREATED_AT, direction: ASC}) { nodes { versionNumber } }
              calculationRunsConnection(filter: {status: [FAILED]}) { totalCount }
              evidenceItemsConnection(filter: {titleContains: "x"}) { totalCount } } } }"""
    )
    assert "errors" not in nested, nested
    assert nested["data"]["workspacesConnection"]["nodes"] == [
        {
            "id": ws["id"],
            "packsConnection": {"totalCount": 1, "nodes": [{"id": pending["id"]}]},
            "oldestFirst": {"nodes": [{"versionNumber": 1}, {"versionNumber": 2}]},
            "calculationRunsConnection": {"totalCount": 0},
            "evidenceItemsConnection": {"totalCount": 0},
        }
    ]

    resp = await api.get("/api/v2/packs", params={"filter[status]": "in_review"})
    assert resp.status_code == 200, resp.text
    listed = resp.json()
    assert [p["id"] for p in listed["data"]] == [pending["id"]] and listed["pagination"]["total"] == 1
    assert listed["data"][0]["summary_pdf_url"]  # rendered as the pack detail renders it
    resp = await api.get("/api/v2/packs", params={"sort": "created_at", "filter[workspace_id]": ws["id"]})
    assert [p["version_number"] for p in resp.json()["data"]] == [1, 2]
    resp = await api.get("/api/v2/calculation-runs", params={"filter[status]": "completed,failed"})
    assert [r["workspace_id"] for r in resp.json()["data"]] == [ws["id"]]
    resp = await api.get("/api/v2/packs", params={"filter[workspace_id]": other["id"]})
    assert resp.json() == {"data": [], "pagination": {"page": 1, "per_page": 20, "total": 0}}
    resp = await api.get("/api/v2/calculation-runs", params={"sort": "-status"})
    assert resp.status_code == 422 and resp.json()["details"]["fields"] == {
        "sort": "unknown order field status; one of: created_at"
    }


async def test_evidence_items_filtered_and_ordered_by_title(api: Api) -> None:
    ws = await create_workspace(api)
    for title, kind, status in (
        ("Fuel March", "fuel_receipt", "verified"),
        ("fuel April", "fuel_receipt", "unverified"),
        ("Charging", "charging_invoice", "verified"),
    ):
        body = {
            "evidence_type": kind,
            "title": title,
            "file_name": "f.pdf",
            "file_url": "https://files.example.com/f.pdf",
            "verification_status": status,
            "workspace_id": ws["id"],
        }
        assert (await api.post("/api/v2/evidence-items", body)).status_code == 201
    body = await api.gql(
        """{ evidenceItemsConnection(filter: {titleContains: "FUEL", evidenceType: [FUEL_RECEIPT]},
                                      orderBy: {field: TITLE, direction: ASC}) { nodes { title } } }"""
    )
    assert [n["title"] for n in body["data"]["evidenceItemsConnection"]["nodes"]] == ["Fuel March", "fuel April"]
    resp = await api.get(
        "/api/v2/evidence-items",
        params={"workspace_id": ws["id"], "filter[verification_status]": "verified", "sort": "-title"},
    )
    assert [i["title"] for i in resp.json()["data"]] == ["Fuel March", "Charging"]
    assert resp.json()["pagination"]["total"] == 2


async def test_the_same_filter_lists_the_same_rows_on_both_transports(api: Api) -> None:
    """One declaration, one meaning: each list's REST parameters and GraphQL arguments answer the
    same rows in the same order."""
    ws = await calculated_workspace(api, name="Parity depot")
    await create_workspace(api, name="Other")
    await generated(api, ws["id"])
    item = {"evidence_type": "telematics", "title": "Parity log", "file_name": "t.csv"}
    item |= {"file_url": "https://files.example.com/t.csv", "workspace_id": ws["id"]}
    assert (await api.post("/api/v2/evidence-items", item)).status_code == 201
    cases = [
        ("/api/v2/workspaces", {"filter[name_contains]": "depot", "sort": "name"},
         "workspacesConnection", '{nameContains: "depot"}', "{field: NAME, direction: ASC}"),
        ("/api/v2/packs", {"filter[workspace_id]": ws["id"], "filter[status]": "generated"},
         "packsConnection", f'{{workspaceId: "{ws["id"]}", status: [GENERATED]}}', "null"),
        ("/api/v2/calculation-runs", {"filter[status]": "completed", "sort": "created_at"},
         "calculationRunsConnection", "{status: [COMPLETED]}", "{field: CREATED_AT, direction: ASC}"),
        ("/api/v2/evidence-items", {"filter[evidence_type]": "telematics", "sort": "-title"},
         "evidenceItemsConnection", "{evidenceType: [TELEMATICS]}", "{field: TITLE, direction: DESC}"),
        ("/api/v2/events", {"filter[type]": "pack.generated,workspace.created"},
         "eventsConnection", '{type: ["pack.generated", "workspace.created"]}', "null"),
    ]  # fmt: skip
    for path, params, field, where, order in cases:
        rest = await api.get(path, params=params)
        assert rest.status_code == 200, rest.text
        rest_ids = [row["id"] for row in rest.json()["data"]]
        body = await api.gql(f"{{ {field}(filter: {where}, orderBy: {order}) {{ nodes {{ id }} }} }}")
        assert "errors" not in body, body
        assert rest_ids and [n["id"] for n in body["data"][field]["nodes"]] == rest_ids, path
