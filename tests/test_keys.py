"""API key lifecycle (issue 14): scopes enforced once in the resolvers for both transports,
expiry and revocation answered exactly like an unknown key, last use recorded at most once a
minute, and the same management over GraphQL (admin keys) and the CLI."""

from __future__ import annotations

import io
import json
import logging
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlmodel import col
from starlette.applications import Starlette

from evidence_gateway.models import ApiKey
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.web.observability.logs import json_formatter
from tests import serve_process
from tests.cli_inprocess import run_cli
from tests.conftest import PG_AVAILABLE, Api, create_workspace, gql_code
from tests.waiting import eventually

UNKNOWN = "evk_" + "0" * 48
WS = {"name": "Scoped", "reporting_period_start": "2026-01-01", "reporting_period_end": "2026-03-31"}
LIST_KEYS = "{ apiKeys { id displayPrefix name scope lastUsedAt expiresAt revokedAt } }"
CREATE_KEY = """mutation($input: CreateApiKeyInput!) {
  createApiKey(input: $input) { key apiKey { id displayPrefix name scope expiresAt } } }"""
REVOKE_KEY = "mutation($id: UUID!) { revokeApiKey(id: $id) { id revokedAt } }"


async def key_of(app: Starlette, scope: str, org: str = "org-a") -> str:
    return await create_api_key(app.state.db, org, scope=scope, name=f"{scope} key")


@pytest.fixture
async def reader(app: Starlette, client: httpx.AsyncClient, key_a: str) -> Api:
    return Api(client, await key_of(app, "read"))


@pytest.fixture
async def writer(app: Starlette, client: httpx.AsyncClient, key_a: str) -> Api:
    return Api(client, await key_of(app, "write"))


# ---- scopes -------------------------------------------------------------------------------------


async def test_a_read_key_reads_but_cannot_change_anything(api: Api, reader: Api) -> None:
    await create_workspace(api)
    assert (await reader.get("/api/v2/workspaces")).json()["pagination"]["total"] == 1

    refused = await reader.post("/api/v2/workspaces", WS)
    assert refused.status_code == 403
    assert refused.json()["details"]["code"] == "insufficient_scope"
    assert refused.json()["details"]["required_scope"] == "write"
    # With an Idempotency-Key too: refused, and the key stays free for a retry with a better key.
    again = await reader.post("/api/v2/workspaces", WS, headers={"Idempotency-Key": "k-1"})
    assert again.status_code == 403
    body = await reader.gql('mutation { createWorkspace(input: {name: "G"}) { id } }')
    assert gql_code(body) == "FORBIDDEN"
    assert body["data"] is None
    assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 1  # nothing written
    assert (await api.post("/api/v2/workspaces", WS, headers={"Idempotency-Key": "k-1"})).status_code == 201


async def test_a_read_key_sends_no_test_webhook(reader: Api) -> None:
    resp = await reader.post("/api/v2/webhooks/test", {"target_url": "http://127.0.0.1:9/hook"})
    assert resp.status_code == 403
    assert (await reader.get("/api/v2/webhooks/deliveries")).json()["pagination"]["total"] == 0


async def test_a_write_key_writes_data_but_needs_admin_for_secrets_and_endpoints(api: Api, writer: Api) -> None:
    assert (await writer.post("/api/v2/workspaces", WS)).status_code == 201

    endpoint = {"url": "http://127.0.0.1:9/hook", "event_types": ["pack.generated"]}
    refused = await writer.post("/api/v2/webhook-endpoints", endpoint)
    assert refused.status_code == 403
    assert refused.json()["details"] == {
        "code": "insufficient_scope",
        "required_scope": "admin",
        "key_scope": "write",
    } | {k: v for k, v in refused.json()["details"].items() if k == "request_id"}
    assert (await writer.get("/api/v2/webhook-endpoints")).status_code == 403
    created = await api.post("/api/v2/webhook-endpoints", endpoint)
    assert created.status_code == 201
    assert (await writer.get(f"/api/v2/webhook-endpoints/{created.json()['data']['id']}")).status_code == 403

    secret = await writer.gql("{ viewer { organizationName webhookSigningSecret } }")
    assert gql_code(secret) == "FORBIDDEN"
    assert secret["data"] is None
    plain = await writer.gql("{ viewer { organizationName } }")
    assert plain["data"] == {"viewer": {"organizationName": "org-a"}}
    admin = await api.gql("{ viewer { webhookSigningSecret } }")
    assert admin["data"]["viewer"]["webhookSigningSecret"].startswith("whsec_")
    assert gql_code(await writer.gql(LIST_KEYS)) == "FORBIDDEN"


