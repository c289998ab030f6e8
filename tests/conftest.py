"""Fixtures: an app on a fresh database (SQLite file, and PostgreSQL where it answers),
HTTP clients for both transports, and API keys of two organisations."""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlmodel import SQLModel
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.auth import generate_key, hash_key
from evidence_gateway.models import ApiKey
from evidence_gateway.resolvers.organizations import get_or_create_org
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from tests.gates import gate  # noqa: F401  (the checkpoint barrier fixture, for every test)

PG_HOST = os.environ.get("EVIDENCE_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("EVIDENCE_TEST_PG_PORT", "5432"))
PG_USER = os.environ.get("EVIDENCE_TEST_PG_USER", "postgres")


def _pg_answers() -> bool:
    if os.environ.get("EVIDENCE_TEST_SKIP_PG") == "1":
        return False
    try:
        with socket.create_connection((PG_HOST, PG_PORT), timeout=1):
            return True
    except OSError:
        return False


PG_AVAILABLE = _pg_answers()


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, database="postgres")
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """One fresh PostgreSQL database for the whole run, dropped at the end."""
    from evidence_gateway.store import migrate
    from evidence_gateway.store.db import Database

    name = f"evidence_test_{uuid.uuid4().hex[:12]}"
    url = f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"

    async def upgrade() -> None:
        # Once per run, as an operator would (`db upgrade`); each test's app then only checks it.
        db = Database(url)
        try:
            await migrate.upgrade(db)
        finally:
            await db.dispose()

    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        asyncio.run(upgrade())
        yield url
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(
    params=[
        "sqlite",
        pytest.param(
            "postgresql",
            marks=pytest.mark.skipif(not PG_AVAILABLE, reason="no PostgreSQL on 127.0.0.1:5432"),
        ),
    ]
)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}"
    return str(request.getfixturevalue("pg_database"))


@pytest.fixture
def settings(database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        secret_key="test-secret-key",
        public_base_url="http://testserver",
        webhook_allow_private_targets=True,
        # Keys are looked up on every request in tests; test_auth covers the cache itself.
        auth_cache_seconds=0,
        # No queue polling between statements that tests count; tests/test_long_work.py turns it on.
        background_work=False,
        # Webhook tests start the dispatcher themselves (tests/test_webhook_endpoints.py).
        dispatcher=False,
        # Keyless requests and wrong keys are many here (contract and auth tests); the limits
        # themselves are tests/test_rate_limits.py's.
        rate_limit_per_address=1_000_000,
        rate_limit_auth_failures=1_000_000,
        # GraphiQL, keyless introspection and "Did you mean" are development aids (off in
        # production); many tests use them. tests/test_edge_hardening.py checks production's defaults.
        env="development",
        # As `serve --host 127.0.0.1` tells the app: /metrics without a token (tests/test_metrics.py).
        listen_host="127.0.0.1",
    )


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[Starlette]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application
        db = application.state.db
        if not db.is_sqlite:
            # Nothing may hold row locks the TRUNCATE waits for (it would deadlock with a fan-out).
            await application.state.dispatcher.stop(0)
            # Fresh state per test on the shared run database: every row deleted, reference data
            # too (the next app seeds it again). DELETE rather than TRUNCATE: a test leaves a few
            # rows, and TRUNCATE's fixed cost per table (new files, synced at commit) made this a
            # third of a second per test, more than most tests take. Foreign-key triggers are off
            # for the transaction (the server role may), so order and row counts do not matter.
            async with db.engine.begin() as conn:
                await conn.execute(text("SET LOCAL session_replication_role = replica"))
                for table in reversed(SQLModel.metadata.sorted_tables):
                    await conn.execute(text(f'DELETE FROM "{table.name}"'))


@pytest.fixture
async def client(app: Starlette) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


async def seed_key(db: Database, org_name: str) -> str:
    """An admin key of the organisation (made first if new), written straight into the tables as
    a test's starting state: without the ``api_key.created`` event that making a key through the
    API or the command line appends (tests/test_keys.py), so a test's event log holds only what
    the test itself did."""
    org = await get_or_create_org(db, org_name)
    key = generate_key()
    async with db.write() as session:
        session.add(ApiKey(org_id=org.id, key_hash=hash_key(key), display_prefix=key[:10], scope="admin"))
    return key


