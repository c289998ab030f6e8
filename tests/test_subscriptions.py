"""GraphQL subscriptions over a real WebSocket (graphql-transport-ws), on SQLite and PostgreSQL.

The app runs behind uvicorn on a free port in this process (its lifespan from the ``app``
fixture); changes are made through the API; every wait is for a condition against a deadline.
The two-node case starts two real ``evidence-gateway serve`` processes on one PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.core.events import cursor_of
from evidence_gateway.core.subscriptions import SubscriptionHub
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.web import graphiql
from tests import serve_process
from tests.conftest import PG_AVAILABLE, Api, create_workspace
from tests.live_server import ws_served
from tests.test_legacy import record
from tests.test_packs import calculated_workspace, generated
from tests.waiting import eventually
from tests.wsclient import LEGACY_PROTOCOL, GraphQLWS

EVENTS = "subscription($after: String, $types: [String!]) { events(after: $after, types: $types) { sequence cursor type subjectId } }"  # noqa: E501
PACK = "subscription($id: UUID!) { pack(id: $id) { id status approvals { actionType } } }"


def hub_of(app: Starlette) -> SubscriptionHub:
    hub: SubscriptionHub = app.state.subscriptions
    return hub


@pytest.fixture
async def ws_url(app: Starlette) -> AsyncIterator[str]:
    """The app (its lifespan already running) served by uvicorn on a free port."""
    async with ws_served(app) as url:
        yield url
    # Every subscription ended with its socket: no tail, no subscriber left behind.
    assert hub_of(app).subscriber_count == 0


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


async def end_cursor(api: Api) -> str:
    """The cursor of the organisation's last event (of sequence 0 on an empty log)."""
    body = await api.gql("{ events(first: 200) { nextCursor hasMore } }")
    assert not body["data"]["events"]["hasMore"], body
    return body["data"]["events"]["nextCursor"] or cursor_of(0)


async def workspaces(api: Api, count: int) -> list[str]:
    return [(await create_workspace(api, name=f"ws {n}"))["id"] for n in range(count)]


# ---- the connection: protocol and key ----------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        None,
        {},
        {"authorization": "Bearer evk_" + "0" * 48},  # well-formed, unknown
        {"authorization": "evk_not-a-key"},
        {"authorization": 42},
        {"headers": {"Authorization": "Bearer ..."}},
    ],
)
async def test_connection_without_a_valid_key_is_refused(ws_url: str, payload: dict[str, Any] | None) -> None:
    async with GraphQLWS.connect(ws_url, init=False) as client:
        await client.send({"type": "connection_init", **({"payload": payload} if payload is not None else {})})
        assert await client.closed() == (4403, "Forbidden")


async def test_the_key_is_read_whatever_the_case_of_its_name(ws_url: str, key_a: str) -> None:
    for name in ("authorization", "Authorization"):
        async with GraphQLWS.connect(ws_url, {name: f"Bearer {key_a}"}) as client:
            op = await client.subscribe(EVENTS, {"after": cursor_of(0)})
            await client.complete(op)
    # Two spellings with different values are ambiguous: refused.
    async with GraphQLWS.connect(ws_url, init=False) as client:
        both = {"authorization": f"Bearer {key_a}", "Authorization": "Bearer evk_other"}
        await client.send({"type": "connection_init", "payload": both})
        assert await client.closed() == (4403, "Forbidden")


async def test_protocol_rules(ws_url: str, api: Api, key_a: str) -> None:
    # The legacy subscriptions-transport-ws protocol is not offered.
    async with GraphQLWS.connect(ws_url, init=False, subprotocols=(LEGACY_PROTOCOL,)) as client:
        assert (await client.closed())[0] == 4406
    # No subscription before connection_init.
    async with GraphQLWS.connect(ws_url, init=False) as client:
        await client.subscribe(EVENTS)
        assert (await client.closed())[0] == 4401
    # Queries and mutations go over HTTP; the socket refuses them before anything runs.
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        for document in (
            "{ events { items { sequence } } }",
            'mutation { createWorkspace(input: {name: "x"}) { id } }',
        ):
            message = await client.message(await client.subscribe(document))
            assert message["type"] == "error", message
            assert message["payload"][0]["extensions"]["code"] == "BAD_USER_INPUT"
            assert "POST /graphql" in message["payload"][0]["message"]
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0
    # A subscribe payload the protocol does not allow, and a message that is not JSON: 4400.
    for raw in (json.dumps({"id": "1", "type": "subscribe", "payload": "x"}), "{not json", '{"a": NaN}'):
        async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
            await client.ws.send(raw)
            assert (await client.closed())[0] == 4400, raw
    # And HTTP refuses subscriptions (they cannot stream there).
    body = await api.gql("subscription { events { sequence } }")
    assert body["_status"] == 400 and body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"


