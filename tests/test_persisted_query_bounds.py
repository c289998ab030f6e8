"""Automatic persisted queries are bounded: in size (refused before running), in count per
organisation (its least recently used make room), in lifetime (unused documents expire and are
purged) and in each node's memory (bytes)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, update
from sqlmodel import col
from starlette.applications import Starlette

from evidence_gateway.app import create_app
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import PersistedQuery
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.resolvers.persisted_queries import TOUCH_INTERVAL, PersistedQueries
from evidence_gateway.settings import Settings
from tests.conftest import Api, gql_code

GRAPHQL_RESPONSE = "application/graphql-response+json"

Node = Callable[..., AbstractAsyncContextManager[tuple[Starlette, Api]]]


def sha(document: str) -> str:
    return hashlib.sha256(document.encode()).hexdigest()


def document(n: int) -> str:
    return f"{{ q{n}: workspaces {{ pagination {{ total }} }} }}"


async def send(api: Api, query: str | None, sha256: str, accept: str = "application/json") -> httpx.Response:
    body: dict[str, Any] = {"extensions": {"persistedQuery": {"version": 1, "sha256Hash": sha256}}}
    if query is not None:
        body["query"] = query
    return await api.http.post("/graphql", json=body, headers={**api._headers("default"), "Accept": accept})


async def known(api: Api, query: str) -> bool:
    """Whether the server runs ``query`` by its hash alone."""
    body = (await send(api, None, sha(query))).json()
    if gql_code(body) == "PERSISTED_QUERY_NOT_FOUND":
        return False
    assert "errors" not in body, body
    return True


@pytest.fixture
def node(settings: Settings, app: Starlette) -> Node:
    """Another node on the test's database, with some settings changed: its own memory, the same
    table, a key of an organisation of its own (the fixture app cleans the database up)."""

    @asynccontextmanager
    async def start(org: str = "org-node", **changes: Any) -> AsyncIterator[tuple[Starlette, Api]]:
        other = create_app(settings.model_copy(update=changes))
        async with other.router.lifespan_context(other):
            key = await create_api_key(other.state.db, org)
            transport = httpx.ASGITransport(app=other)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
                yield other, Api(http, key)

    return start


async def rows(app: Starlette) -> dict[str, tuple[uuid.UUID | None, Any]]:
    async with app.state.db.read() as session:
        columns = (col(PersistedQuery.sha256), col(PersistedQuery.org_id), col(PersistedQuery.last_used_at))
        found = await session.execute(select(*columns))
        return {sha256: (org_id, used) for sha256, org_id, used in found.all()}


async def age(app: Starlette, query: str, by: timedelta) -> None:
    """Pretend the document was last used ``by`` ago (the clock is the one thing a test cannot wait for)."""
    async with app.state.db.write() as session:
        statement = update(PersistedQuery).where(col(PersistedQuery.sha256) == sha(query))
        await session.execute(statement.values(last_used_at=utcnow() - by))


# -- size -----------------------------------------------------------------------------------------


async def test_a_document_over_the_size_is_refused_before_it_runs(node: Node) -> None:
    async with node(graphql_persisted_query_max_bytes=1_024) as (app, api):
        padded = 'mutation { createWorkspace(input: {name: "apq"}) { id } }\n# ' + "x" * 1_024
        for accept, status in (("application/json", 200), (GRAPHQL_RESPONSE, 400)):
            resp = await send(api, padded, sha(padded), accept)
            assert resp.status_code == status
            (error,) = resp.json()["errors"]
            assert error["extensions"]["code"] == "PERSISTED_QUERY_TOO_LARGE"
            assert error["extensions"]["limit_bytes"] == 1_024
            assert "EVIDENCE_GRAPHQL_PERSISTED_QUERY_MAX_BYTES" in error["message"]
        assert (await api.get("/api/v2/workspaces")).json()["pagination"]["total"] == 0  # nothing ran
        assert await rows(app) == {}
        assert not await known(api, padded)
        # Sent without the hash, the same document runs (it is only too large to be kept).
        plain = await api.http.post("/graphql", json={"query": padded}, headers=api._headers("default"))
        assert plain.json()["data"]["createWorkspace"]["id"]
        at_limit = document(1) + " " * (1_024 - len(document(1)))
        assert (await send(api, at_limit, sha(at_limit))).json()["data"]
        assert await known(api, at_limit)


# -- count per organisation -----------------------------------------------------------------------


async def test_an_organisation_holds_at_most_its_count_and_its_oldest_make_room(
    node: Node, app: Starlette, api: Api
) -> None:
    async with node(graphql_persisted_queries_per_org=3) as (other_app, other):
        mine = document(100)
        assert (await send(api, mine, sha(mine))).json()["data"]  # the fixture's organisation: not counted
        for n in range(3):
            assert (await send(other, document(n), sha(document(n)))).json()["data"]
            await age(other_app, document(n), timedelta(minutes=30 - n))  # registered in this order
        assert all([await known(other, document(n)) for n in range(3)])

        assert (await send(other, document(3), sha(document(3)))).json()["data"]
        assert not await known(other, document(0))  # the least recently used went, on this node too
        assert all([await known(other, document(n)) for n in (1, 2, 3)])
        held = await rows(app)
        counted = [s for s, (org_id, _) in held.items() if org_id is not None and s != sha(mine)]
        assert len(counted) == 3
        assert await known(api, mine)  # another organisation's document stays

        # Registering an expired one again, or a known one, costs no room.
        assert (await send(other, document(1), sha(document(1)))).json()["data"]
        assert all([await known(other, document(n)) for n in (1, 2, 3)])

    async with app.state.db.read() as session:
        per_org = select(col(PersistedQuery.org_id), func.count()).group_by(col(PersistedQuery.org_id))
        assert max(count for _, count in (await session.execute(per_org)).all()) == 3


# -- lifetime -------------------------------------------------------------------------------------


async def test_documents_unused_for_the_lifetime_expire_and_are_purged(node: Node, app: Starlette) -> None:
    async with node(graphql_persisted_query_unused_days=7) as (_, first):
        for n in (1, 2):
            assert (await send(first, document(n), sha(document(n)))).json()["data"]
    await age(app, document(1), timedelta(days=8))
    await age(app, document(2), timedelta(days=6))

    async with node(graphql_persisted_query_unused_days=7) as (_, second):
        assert not await known(second, document(1))  # expired: not served, though still stored
        assert await known(second, document(2))
        assert set(await rows(app)) == {sha(document(1)), sha(document(2))}
        # The next registration purges what expired.
        assert (await send(second, document(3), sha(document(3)))).json()["data"]
        assert set(await rows(app)) == {sha(document(2)), sha(document(3))}
        # The client registers an expired document again, as APQ clients do on "not found".
        assert (await send(second, document(1), sha(document(1)))).json()["data"]
        assert await known(second, document(1))


async def test_a_use_is_recorded_at_most_once_an_interval(node: Node, app: Starlette) -> None:
    query = document(7)
    async with node() as (_, first):
        assert (await send(first, query, sha(query))).json()["data"]
    await age(app, query, timedelta(days=2))

    async with node() as (_, second):
        assert await known(second, query)  # read from the table, two days stale: written
        (_, used) = (await rows(app))[sha(query)]
        assert utcnow() - used < TOUCH_INTERVAL
        # Within the interval a node that served it writes nothing more.
        await age(app, query, TOUCH_INTERVAL / 2)
        for _ in range(3):
            assert await known(second, query)
        (_, used) = (await rows(app))[sha(query)]
        assert utcnow() - used >= TOUCH_INTERVAL / 2


# -- memory ---------------------------------------------------------------------------------------


async def test_each_node_keeps_documents_within_its_cache_bytes(node: Node) -> None:
    async with node(graphql_persisted_query_cache_bytes=2_000) as (app, api):
        cache: PersistedQueries = app.state.persisted_queries
        padded = [document(n) + " " * 300 for n in range(12)]  # ~350 bytes each, ~4 KB in all
        for query in padded:
            assert (await send(api, query, sha(query))).json()["data"]
            assert cache.cached_bytes <= 2_000
        assert all([await known(api, query) for query in padded])  # the table still has them all
        assert 0 < cache.cached_bytes <= 2_000