# ---- revoked, expired and unknown keys look the same -------------------------------------------


async def test_revoked_and_expired_keys_get_the_unknown_keys_401(
    app: Starlette, api: Api, client: httpx.AsyncClient
) -> None:
    revoked, expired = await key_of(app, "write"), await key_of(app, "write")
    for key in (revoked, expired):
        assert (await api.get("/api/v2/workspaces", key=key)).status_code == 200
    listed = (await api.gql(LIST_KEYS))["data"]["apiKeys"]
    by_prefix = {k["displayPrefix"]: k for k in listed}
    assert (await api.gql(REVOKE_KEY, {"id": by_prefix[revoked[:10]]["id"]}))["data"]["revokeApiKey"]["revokedAt"]
    async with app.state.db.write() as session:
        await session.execute(
            update(ApiKey)
            .where(col(ApiKey.id) == uuid.UUID(by_prefix[expired[:10]]["id"]))
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )

    unknown = await api.get("/api/v2/workspaces", key=UNKNOWN)
    assert unknown.status_code == 401
    for key in (revoked, expired):
        resp = await api.get("/api/v2/workspaces", key=key)
        assert (resp.status_code, _without_request_id(resp.json())) == (401, _without_request_id(unknown.json()))
        gql = await api.gql("{ workspaces { pagination { total } } }", key=key)
        assert gql["_status"] == 200  # GraphQL refuses per field (docs/graphql.md)
        assert gql_code(gql) == "UNAUTHENTICATED"


def _without_request_id(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "details": {k: v for k, v in body["details"].items() if k != "request_id"}}


# ---- last use -----------------------------------------------------------------------------------


async def test_last_use_is_recorded_once_a_minute_not_per_request(api: Api, writer: Api) -> None:
    def entry(keys: list[dict[str, Any]], name: str) -> dict[str, Any]:
        return next(k for k in keys if k["name"] == name)

    before = (await api.gql(LIST_KEYS))["data"]["apiKeys"]
    assert entry(before, "write key")["lastUsedAt"] is None
    assert (await writer.get("/api/v2/workspaces")).status_code == 200
    first = entry((await api.gql(LIST_KEYS))["data"]["apiKeys"], "write key")["lastUsedAt"]
    assert first is not None
    for _ in range(3):
        assert (await writer.get("/api/v2/workspaces")).status_code == 200
    assert entry((await api.gql(LIST_KEYS))["data"]["apiKeys"], "write key")["lastUsedAt"] == first


# ---- managing keys over GraphQL -----------------------------------------------------------------


async def test_an_admin_key_creates_lists_and_revokes_keys_over_graphql(api: Api, api_b: Api) -> None:
    expires = (datetime.now(UTC) + timedelta(days=30)).replace(microsecond=0)
    made = await api.gql(
        CREATE_KEY, {"input": {"name": "reporting", "scope": "READ", "expiresAt": expires.isoformat()}}
    )
    created = made["data"]["createApiKey"]
    new_key = created["key"]
    assert re.fullmatch(r"evk_[0-9a-f]{48}", new_key)
    assert created["apiKey"]["scope"] == "READ"
    assert created["apiKey"]["displayPrefix"] == new_key[:10]
    assert datetime.fromisoformat(created["apiKey"]["expiresAt"]) == expires

    listed = (await api.gql(LIST_KEYS))["data"]["apiKeys"]
    assert [k["name"] for k in listed] == [None, "reporting"]  # org-a's fixture key, then this one
    assert new_key not in str(listed)
    assert (await api.get("/api/v2/workspaces", key=new_key)).status_code == 200
    assert (await api.post("/api/v2/workspaces", WS, key=new_key)).status_code == 403

    # Another organisation sees none of them and cannot revoke them.
    assert [k["name"] for k in (await api_b.gql(LIST_KEYS))["data"]["apiKeys"]] == [None]
    assert gql_code(await api_b.gql(REVOKE_KEY, {"id": created["apiKey"]["id"]})) == "NOT_FOUND"
    assert (await api.get("/api/v2/workspaces", key=new_key)).status_code == 200

    revoked = await api.gql(REVOKE_KEY, {"id": created["apiKey"]["id"]})
    assert revoked["data"]["revokeApiKey"]["revokedAt"] is not None
    assert (await api.get("/api/v2/workspaces", key=new_key)).status_code == 401