# ---- events: replay, live, filter, isolation -----------------------------------------------------------


async def test_replay_then_live_without_gaps_or_duplicates_across_a_reconnect(
    app: Starlette, ws_url: str, api: Api, key_a: str
) -> None:
    await workspaces(api, 3)
    seen: list[dict[str, Any]] = []
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(EVENTS, {"after": cursor_of(1)})
        seen += [d["events"] for d in await client.take(op, 2)]  # the backlog: 2 and 3
        await workspaces(api, 2)
        seen += [d["events"] for d in await client.take(op, 2)]  # live: 4 and 5
    # Disconnected: what happens now must come on the next connection, from the last cursor.
    await eventually(lambda: hub_of(app).subscriber_count == 0, "the subscription to end with its socket")
    await workspaces(api, 3)
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(EVENTS, {"after": seen[-1]["cursor"]})
        seen += [d["events"] for d in await client.take(op, 3)]
        await workspaces(api, 1)
        seen += [d["events"] for d in await client.take(op, 1)]
        assert client.pending(op) == 0
    assert [e["sequence"] for e in seen] == list(range(2, 10))
    assert {e["type"] for e in seen} == {"workspace.created"}
    assert all(e["cursor"] == cursor_of(e["sequence"]) for e in seen)


async def test_without_a_cursor_only_new_events_come(app: Starlette, ws_url: str, api: Api, key_a: str) -> None:
    await workspaces(api, 2)
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(EVENTS)
        await eventually(lambda: hub_of(app).live_count == 1, "the subscription to go live")
        created = await workspaces(api, 1)
        event = (await client.data(op))["events"]
        assert (event["sequence"], event["subjectId"]) == (3, created[0])


async def test_types_filter(ws_url: str, api: Api, key_a: str) -> None:
    after = await end_cursor(api)
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(EVENTS, {"after": after, "types": ["workspace.status_changed"]})
        ws_id = (await create_workspace(api))["id"]
        assert (await api.post(f"/api/v2/workspaces/{ws_id}/imports", {"source_row_count": 1})).status_code == 201
        event = (await client.data(op))["events"]
        # workspace.created (1) and import.registered (2) are filtered out.
        assert (event["type"], event["sequence"], event["subjectId"]) == ("workspace.status_changed", 3, ws_id)
        bad = await client.message(await client.subscribe(EVENTS, {"types": ["workspace.created", "nope"]}))
        assert bad["type"] == "next", bad
        error = bad["payload"]["errors"][0]
        assert error["extensions"]["code"] == "BAD_USER_INPUT" and "nope" in error["extensions"]["fields"]["types"]
        bad = await client.message(await client.subscribe(EVENTS, {"after": "not-a-cursor"}))
        assert bad["payload"]["errors"][0]["extensions"]["fields"] == {"after": "not a cursor returned by this API"}
        assert client.pending(op) == 0