@pytest.fixture
async def key_a(app: Starlette) -> str:
    return await seed_key(app.state.db, "org-a")


@pytest.fixture
async def key_b(app: Starlette) -> str:
    return await seed_key(app.state.db, "org-b")


@dataclass
class Api:
    """Both transports behind one small client, so tests read like the contract."""

    http: httpx.AsyncClient
    key: str | None

    def _headers(self, key: str | None) -> dict[str, str]:
        chosen = self.key if key == "default" else key
        return {"Authorization": f"Bearer {chosen}"} if chosen else {}

    async def get(
        self, path: str, *, key: str | None = "default", headers: dict[str, str] | None = None, **kw: Any
    ) -> httpx.Response:
        return await self.http.get(path, headers={**self._headers(key), **(headers or {})}, **kw)

    async def post(
        self,
        path: str,
        json: Any = None,
        *,
        key: str | None = "default",
        headers: dict[str, str] | None = None,
        **kw: Any,
    ) -> httpx.Response:
        return await self.http.post(path, json=json, headers={**self._headers(key), **(headers or {})}, **kw)

    async def patch(
        self, path: str, json: Any = None, *, key: str | None = "default", headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return await self.http.patch(path, json=json, headers={**self._headers(key), **(headers or {})})

    async def delete(
        self, path: str, *, key: str | None = "default", headers: dict[str, str] | None = None
    ) -> httpx.Response:
        return await self.http.delete(path, headers={**self._headers(key), **(headers or {})})

    async def gql(
        self, query: str, variables: dict[str, Any] | None = None, *, key: str | None = "default"
    ) -> dict[str, Any]:
        resp = await self.http.post(
            "/graphql", json={"query": query, "variables": variables or {}}, headers=self._headers(key)
        )
        body: dict[str, Any] = resp.json()
        body["_status"] = resp.status_code
        return body


Configured = Callable[..., AbstractAsyncContextManager[Api]]


@pytest.fixture
def configured(settings: Settings, app: Starlette) -> Configured:
    """Another app on the test's database with some settings changed (``async with
    configured(graphql_max_mutations=2) as api``): its own process state (caches, limits), the
    same tables, a key of its own organisation. The fixture app cleans the database up."""

    @asynccontextmanager
    async def start(**changes: Any) -> AsyncIterator[Api]:
        other = create_app(settings.model_copy(update=changes))
        async with other.router.lifespan_context(other):
            key = await seed_key(other.state.db, "org-configured")
            transport = httpx.ASGITransport(app=other)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
                yield Api(http, key)

    return start


@pytest.fixture
def api(client: httpx.AsyncClient, key_a: str) -> Api:
    """Calls as organisation A unless a test passes ``key=``."""
    return Api(client, key_a)


@pytest.fixture
def api_b(client: httpx.AsyncClient, key_b: str) -> Api:
    return Api(client, key_b)


def gql_answer(body: dict[str, Any]) -> dict[str, Any]:
    """The answer without its response-level ``extensions`` (the document's cost, docs/observability.md),
    so a test can compare data, errors and status whole."""
    return {k: v for k, v in body.items() if k != "extensions"}


def gql_code(body: dict[str, Any]) -> str | None:
    errors = body.get("errors") or []
    return errors[0]["extensions"]["code"] if errors else None


async def create_workspace(api: Api, **fields: Any) -> dict[str, Any]:
    resp = await api.post("/api/v2/workspaces", {"name": "Q1 freight", **fields})
    assert resp.status_code == 201, resp.text
    data: dict[str, Any] = resp.json()["data"]
    return data


def error_body(resp: httpx.Response) -> Any:
    """The error body without its request id, after checking the id is the answer's own
    (REST ``details.request_id``, GraphQL ``extensions.request_id``): tests then compare the rest."""
    body = resp.json()
    rid = resp.headers["X-Request-ID"]
    if isinstance(body.get("details"), dict):
        assert body["details"].pop("request_id") == rid
    for error in body.get("errors") or []:
        assert error["extensions"].pop("request_id") == rid
    return body