async def test_graphql_key_input_is_checked(api: Api) -> None:
    past = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    bad = await api.gql(CREATE_KEY, {"input": {"expiresAt": past}})
    assert gql_code(bad) == "BAD_USER_INPUT"
    assert bad["errors"][0]["extensions"]["fields"] == {"input.expiresAt": "must be in the future"}
    long = await api.gql(CREATE_KEY, {"input": {"name": "x" * 201}})
    assert gql_code(long) == "BAD_USER_INPUT"
    assert gql_code(await api.gql(REVOKE_KEY, {"id": str(uuid.uuid4())})) == "NOT_FOUND"
    assert len((await api.gql(LIST_KEYS))["data"]["apiKeys"]) == 1  # nothing made


# ---- the CLI ------------------------------------------------------------------------------------


def _cli_url(database_url: str) -> str:
    return database_url.replace("+aiosqlite", "").replace("+asyncpg", "")


async def test_keys_on_the_command_line(app: Starlette, database_url: str, client: httpx.AsyncClient) -> None:
    url = _cli_url(database_url)
    made = run_cli(
        "keys",
        "create",
        "--org",
        "cli-org",
        "--scope",
        "read",
        "--name",
        "nightly",
        "--expires-in",
        "7d",
        "--database-url",
        url,
    )
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert re.fullmatch(r"evk_[0-9a-f]{48}", key)
    api = Api(client, key)
    assert (await api.get("/api/v2/workspaces")).status_code == 200
    assert (await api.post("/api/v2/workspaces", WS)).status_code == 403
    # The new organisation's log starts with the key: made by the command line (no actor).
    [created] = (await api.get("/api/v2/events")).json()["data"]
    assert (created["type"], created["actor"], created["request_id"]) == ("api_key.created", None, None)
    assert (created["data"]["display_prefix"], created["data"]["scope"]) == (key[:10], "read")
    assert key not in str(created)

    listed = run_cli("keys", "list", "--org", "cli-org", "--database-url", url)
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split() == ["ID", "PREFIX", "NAME", "SCOPE", "CREATED", "LAST", "USED", "EXPIRES", "REVOKED"]
    assert key[:10] in row and "nightly" in row and " read " in row
    assert key not in listed.stdout
    expires = (datetime.now(UTC) + timedelta(days=7)).strftime("%Y-%m-%d")
    assert expires in row
    assert row.rstrip().endswith("-")  # not revoked

    revoked = run_cli("keys", "revoke", key[:10], "--database-url", url)
    assert revoked.returncode == 0, revoked.stderr
    assert f"revoked {key[:10]}" in revoked.stdout
    assert (await api.get("/api/v2/workspaces")).status_code == 401  # tests look keys up every request
    after = run_cli("keys", "list", "--org", "cli-org", "--database-url", url).stdout.splitlines()[1]
    assert not after.rstrip().endswith("-")
    admin = run_cli("keys", "create", "--org", "cli-org", "--database-url", url).stdout.strip()
    log = (await Api(client, admin).get("/api/v2/events")).json()["data"]
    assert [(e["type"], e["subject_id"]) for e in log[:2]] == [
        ("api_key.created", created["subject_id"]),
        ("api_key.revoked", created["subject_id"]),
    ]
    assert log[1]["data"]["revoked_at"] is not None and [e["type"] for e in log[2:]] == ["api_key.created"]
    # Revoking it again changes nothing and writes nothing.
    assert run_cli("keys", "revoke", created["subject_id"], "--database-url", url).returncode == 0
    assert len((await Api(client, admin).get("/api/v2/events")).json()["data"]) == 3

    for args, message in (
        (("keys", "list", "--org", "no-such-org"), "error: no organisation named 'no-such-org'\n"),
        (("keys", "revoke", "evk_ffffff"), "error: no API key with id or prefix 'evk_ffffff'\n"),
    ):
        done = run_cli(*args, "--database-url", url)
        assert (done.returncode, done.stdout, done.stderr) == (1, "", message)