async def test_another_organisation_sees_nothing(app: Starlette, ws_url: str, api: Api, api_b: Api, key_b: str) -> None:
    async with GraphQLWS.connect(ws_url, bearer(key_b)) as client:
        everything = await client.subscribe(EVENTS, {"after": cursor_of(0)})
        live = await client.subscribe(EVENTS)
        await eventually(lambda: hub_of(app).live_count == 2, "both subscriptions to go live")
        await workspaces(api, 3)  # organisation A
        own = (await create_workspace(api_b))["id"]
        # Events come in order: had any of A's been delivered, it would come before B's own.
        for op in (everything, live):
            event = (await client.data(op))["events"]
            assert (event["sequence"], event["subjectId"]) == (1, own)
        ws = await calculated_workspace(api)
        pack = (await generated(api, ws["id"]))["data"]
        message = await client.message(await client.subscribe(PACK, {"id": pack["id"]}))
        assert message["payload"]["data"] is None
        assert message["payload"]["errors"][0]["extensions"]["code"] == "NOT_FOUND"
        # The same answer as a mutation on it gives (the pack(id) query answers null instead).
        approve = "mutation($id: UUID!) { recordApproval(packId: $id, input: {actionType: REQUESTED}) { statusAfter } }"
        refused = await api_b.gql(approve, {"id": pack["id"]})
        refused["errors"][0]["extensions"].pop("request_id")  # an HTTP answer's own (tests/test_request_ids.py)
        shown = ("message", "extensions")
        assert {k: refused["errors"][0][k] for k in shown} == {k: message["payload"]["errors"][0][k] for k in shown}
        assert (await api_b.gql("query($id: UUID!) { pack(id: $id) { id } }", {"id": pack["id"]}))["data"] == {
            "pack": None
        }
        # Nor any of A's later events (calculation, pack): B's next own event comes next.
        own = (await create_workspace(api_b))["id"]
        for op in (everything, live):
            event = (await client.data(op))["events"]
            assert (event["sequence"], event["subjectId"]) == (2, own)


async def test_subscribers_asking_differently_each_get_their_own_answer(ws_url: str, api: Api, key_a: str) -> None:
    """One execution per event is shared only by subscribers whose answer is the same."""
    include = "subscription($t: Boolean!, $after: String) { events(after: $after) { sequence type @include(if: $t) } }"
    after = {"after": cursor_of(0)}
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as one, GraphQLWS.connect(ws_url, bearer(key_a)) as two:
        plain = [await one.subscribe(EVENTS, after), await two.subscribe(EVENTS, after)]
        with_type = await one.subscribe(include, {**after, "t": True})
        without_type = await two.subscribe(include, {**after, "t": False})
        aliased = await two.subscribe(f'subscription {{ events(after: "{after["after"]}") {{ n: sequence }} }}')
        ws_id = (await create_workspace(api))["id"]
        for client, op in ((one, plain[0]), (two, plain[1])):
            assert (await client.data(op))["events"] == {
                "sequence": 1,
                "cursor": cursor_of(1),
                "type": "workspace.created",
                "subjectId": ws_id,
            }
        assert (await one.data(with_type))["events"] == {"sequence": 1, "type": "workspace.created"}
        assert (await two.data(without_type))["events"] == {"sequence": 1}
        assert (await two.data(aliased))["events"] == {"n": 1}


ENDPOINT_EVENTS = (
    'subscription($after: String) { events(after: $after, types: ["webhook_endpoint.created"]) { type data } }'
)


async def test_endpoint_urls_reach_admin_subscribers_only(app: Starlette, ws_url: str, api: Api, key_a: str) -> None:
    """One document, one event, two subscribers: the admin key's sees the URL, the read key's null
    (shared results are kept per view)."""
    reader_key = await create_api_key(app.state.db, "org-a", scope="read")
    after = await end_cursor(api)
    url = "http://127.0.0.1:9/hooks/secret-token-456"
    async with (
        GraphQLWS.connect(ws_url, bearer(key_a)) as admin,
        GraphQLWS.connect(ws_url, bearer(reader_key)) as reader,
    ):
        admins = await admin.subscribe(ENDPOINT_EVENTS, {"after": after})
        readers = await reader.subscribe(ENDPOINT_EVENTS, {"after": after})
        assert (await api.post("/api/v2/webhook-endpoints", {"url": url})).status_code == 201
        assert (await admin.data(admins))["events"]["data"]["url"] == url
        seen = (await reader.data(readers))["events"]
        assert seen["type"] == "webhook_endpoint.created" and seen["data"]["url"] is None
        # And the other way round: a reader first, then an admin, on one more event.
        readers_2 = await reader.subscribe(ENDPOINT_EVENTS, {"after": after})
        assert (await reader.data(readers_2))["events"]["data"]["url"] is None
        admins_2 = await admin.subscribe(ENDPOINT_EVENTS, {"after": after})
        assert (await admin.data(admins_2))["events"]["data"]["url"] == url


# ---- pack status --------------------------------------------------------------------------------------


