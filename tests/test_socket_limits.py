"""What one GraphQL WebSocket may cost (docs/events.md, "Limits"), through a real socket: the
message ceiling, the rate-limit budgets HTTP requests spend too, the failed-authentication
budget, and the caps on open sockets and live subscriptions. None of it depends on the
database (the key lookups are test_subscriptions.py's, on both): SQLite only.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.core.events import cursor_of
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.schema.socket_limits import SUBSCRIPTIONS_PER_ADDRESS, SUBSCRIPTIONS_PER_KEY
from evidence_gateway.web.ratelimit.limiter import Limiter
from tests.conftest import Api, create_workspace
from tests.live_server import serving, ws_served
from tests.waiting import eventually
from tests.wsclient import Closed, GraphQLWS

sqlite_only = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

EVENTS = "subscription($after: String) { events(after: $after) { sequence } }"
WINDOW = 3600  # no rate-limit window ends during a test: counts are exact


def limit(app: Starlette, **settings: Any) -> None:
    """Other settings for this app, before its first request or socket (the HTTP middleware is
    built on the limiter then; sockets read it as they open)."""
    for name, value in {"rate_limit_window_seconds": WINDOW, **settings}.items():
        setattr(app.state.settings, name, value)
    app.state.limiter = Limiter(app.state.settings)


def bearer(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


@pytest.fixture
async def ws_url(app: Starlette) -> AsyncIterator[str]:
    async with ws_served(app) as url:
        yield url


async def refused_on_connect(url: str, payload: dict[str, Any] | None) -> tuple[int | None, str]:
    """The close of a socket the server refuses at the upgrade or at connection_init."""
    async with GraphQLWS.connect(url, init=False) as client:
        if payload is not None:
            with pytest.raises(Closed):
                await client.init(payload)
        return await client.closed()


# ---- the message ceiling ---------------------------------------------------------------------------


@sqlite_only
async def test_a_message_over_the_body_ceiling_closes_the_socket(
    app: Starlette, ws_url: str, api: Api, key_a: str
) -> None:
    limit(app, max_body_bytes=2048)
    await create_workspace(api)
    padded = EVENTS + " " * (2048 - 400)  # under the ceiling with the message around it: it runs
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        op = await client.subscribe(padded, {"after": cursor_of(0)})
        assert (await client.data(op))["events"]["sequence"] == 1
        over = await client.subscribe(EVENTS + " " * 2048)
        assert await client.closed() == (1009, "message larger than 2048 bytes (EVIDENCE_MAX_BODY_BYTES)")
        assert client.pending(over) == 0
    # Multi-byte text is measured in bytes: 700 characters of 3 bytes each are over 2048.
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as client:
        await client.subscribe('subscription { events(types: ["' + "€" * 700 + '"]) { sequence } }')
        assert (await client.closed())[0] == 1009
    # Before connection_init too, and binary frames alike.
    async with GraphQLWS.connect(ws_url, init=False) as client:
        await client.ws.send(b"x" * 4096)
        assert (await client.closed())[0] == 1009


async def test_serve_holds_socket_messages_to_the_body_ceiling(tmp_path: Path) -> None:
    """`serve` hands the ceiling to uvicorn (ws_max_size): the server refuses a larger message
    itself, before the app could see it, and stays quick for everyone else."""
    async with serving(tmp_path, {"EVIDENCE_MAX_BODY_BYTES": "4096"}) as server:
        url = server.base.replace("http://", "ws://") + "/graphql"
        headers = {"Authorization": f"Bearer {server.key}"}
        async with httpx.AsyncClient(base_url=server.base, headers=headers) as http:
            assert (await http.post("/api/v2/workspaces", json={"name": "x"})).status_code == 201
            async with GraphQLWS.connect(url, bearer(server.key)) as client:
                op = await client.subscribe(EVENTS + " " * 3000, {"after": cursor_of(0)})
                assert (await client.data(op))["events"]["sequence"] == 1
                await client.subscribe(EVENTS + " " * 8192)
                code, reason = await client.closed()
                assert code == 1009 and "EVIDENCE_MAX_BODY_BYTES" not in reason, reason  # the server's, not the app's
            assert (await http.get("/healthz")).status_code == 200


# ---- rate limits ------------------------------------------------------------------------------------


@sqlite_only
async def test_socket_messages_spend_the_keys_request_budget_with_http(
    app: Starlette, ws_url: str, api: Api, key_b: str
) -> None:
    limit(app, rate_limit_per_key=5)
    assert (await api.get("/api/v2/workspaces")).status_code == 200  # 1 of 5, over HTTP
    assert (await api.get("/api/v2/workspaces")).status_code == 200  # 2
    async with GraphQLWS.connect(ws_url, bearer(api.key or "")) as client:  # connection_init: the address's
        for _ in range(3):  # 3, 4, 5: each answered
            await client.send({"type": "ping"})
        op = await client.subscribe(EVENTS)  # the sixth: refused
        code, reason = await client.closed()
        assert code == 4429, reason
        assert reason.startswith("rate limit exceeded: messages with this API key, 5 per 3600 s; retry in ")
        assert client.pending(op) == 0
    # HTTP finds the budget spent too; another key has its own.
    assert (await api.get("/api/v2/workspaces")).status_code == 429
    async with GraphQLWS.connect(ws_url, bearer(key_b)) as client:
        op = await client.subscribe(EVENTS, {"after": cursor_of(0)})
        await client.complete(op)


@sqlite_only
async def test_messages_before_a_key_spend_the_addresss_budget(
    app: Starlette, ws_url: str, client: httpx.AsyncClient
) -> None:
    limit(app, rate_limit_per_address=4)
    assert (await client.get("/api/openapi.json")).status_code == 200  # 1, a request without a key
    async with GraphQLWS.connect(ws_url, init=False) as socket:  # 2, the upgrade
        await socket.send({"type": "ping"})  # 3
        await socket.send({"type": "ping"})  # 4
        await socket.send({"type": "ping"})  # refused
        code, reason = await socket.closed()
        assert (code, reason.split("; retry")[0]) == (
            4429,
            "rate limit exceeded: messages without an API key from this address, 4 per 3600 s",
        )
    assert (await client.get("/api/openapi.json")).status_code == 429


@sqlite_only
async def test_refused_keys_spend_the_failed_authentication_budget_with_http(
    app: Starlette, ws_url: str, api: Api, key_b: str
) -> None:
    limit(app, rate_limit_auth_failures=3)
    assert (await api.get("/api/v2/workspaces", key="evk_" + "1" * 48)).status_code == 401  # 1, over HTTP
    for wrong in ({"authorization": "Bearer evk_" + "2" * 48}, {"authorization": "Bearer not-a-key"}):  # 2, 3
        assert await refused_on_connect(ws_url, wrong) == (4403, "Forbidden")
    # A socket without any credential is refused, but neither counted nor refused by the budget.
    assert await refused_on_connect(ws_url, {}) == (4403, "Forbidden")
    # Spent: a wrong key's next socket is refused 4429, as HTTP answers a wrong key 429.
    code, reason = await refused_on_connect(ws_url, {"authorization": "Bearer evk_" + "5" * 48})
    assert code == 4429 and reason.startswith("rate limit exceeded: failed authentications from this address, 3 per")
    assert (await api.get("/api/v2/workspaces", key="evk_" + "3" * 48)).status_code == 429
    # Valid keys from the same address keep working, on both transports (a NAT's other clients).
    async with GraphQLWS.connect(ws_url, bearer(key_b)) as client:
        await client.complete(await client.subscribe(EVENTS))
    assert (await api.get("/api/v2/workspaces")).status_code == 200


@sqlite_only
async def test_a_key_revoked_under_an_open_socket_counts_as_a_failed_authentication(
    app: Starlette, ws_url: str, api: Api
) -> None:
    limit(app, rate_limit_auth_failures=1)
    created = await api.gql("mutation { createApiKey(input: {scope: READ}) { key apiKey { id } } }")
    key, key_id = created["data"]["createApiKey"]["key"], created["data"]["createApiKey"]["apiKey"]["id"]
    async with GraphQLWS.connect(ws_url, bearer(key)) as client:
        await api.gql("mutation($id: UUID!) { revokeApiKey(id: $id) { id } }", {"id": key_id})
        await client.subscribe(EVENTS)
        assert (await client.closed())[0] == 4403
    assert (await api.get("/api/v2/workspaces", key="evk_" + "4" * 48)).status_code == 429


# ---- caps -----------------------------------------------------------------------------------------------


@sqlite_only
async def test_open_sockets_are_capped_per_key(app: Starlette, ws_url: str, key_a: str, key_b: str) -> None:
    limit(app, ws_max_connections_per_key=2)
    other_key_of_a = await create_api_key(app.state.db, "org-a")
    async with GraphQLWS.connect(ws_url, bearer(key_a)), GraphQLWS.connect(ws_url, bearer(key_a)) as second:
        assert await refused_on_connect(ws_url, bearer(key_a)) == (
            4429,
            "too many open sockets with this API key: at most 2 (EVIDENCE_WS_MAX_CONNECTIONS_PER_KEY)",
        )
        # Per key: the organisation's other key, and other organisations, are not concerned.
        async with GraphQLWS.connect(ws_url, bearer(other_key_of_a)), GraphQLWS.connect(ws_url, bearer(key_b)):
            pass
        await second.ws.close()
        # The closed socket's slot comes back.
        await eventually(lambda: _opens(ws_url, key_a), "a socket with the key to be accepted again")


async def _opens(url: str, key: str) -> bool:
    try:
        async with GraphQLWS.connect(url, bearer(key)):
            return True
    except (Closed, AssertionError):
        return False


@sqlite_only
async def test_open_sockets_are_capped_per_address(app: Starlette, ws_url: str, key_a: str) -> None:
    limit(app, ws_max_connections_per_address=2)
    async with GraphQLWS.connect(ws_url, init=False), GraphQLWS.connect(ws_url, bearer(key_a)):
        # Refused at the upgrade, with or without a key to come.
        assert await refused_on_connect(ws_url, None) == (
            4429,
            "too many open sockets from this address: at most 2 (EVIDENCE_WS_MAX_CONNECTIONS_PER_ADDRESS)",
        )


@sqlite_only
async def test_live_subscriptions_are_capped_per_key(app: Starlette, ws_url: str, api: Api, key_a: str) -> None:
    limit(app, ws_max_subscriptions_per_key=2)
    sockets = app.state.sockets
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as one, GraphQLWS.connect(ws_url, bearer(key_a)) as two:
        # From the start of the log: the event below reaches both whether or not they are live yet.
        first = await one.subscribe(EVENTS, {"after": cursor_of(0)})
        second = await two.subscribe(EVENTS, {"after": cursor_of(0)})
        refused = await two.message(await two.subscribe(EVENTS))
        assert refused == {
            "id": "2",
            "type": "error",
            "payload": [
                {
                    "message": "too many live subscriptions with this API key: at most 2 "
                    "(EVIDENCE_WS_MAX_SUBSCRIPTIONS_PER_KEY)",
                    "extensions": {"code": "RATE_LIMITED", "policy": "ws_subscriptions_per_key", "limit": 2},
                }
            ],
        }
        # The socket stays open and the others run on.
        await create_workspace(api)
        assert (await one.data(first))["events"]["sequence"] == 1
        assert (await two.data(second))["events"]["sequence"] == 1
        # A subscription that ends gives its slot back.
        await one.complete(first)
        await eventually(lambda: sockets.total(SUBSCRIPTIONS_PER_KEY) == 1, "the completed subscription to end")
        again = await one.subscribe(EVENTS, {"after": cursor_of(0)})
        assert (await one.data(again))["events"]["sequence"] == 1
    await eventually(lambda: sockets.total(SUBSCRIPTIONS_PER_KEY) == 0, "every subscription to end with its socket")


@sqlite_only
async def test_live_subscriptions_are_capped_per_address_over_its_keys(
    app: Starlette, ws_url: str, api: Api, key_a: str, key_b: str
) -> None:
    limit(app, ws_max_subscriptions_per_address=2)
    sockets = app.state.sockets
    async with GraphQLWS.connect(ws_url, bearer(key_a)) as one, GraphQLWS.connect(ws_url, bearer(key_b)) as two:
        first = await one.subscribe(EVENTS, {"after": cursor_of(0)})
        await two.subscribe(EVENTS, {"after": cursor_of(0)})
        # Another key from the same address: the address's cap, not the key's, refuses it.
        refused = await two.message(await two.subscribe(EVENTS))
        assert refused["type"] == "error" and refused["payload"] == [
            {
                "message": "too many live subscriptions from this address: at most 2 "
                "(EVIDENCE_WS_MAX_SUBSCRIPTIONS_PER_ADDRESS)",
                "extensions": {"code": "RATE_LIMITED", "policy": "ws_subscriptions_per_address", "limit": 2},
            }
        ]
        # Nothing was held for the refused one: the key's count is what runs.
        assert sockets.total(SUBSCRIPTIONS_PER_KEY) == 2 == sockets.total(SUBSCRIPTIONS_PER_ADDRESS)
        await create_workspace(api)
        assert (await one.data(first))["events"]["sequence"] == 1
        await one.complete(first)
        await eventually(lambda: sockets.total(SUBSCRIPTIONS_PER_ADDRESS) == 1, "the completed subscription to end")
        again = await one.subscribe(EVENTS, {"after": cursor_of(0)})
        assert (await one.data(again))["events"]["sequence"] == 1
    await eventually(lambda: sockets.total(SUBSCRIPTIONS_PER_ADDRESS) == 0, "every subscription to end with its socket")