async def _logged_key_prefix(api: Api) -> str:
    """The ``key_prefix`` of the access line that a request with ``api``'s key writes."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    root, level = logging.getLogger(), logging.getLogger().level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        resp = await api.get("/api/v2/workspaces", headers={"X-Request-ID": "prefix-probe"})
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert resp.status_code == 200, resp.text
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    access = [x for x in lines if x.get("request_id") == "prefix-probe" and x["event"] == "request"]
    assert len(access) == 1, lines
    prefix: str = access[0]["key_prefix"]
    return prefix


async def test_keys_revoke_takes_the_prefix_the_logs_show(
    app: Starlette, database_url: str, client: httpx.AsyncClient
) -> None:
    url = _cli_url(database_url)
    first, second, third = [Api(client, await key_of(app, "read", "log-org")) for _ in range(3)]

    # An operator sees a key in a log line and revokes it by what the line shows.
    logged = await _logged_key_prefix(first)
    assert re.fullmatch(r"[0-9a-f]{8}", logged) and first.key.startswith(f"evk_{logged}")
    done = run_cli("keys", "revoke", logged, "--database-url", url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"revoked {first.key[:10]} ")
    assert (await first.get("/api/v2/workspaces")).status_code == 401
    assert (await second.get("/api/v2/workspaces")).status_code == 200  # only that one

    # The same with evk_ in front, and in capitals.
    done = run_cli("keys", "revoke", f"EVK_{(await _logged_key_prefix(second)).upper()}", "--database-url", url)
    assert done.returncode == 0, done.stderr
    assert (await second.get("/api/v2/workspaces")).status_code == 401

    # Only the display prefix (evk_ + 6 hex) is stored: two keys sharing it (made so here, by chance
    # 1 in 16 million a pair) cannot be told apart by a longer prefix, and nothing is revoked.
    fourth = Api(client, await key_of(app, "read", "log-org"))
    async with app.state.db.write() as session:
        await session.execute(
            update(ApiKey).where(col(ApiKey.display_prefix) == fourth.key[:10]).values(display_prefix=third.key[:10])
        )
    for shared in (third.key[:10], third.key[4:12]):
        refused = run_cli("keys", "revoke", shared, "--database-url", url)
        assert (refused.returncode, refused.stdout) == (1, ""), refused
        assert refused.stderr == (
            f"error: 2 keys start with {third.key[:10]}, as {shared!r} does; revoke by id (keys list --org NAME): "
            "key: ambiguous prefix; nothing changed\n"
        )
    assert (await third.get("/api/v2/workspaces")).status_code == 200
    assert (await fourth.get("/api/v2/workspaces")).status_code == 200
    # The id still names one of them: the older, listed first among the keys not revoked.
    listed = run_cli("keys", "list", "--org", "log-org", "--database-url", url).stdout
    third_id = next(line.split()[0] for line in listed.splitlines()[1:] if line.rstrip().endswith("-"))
    by_id = run_cli("keys", "revoke", third_id, "--database-url", url)
    assert by_id.returncode == 0, by_id.stderr
    assert (await third.get("/api/v2/workspaces")).status_code == 401
    assert (await fourth.get("/api/v2/workspaces")).status_code == 200

    for bad in ("evk_12345", "1a2b3c4d5"):
        refused = run_cli("keys", "revoke", bad, "--database-url", url)
        assert (refused.returncode, refused.stdout) == (1, ""), refused
        assert refused.stderr.startswith(f"error: {bad!r} is neither a key id nor a key prefix"), refused.stderr


# ---- revocation across nodes --------------------------------------------------------------------


@pytest.mark.slow
async def test_a_key_revoked_on_one_node_is_refused_by_the_other_after_the_cache_window(tmp_path: Path) -> None:
    if not PG_AVAILABLE:
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    name = f"evidence_keys_{uuid.uuid4().hex[:12]}"
    await serve_process.pg_admin(f'CREATE DATABASE "{name}"')
    database = serve_process.Database(f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}")
    nodes: list[serve_process.Server] = []
    try:
        key = serve_process.api_key(database, tmp_path)
        for label in ("a", "b"):
            (tmp_path / label).mkdir()
            srv = serve_process.Server(database, tmp_path / label, env={"EVIDENCE_AUTH_CACHE_SECONDS": "1"})
            srv.start()
            nodes.append(srv)
        a, b = (httpx.AsyncClient(base_url=n.base, headers={"Authorization": f"Bearer {key}"}) for n in nodes)
        async with a, b:
            assert (await b.get("/api/v2/workspaces")).status_code == 200  # B now trusts the key
            listed = (await a.post("/graphql", json={"query": LIST_KEYS})).json()["data"]["apiKeys"]
            revoked = await a.post("/graphql", json={"query": REVOKE_KEY, "variables": {"id": listed[0]["id"]}})
            assert revoked.json()["data"]["revokeApiKey"]["revokedAt"]

            for label, node in (("B", b), ("A", a)):

                async def refuses(node: httpx.AsyncClient = node) -> bool:
                    return (await node.get("/api/v2/workspaces")).status_code == 401

                await eventually(refuses, f"node {label} to refuse the revoked key", within=15)
    finally:
        for srv in nodes:
            srv.cleanup()
        await serve_process.pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