async def test_pack_status_changes(ws_url: str, api: Api, key_a: str) -> None:
    watched = (await generated(api, (await calculated_workspace(api))["id"]))["data"]
    other = (await generated(api, (await calculated_workspace(api))["id"]))["data"]
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(PACK, {"id": watched["id"]})
        first = (await client.data(op))["pack"]
        assert (first["id"], first["status"], first["approvals"]) == (watched["id"], "GENERATED", [])
        steps = [("requested", "in_review"), ("approved", "approved"), ("published", "published")]
        for number, (action, status) in enumerate(steps, start=1):
            # The other pack's changes (and its workspace's) come first and must not wake this one.
            noise = await api.post(f"/api/v2/packs/{other['id']}/approvals", {"action_type": action})
            assert noise.status_code == 201, noise.text
            resp = await api.post(f"/api/v2/packs/{watched['id']}/approvals", {"action_type": action})
            assert resp.status_code == 201, resp.text
            now = (await client.data(op))["pack"]
            # Read afresh each time: nothing cached from the connection's earlier messages.
            assert (now["status"], len(now["approvals"])) == (status.upper(), number), now
        unknown = await client.message(await client.subscribe(PACK, {"id": str(uuid.uuid4())}))
        assert unknown["payload"]["errors"][0]["extensions"]["code"] == "NOT_FOUND"
        assert client.pending(op) == 0


# ---- limits and endings ---------------------------------------------------------------------------------


async def test_a_subscriber_too_slow_is_ended_and_resumes_from_its_cursor(
    app: Starlette, ws_url: str, api: Api, key_a: str
) -> None:
    hub_of(app).max_pending = 1  # an import commits two events at once: more than fits
    start = await end_cursor(api)
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(EVENTS, {"after": start})
        await eventually(lambda: hub_of(app).live_count == 1, "the subscription to go live")
        ws_id = (await create_workspace(api))["id"]
        first = (await client.data(op))["events"]
        assert (await api.post(f"/api/v2/workspaces/{ws_id}/imports", {"source_row_count": 1})).status_code == 201
        ended = await client.message(op)
        error = ended["payload"]["errors"][0]
        assert error["extensions"]["code"] == "SUBSCRIBER_TOO_SLOW", ended
        assert error["extensions"]["after"] == first["cursor"] and "subscribe again" in error["message"]
        assert (await client.message(op))["type"] == "complete"
        hub_of(app).max_pending = 1_000
        again = await client.subscribe(EVENTS, {"after": error["extensions"]["after"]})
        rest = [d["events"]["type"] for d in await client.take(again, 2)]
        assert rest == ["import.registered", "workspace.status_changed"]


async def test_stopping_the_hub_ends_subscriptions_with_a_cursor(
    app: Starlette, ws_url: str, api: Api, key_a: str
) -> None:
    await workspaces(api, 1)
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(EVENTS, {"after": cursor_of(0)})
        await client.data(op)
        await hub_of(app).stop()
        try:
            error = (await client.message(op))["payload"]["errors"][0]
            assert error["extensions"] == {"after": cursor_of(1), "code": "SHUTTING_DOWN"}
            refused = await client.message(await client.subscribe(EVENTS))
            assert refused["payload"]["errors"][0]["extensions"]["code"] == "SHUTTING_DOWN"
        finally:
            hub_of(app).start()


# ---- the key, for as long as the socket lives -------------------------------------------------------------

NEW_KEY = (
    "mutation($expires: DateTime) { createApiKey(input: {scope: READ, expiresAt: $expires}) { key apiKey { id } } }"  # noqa: E501
)
REVOKE = "mutation($id: UUID!) { revokeApiKey(id: $id) { revokedAt } }"


async def new_key(api: Api, expires: datetime | None = None) -> tuple[str, str]:
    """A read key of organisation A made through the API: (key, id)."""
    body = await api.gql(NEW_KEY, {"expires": expires.isoformat() if expires else None})
    created = body["data"]["createApiKey"]
    return created["key"], created["apiKey"]["id"]


