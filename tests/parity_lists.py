"""Read paths of the parity tests beyond one record: list pages walked one at a time, persisted
GraphQL documents, the command line's key list and GraphQL subscriptions."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import re
from typing import Any

from evidence_gateway import cli
from tests.conftest import Api
from tests.live_server import ws_served
from tests.parity_queries import EV, WE, WORKSPACE_TREE, D, E, L, P, R, W, get_json, gql_data
from tests.parity_scenario import Refs
from tests.parity_support import Running, first_difference, from_graphql, spelled, unsigned
from tests.wsclient import GraphQLWS

# ---- persisted queries --------------------------------------------------------------------------


def _unsigned_links(value: Any) -> Any:
    """Every signed link of an answer up to its query's names (they expire by the second)."""
    if isinstance(value, dict):
        return {k: _unsigned_links(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unsigned_links(v) for v in value]
    return re.sub(r"(expires|signature)=[^&]*", r"\1=…", value) if isinstance(value, str) else value


async def persisted_problems(api: Api, refs: Refs) -> list[str]:
    """A persisted document (docs/graphql.md, automatic persisted queries) answers what the
    document answers: when registered, by its hash alone, and by GET."""
    variables = {"ws": refs["ws"]}
    digest = hashlib.sha256(WORKSPACE_TREE.encode()).hexdigest()
    extensions = {"persistedQuery": {"version": 1, "sha256Hash": digest}}
    headers = {"Authorization": f"Bearer {api.key}"}
    answers = {"document": await api.http.post("/graphql", json={"query": WORKSPACE_TREE, "variables": variables},
                                               headers=headers)}  # fmt: skip
    answers["registered"] = await api.http.post(
        "/graphql", json={"query": WORKSPACE_TREE, "variables": variables, "extensions": extensions}, headers=headers
    )
    answers["hash"] = await api.http.post("/graphql", json={"variables": variables, "extensions": extensions},
                                          headers=headers)  # fmt: skip
    query = {"extensions": json.dumps(extensions), "variables": json.dumps(variables)}
    answers["GET"] = await api.http.get("/graphql", params=query, headers=headers)
    bodies = {how: _unsigned_links(resp.json()) for how, resp in answers.items()}
    found = [f"persisted query by {how}: {resp.status_code} {resp.text[:300]}" for how, resp in answers.items()
             if resp.status_code != 200 or "errors" in resp.json()]  # fmt: skip
    for how, body in bodies.items():
        difference = first_difference(bodies["document"].get("data"), body.get("data"))
        if difference:
            found.append(f"persisted query by {how} answers differently at {difference}")
    return found


# ---- the command line ---------------------------------------------------------------------------


def _cli(*args: str) -> str:
    """The command's entry point, in the calling thread (it runs its own event loop), its output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(list(args)) == 0
    return out.getvalue()


def _minute(instant: str | None) -> str:
    return "-" if instant is None else instant[:16].replace("T", " ")


async def cli_problems(run: Running, keys: list[dict[str, Any]]) -> list[str]:
    """``keys list`` shows each key as ``apiKeys`` does, to the minute (docs/operations.md)."""
    org = (await gql_data(run.api, "{ viewer { organizationName } }"))["viewer"]["organizationName"]
    table = await asyncio.to_thread(_cli, "keys", "list", "--org", org, "--database-url", run.url)
    lines = [line.split() for line in table.splitlines()[1:]]
    shown = {line[0]: line[1:] for line in lines}
    found = []
    for key in keys:
        # ID PREFIX NAME SCOPE CREATED (date time) LAST USED EXPIRES REVOKED, "-" for none.
        expected = [key["displayPrefix"], key["name"] or "-", key["scope"].lower()]
        for instant in (key["createdAt"], key["lastUsedAt"], key["expiresAt"], key["revokedAt"]):
            expected += _minute(instant).split()
        got = shown.get(key["id"]) or []
        if got and key["displayPrefix"] == (run.api.key or "")[:10] and key["lastUsedAt"]:
            # The key this test calls with: its last use moves on with the test's own requests.
            got, expected = got[:5] + got[7:], expected[:5] + expected[7:]
        if got != expected:
            found.append(f"keys list shows {key['id']} as {got}, apiKeys as {expected}")
    return found


# ---- list pages --------------------------------------------------------------------------------

REST_PAGED = [
    "/api/v2/workspaces", "/api/v2/evidence-items", "/api/v2/evidence-items?workspace_id={ws}",
    "/api/v2/webhook-endpoints", "/api/v2/webhooks/deliveries", "/api/v2/webhook-endpoints/{endpoint}/deliveries",
    "/api/v1/reports",
]  # fmt: skip
GQL_PAGED = [("workspaces", W), ("evidenceItems", E), ("webhookEndpoints", WE), ("webhookDeliveries", D),
             ("legacyReports", L)]  # fmt: skip
# Connection -> (the field path to it, its arguments' declarations, its node selection).
GQL_CONNECTIONS = [
    (["workspacesConnection"], W), (["evidenceItemsConnection"], E), (["eventsConnection"], EV),
    (["workspace", "calculationRunsConnection"], R), (["workspace", "packsConnection"], P),
]  # fmt: skip


def _connection_page(path: list[str], selection: str) -> str:
    inner = (
        f"{path[-1]}(first: $first, after: $after, last: $last, before: $before) {{ "
        f"edges {{ node {{ {selection} }} }} pageInfo {{ hasNextPage hasPreviousPage startCursor endCursor }} }}"
    )
    if len(path) == 2:
        inner = f"{path[0]}(id: $ws) {{ {inner} }}"
    declared = "$first: Int, $after: String, $last: Int, $before: String" + (", $ws: UUID!" if len(path) == 2 else "")
    return f"query({declared}) {{ {inner} }}"


def _same(found: list[str], name: str, walked: list[Any], whole: list[Any]) -> None:
    if not whole:
        found.append(f"{name}: the big page is empty, nothing was compared")
    if [spelled(unsigned(r)) for r in walked] != [spelled(unsigned(r)) for r in whole]:
        found.append(f"{name}: pages give {[r['id'] for r in walked]}, one page {[r['id'] for r in whole]}")


async def _rest_pages(api: Api, refs: Refs, found: list[str]) -> None:
    for template in REST_PAGED:
        path = template.format(ws=refs["ws"], endpoint=refs["endpoint"])
        glue = "&" if "?" in path else "?"
        whole = await get_json(api, f"{path}{glue}per_page=100")
        walked: list[Any] = []
        for number in range(1, whole["pagination"]["total"] + 2):  # one past the end: empty, same total
            body = await get_json(api, f"{path}{glue}per_page=1&page={number}")
            if body["pagination"] != {"page": number, "per_page": 1, "total": whole["pagination"]["total"]}:
                found.append(f"{path} page {number}: pagination {body['pagination']}")
            walked += body["data"]
        _same(found, f"REST {template}", walked, whole["data"])

    log: list[Any] = []
    after = None
    while True:
        body = await get_json(api, "/api/v2/events", limit=4, **({"after": after} if after else {}))
        log += body["data"]
        after = body["pagination"]["next_cursor"]
        if not body["pagination"]["has_more"]:
            break
    _same(found, "REST /api/v2/events", log, (await get_json(api, "/api/v2/events", limit=200))["data"])


async def _graphql_pages(api: Api, found: list[str]) -> None:
    for field_name, selection in GQL_PAGED:
        document = f"query($p: Int!, $n: Int!) {{ {field_name}(page: $p, perPage: $n) {{ items {{ {selection} }} }} }}"
        whole = (await gql_data(api, document, {"p": 1, "n": 20}))[field_name]["items"]
        walked: list[Any] = []
        for number in range(1, len(whole) + 2):
            walked += (await gql_data(api, document, {"p": number, "n": 1}))[field_name]["items"]
        _same(found, f"GraphQL {field_name}", [from_graphql(r) for r in walked], [from_graphql(r) for r in whole])

    events = (
        "query($after: String, $first: Int!) { events(after: $after, first: $first) { "
        f"items {{ {EV} }} nextCursor hasMore }} }}"
    )
    log: list[Any] = []
    after = None
    while True:
        slice_ = (await gql_data(api, events, {"after": after, "first": 4}))["events"]
        log += slice_["items"]
        after = slice_["nextCursor"]
        if not slice_["hasMore"]:
            break
    _same(found, "GraphQL events", log, (await gql_data(api, events, {"first": 50}))["events"]["items"])


async def _connection_pages(api: Api, refs: Refs, path: list[str], selection: str, found: list[str]) -> None:
    document = _connection_page(path, selection)
    scope = {"ws": refs["ws"]} if len(path) == 2 else {}

    async def connection(**args: Any) -> dict[str, Any]:
        data = await gql_data(api, document, {**scope, **args})
        for step in path:
            data = data[step]
        return dict(data)

    whole = [e["node"] for e in (await connection(first=50))["edges"]]
    forward: list[Any] = []
    backward: list[Any] = []
    page = await connection(first=2)
    while True:
        forward += [e["node"] for e in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        page = await connection(first=2, after=page["pageInfo"]["endCursor"])
    page = await connection(last=2)
    while True:
        backward = [e["node"] for e in page["edges"]] + backward
        if not page["pageInfo"]["hasPreviousPage"]:
            break
        page = await connection(last=2, before=page["pageInfo"]["startCursor"])
    name = ".".join(path)
    _same(found, f"GraphQL {name} forwards", [from_graphql(r) for r in forward], [from_graphql(r) for r in whole])
    _same(found, f"GraphQL {name} backwards", [from_graphql(r) for r in backward], [from_graphql(r) for r in whole])


async def page_problems(api: Api, refs: Refs) -> list[str]:
    """Every list walked one small page at a time, forwards by page number or cursor and backwards
    by cursor, gives the items of one big page, in its order, each spelled the same."""
    found: list[str] = []
    await _rest_pages(api, refs, found)
    await _graphql_pages(api, found)
    for path, selection in GQL_CONNECTIONS:
        await _connection_pages(api, refs, path, selection, found)
    return found


# ---- subscriptions -------------------------------------------------------------------------------


async def subscribed(run: Running, pack_id: str, log: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    """The live read paths (graphql-transport-ws): a pack's first answer is the pack as it is
    now; the events after the log's first cursor are replayed from the log."""
    async with ws_served(run.app) as url, GraphQLWS.connect(url, {"authorization": f"Bearer {run.api.key}"}) as ws:
        pack = await ws.data(await ws.subscribe(f"subscription($id: UUID!) {{ pack(id: $id) {{ {P} }} }}",
                                                {"id": pack_id}))  # fmt: skip
        events = await ws.subscribe(f"subscription($after: String) {{ events(after: $after) {{ {EV} }} }}",
                                    {"after": log[0]["cursor"]})  # fmt: skip
        replayed = [(await ws.data(events))["events"] for _ in log[1:]]
    return pack["pack"], replayed