async def test_a_revoked_key_runs_nothing_more_on_its_open_sockets(app: Starlette, ws_url: str, api: Api) -> None:
    """The key is looked up again at every subscribe: a socket opened before the revocation
    replays nothing, and yields no pack, once REST refuses the key."""
    app.state.sockets.recheck_seconds = 3600  # no periodic check: only the subscribe can notice
    ws_id = (await calculated_workspace(api))["id"]
    pack = (await generated(api, ws_id))["data"]
    key, key_id = await new_key(api)
    async with GraphQLWS.connect(ws_url, bearer(key)) as one, GraphQLWS.connect(ws_url, bearer(key)) as two:
        live = await one.subscribe(EVENTS, {"after": cursor_of(0)})
        assert (await one.data(live))["events"]["sequence"] == 1  # the key works: the log replays
        assert (await api.gql(REVOKE, {"id": key_id}))["data"]["revokeApiKey"]["revokedAt"]
        assert (await api.get("/api/v2/workspaces", key=key)).status_code == 401
        replay = await one.subscribe(EVENTS, {"after": cursor_of(0)})
        assert await one.closed() == (4403, "Forbidden: the API key was revoked or has expired")
        followed = await two.subscribe(PACK, {"id": pack["id"]})
        assert (await two.closed())[0] == 4403
    assert one.pending(replay) == 0 and two.pending(followed) == 0
    # A new socket with it is refused at connection_init, as before.
    async with GraphQLWS.connect(ws_url, init=False) as client:
        await client.send({"type": "connection_init", "payload": bearer(key)})
        assert await client.closed() == (4403, "Forbidden")


async def test_a_revoked_key_closes_its_socket_at_the_periodic_check(app: Starlette, ws_url: str, api: Api) -> None:
    app.state.sockets.recheck_seconds = 0.05
    key, key_id = await new_key(api)
    async with GraphQLWS.connect(ws_url, bearer(key)) as client:
        # Workspace events only: the revocation's own api_key.revoked may reach the socket in
        # the instant before the check closes it.
        ops = [
            await client.subscribe(EVENTS, {"types": ["workspace.created"]}),
            await client.subscribe(EVENTS, {"types": ["pack.generated"]}),
        ]
        await eventually(lambda: hub_of(app).live_count == 2, "the subscriptions to go live")
        await api.gql(REVOKE, {"id": key_id})
        # The whole socket, not one operation: nothing else of it runs on.
        assert await client.closed() == (4403, "Forbidden: the API key was revoked or has expired")
    assert [client.pending(op) for op in ops] == [0, 0]


async def test_an_expiring_keys_socket_is_closed_at_its_expiry(app: Starlette, ws_url: str, api: Api) -> None:
    app.state.sockets.recheck_seconds = 3600  # only the close scheduled at the expiry can end it
    expires = datetime.now(UTC) + timedelta(seconds=5)
    key, _ = await new_key(api, expires)
    async with GraphQLWS.connect(ws_url, bearer(key)) as client:
        op = await client.subscribe(EVENTS)
        await eventually(lambda: hub_of(app).live_count == 1, "the subscription to go live")
        ws_id = (await create_workspace(api))["id"]
        assert (await client.data(op))["events"]["subjectId"] == ws_id
        assert await client.closed(within=60) == (4403, "Forbidden: the API key was revoked or has expired")
        assert datetime.now(UTC) >= expires
    assert (await api.get("/api/v2/workspaces", key=key)).status_code == 401


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # PostgreSQL: test_two_nodes_on_postgresql
async def test_another_process_writing_sqlite_is_picked_up_by_the_poll(
    ws_url: str, api: Api, key_a: str, database_url: str, app: Starlette, tmp_path: Path
) -> None:
    """No wake-up crosses processes on SQLite: the tail's slow poll is the safety net."""
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(EVENTS, {"after": await end_cursor(api)})
        await eventually(lambda: hub_of(app).live_count == 1, "the subscription to go live")
        reports = tmp_path / "reports.json"
        reports.write_text(json.dumps([record()]))
        done = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "evidence_gateway.cli", "legacy", "import", str(reports), "--org", "org-a"],
            env={**os.environ, "EVIDENCE_DATABASE_URL": database_url, "EVIDENCE_SECRET_KEY": "test-secret-key"},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        event = (await client.data(op))["events"]
        assert (event["type"], event["subjectId"]) == ("legacy_report.imported", done.stdout.strip())


# ---- GraphiQL --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("offline", [False, True])
async def test_graphiql_page_runs_subscriptions_over_the_socket(
    app: Starlette, client: httpx.AsyncClient, tmp_path: Path, offline: bool
) -> None:
    if offline:
        for name in graphiql.CONTENT_TYPES:
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(f"/* {name} */")
    app.state.settings.graphiql_assets_dir = str(tmp_path)
    page = (await client.get("/graphql", headers={"Accept": "text/html"})).text
    assert ("/graphql/assets/" in page) is offline and ("unpkg.com" in page) is not offline
    # The page derives ws:// or wss:// from its own address (right behind a TLS proxy too) and
    # hands GraphiQL's fetcher that URL; GraphiQL sends the Headers pane as connection_init payload.
    assert 'parsedURL.protocol === "http:" ? "ws:" : "wss:"' in page
    assert "subscriptionUrl = httpUrlToWebSockeUrl(fetchURL)" in page and "subscriptionUrl," in page


# ---- two nodes on one PostgreSQL --------------------------------------------------------------------------


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[tuple[Any, Any, str]]:
    name = f"evidence_subs_{uuid.uuid4().hex[:12]}"
    asyncio.run(serve_process.pg_admin(f'CREATE DATABASE "{name}"'))
    database = serve_process.Database(f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}")
    nodes = [serve_process.Server(database, tmp_path / "a"), serve_process.Server(database, tmp_path / "b")]
    try:
        for node in nodes:
            node.workdir.mkdir()
        key = serve_process.api_key(database, tmp_path)
        # Both start at once (each waits for its own readiness): the schema is at head already.
        starting = [threading.Thread(target=node.start) for node in nodes]
        for thread in starting:
            thread.start()
        for thread in starting:
            thread.join()
        for node in nodes:
            assert httpx.get(f"{node.base}/healthz", timeout=5).status_code == 200, node.logs()
        yield nodes[0], nodes[1], key
    finally:
        for node in nodes:
            node.cleanup()
        asyncio.run(serve_process.pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.mark.slow
@pytest.mark.skipif(not PG_AVAILABLE, reason="no PostgreSQL on 127.0.0.1:5432")
def test_two_nodes_on_postgresql(two_nodes: tuple[Any, Any, str]) -> None:
    node_a, node_b, key = two_nodes

    async def scenario() -> list[float]:
        url = node_b.base.replace("http://", "ws://") + "/graphql"
        headers = {"Authorization": f"Bearer {key}"}
        latencies = []
        async with httpx.AsyncClient(base_url=node_a.base, headers=headers, timeout=30) as on_a:
            async with GraphQLWS.connect(url, bearer(key)) as client:
                # After event 1, the key's api_key.created (the command line made it).
                op = await client.subscribe(EVENTS, {"after": cursor_of(1)})
                for n in range(2, 7):
                    resp = await on_a.post("/api/v2/workspaces", json={"name": f"ws {n}"})
                    assert resp.status_code == 201, resp.text
                    committed = time.monotonic()
                    event = (await client.data(op))["events"]
                    latencies.append(time.monotonic() - committed)
                    assert (event["sequence"], event["subjectId"]) == (n, resp.json()["data"]["id"])
                ws_id = resp.json()["data"]["id"]
                # A change on B reaches a subscriber on A just the same.
                url_a = node_a.base.replace("http://", "ws://") + "/graphql"
                async with GraphQLWS.connect(url_a, bearer(key)) as on_a_socket:
                    watch = await on_a_socket.subscribe(EVENTS, {"after": cursor_of(6)})
                    async with httpx.AsyncClient(base_url=node_b.base, headers=headers, timeout=30) as on_b:
                        resp = await on_b.post(f"/api/v2/workspaces/{ws_id}/imports", json={"source_row_count": 1})
                        assert resp.status_code == 201, resp.text
                    got = [d["events"]["type"] for d in await on_a_socket.take(watch, 2)]
                    assert got == ["import.registered", "workspace.status_changed"]
        return latencies

    latencies = asyncio.run(scenario())
    # Woken by NOTIFY, not found by the 1 s safety-net poll (which alone would take ~0.5 s on average).
    assert sorted(latencies)[len(latencies) // 2] < 0.4, latencies
