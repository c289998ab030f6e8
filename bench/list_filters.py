"""A filtered, ordered page of workspaces at 100,000 rows against 1,000, in one organisation.

    python bench/list_filters.py            # SQLite, and PostgreSQL when it answers on 127.0.0.1:5432
    python bench/list_filters.py --rounds 50

Seeds one organisation per size (bulk SQL): a tenth of the workspaces ``review_needed``, the
rest spread over the other states, a name from a small vocabulary plus a number (so names
repeat a prefix), created over a year and changed later. Then times, in process (httpx over
ASGI: the app's own work, no socket), the median of each request:

- GraphQL ``workspacesConnection(filter: {status: [REVIEW_NEEDED]}, orderBy: CREATED_AT DESC)``,
  its first page and a page after a cursor half-way down (a range of
  ``ix_workspace_org_status_created``);
- the same filter ordered by ``NAME`` and by ``UPDATED_AT`` (the (org, key, id) index walked,
  the status checked on each row: a tenth match, so about 200 rows read for 20);
- ``nameContains`` with an ``UPDATED_AT`` order: a common word (a fifth of the names: the ordered
  index is walked until 20 match), a rare pair of words (1 in 100) and one name's number (one
  row), which without an index read most rows (PostgreSQL: pg_trgm's GIN index on
  ``name`` serves them, store/text_search.py; SQLite: the FTS5 trigram table
  ``workspace_name_fts``, store/sqlite_text_search.py);
- REST ``GET /v2/workspaces?filter[status]=review_needed&sort=-created_at``: the contract's
  ``pagination.total`` counts every matching row, so this one grows with the rows that match.

Prints each figure at both sizes with their ratio, and the plans of the filtered keyset page
and of the one-name substring page.
Figures only: no assertion on time (tests/test_list_filters.py checks the behaviour).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import insert, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import _pg_admin, pg_available  # noqa: E402
from evidence_gateway.app import create_app  # noqa: E402
from evidence_gateway.models import Organization, Workspace  # noqa: E402
from evidence_gateway.resolvers.list_queries import WORKSPACES, parse_list_query  # noqa: E402
from evidence_gateway.resolvers.organizations import create_api_key  # noqa: E402
from evidence_gateway.settings import Settings  # noqa: E402
from evidence_gateway.store import migrate  # noqa: E402
from evidence_gateway.store.db import Database, normalise_url  # noqa: E402
from evidence_gateway.store.list_filters import conditions, order_of  # noqa: E402
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository  # noqa: E402

SIZES = (1_000, 100_000)
PG = "postgresql+asyncpg://postgres@127.0.0.1:5432"
OTHER_STATES = ("draft", "data_imported", "calculated", "approved", "published")
WORDS = ("north", "south", "depot", "hub", "port", "rail", "air", "road", "coast", "inland")

PAGE = """query($filter: WorkspaceFilter, $orderBy: WorkspaceOrder, $after: String) {
  workspacesConnection(filter: $filter, orderBy: $orderBy, first: 20, after: $after) {
    nodes { id name status } pageInfo { endCursor }
  }
}"""
REVIEW = {"status": ["REVIEW_NEEDED"]}


async def _seed(url: str, count: int) -> str:
    db = Database(url)
    try:
        await migrate.upgrade(db)
        key = await create_api_key(db, "bench-filters")
    finally:
        await db.dispose()
    table = Workspace.__table__  # type: ignore[attr-defined]
    engine = create_async_engine(normalise_url(url))
    try:
        async with engine.begin() as conn:
            org_id = (await conn.execute(select(Organization.id).where(Organization.name == "bench-filters"))).scalar()
            base = datetime.now(UTC) - timedelta(days=400)
            rng = random.Random(30)
            for start in range(0, count, 10_000):
                rows = []
                for i in range(start, min(count, start + 10_000)):
                    created = base + timedelta(seconds=rng.randrange(0, 365 * 86400))
                    status = "review_needed" if i % 10 == 0 else OTHER_STATES[rng.randrange(len(OTHER_STATES))]
                    rows.append(
                        {
                            "id": uuid.uuid4(),
                            "org_id": org_id,
                            "name": f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}",
                            "status": status,
                            "created_at": created,
                            "updated_at": created + timedelta(seconds=rng.randrange(0, 30 * 86400)),
                        }
                    )
                await conn.execute(insert(table), rows)
        if not url.startswith("sqlite"):
            # As autovacuum leaves a table that took a bulk load: statistics and the visibility map.
            async with engine.connect() as conn:
                await conn.execution_options(isolation_level="AUTOCOMMIT")
                await conn.exec_driver_sql("VACUUM ANALYZE workspace")
        if url.startswith("sqlite"):
            async with engine.connect() as conn:
                await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
                await conn.exec_driver_sql("ANALYZE")
    finally:
        await engine.dispose()
    return key


async def _plan(url: str, filters: dict[str, Any] | None = None, order: tuple[str, str] | None = None) -> list[str]:
    """The plan the database chose for a filtered keyset page (by default status, newest first)
    after a cursor half-way down the filtered rows (the first page if fewer than two match)."""
    filters = filters or {"status": ["review_needed"]}
    query = parse_list_query(WORKSPACES, filters, order or ("created_at", "desc"))
    table = Workspace.__table__  # type: ignore[attr-defined]
    order = order_of(table, query, WorkspaceRepository._order)
    db = Database(url)
    try:
        async with db.read() as session:
            org_id = (
                await session.execute(select(Organization.id).where(Organization.name == "bench-filters"))
            ).scalar()
            scoped = [table.c.org_id == org_id, *conditions(table, query)]
            filtered = select(table).where(*scoped).order_by(*order.sort())
            total = len((await session.execute(select(table.c.id).where(*scoped))).all())
            middle = (await session.execute(filtered.offset(total // 2).limit(1))).first()
            stmt = filtered.limit(21) if total < 2 else filtered.where(order.beyond(order.key_of(middle))).limit(21)
            dialect = sqlite.dialect() if db.is_sqlite else postgresql.dialect()
            sql = str(stmt.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
            explain = "EXPLAIN QUERY PLAN " if db.is_sqlite else "EXPLAIN "
            return [" ".join(str(c) for c in r) for r in (await session.execute(text(explain + sql))).all()]
    finally:
        await db.dispose()


async def _median_ms(call: Any, rounds: int) -> tuple[float, float]:
    """(median, fastest) in ms: on a shared machine the fastest is the steadier comparison."""
    for _ in range(5):  # warm: caches, plans, the pool, the first requests of the process
        await call()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2), round(min(times), 2)


async def _measure(url: str, count: int, rounds: int) -> dict[str, Any]:
    key = await _seed(url, count)
    plan = await _plan(url)
    needle = f" {count // 2}"  # one name ends with it: "<word> <word> 50000"
    plan_contains = await _plan(url, {"name_contains": needle}, ("updated_at", "desc"))
    settings = Settings(database_url=url, secret_key="bench", background_work=False, dispatcher=False)
    app = create_app(settings)
    headers = {"Authorization": f"Bearer {key}"}
    out: dict[str, Any] = {"plan": plan, "plan contains": plan_contains}
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench", headers=headers) as client,
    ):

        async def gql(variables: dict[str, Any], expect: int | None = 20) -> dict[str, Any]:
            resp = await client.post("/graphql", json={"query": PAGE, "variables": variables})
            body = resp.json()
            assert "errors" not in body, body
            assert expect is None or len(body["data"]["workspacesConnection"]["nodes"]) == expect, body
            page: dict[str, Any] = body["data"]["workspacesConnection"]
            return page

        newest = {"filter": REVIEW, "orderBy": {"field": "CREATED_AT", "direction": "DESC"}}
        # A cursor half-way down the filtered list: follow pages until then.
        middle = None
        for _ in range(count // 10 // 20 // 2):
            middle = (await gql({**newest, "after": middle}))["pageInfo"]["endCursor"]

        async def rest() -> None:
            params = {"filter[status]": "review_needed", "sort": "-created_at", "per_page": 20}
            resp = await client.get("/api/v2/workspaces", params=params)
            assert resp.status_code == 200 and len(resp.json()["data"]) == 20, resp.text[:200]

        out["status, created_at desc: first page"] = await _median_ms(lambda: gql(newest), rounds)
        out["status, created_at desc: half-way page"] = await _median_ms(
            lambda: gql({**newest, "after": middle}), rounds
        )
        out["status, name asc"] = await _median_ms(
            lambda: gql({"filter": REVIEW, "orderBy": {"field": "NAME", "direction": "ASC"}}), rounds
        )
        out["status, updated_at desc"] = await _median_ms(
            lambda: gql({"filter": REVIEW, "orderBy": {"field": "UPDATED_AT", "direction": "DESC"}}), rounds
        )
        out["nameContains 'depot', updated_at desc"] = await _median_ms(
            lambda: gql({"filter": {"nameContains": "depot"}, "orderBy": {"field": "UPDATED_AT", "direction": "DESC"}}),
            rounds,
        )
        rare = {"filter": {"nameContains": "rail coast"}, "orderBy": {"field": "UPDATED_AT", "direction": "DESC"}}
        out["nameContains 'rail coast' (1 in 100)"] = await _median_ms(lambda: gql(rare, None), rounds)
        one = {"filter": {"nameContains": needle}, "orderBy": {"field": "UPDATED_AT", "direction": "DESC"}}
        out["nameContains one name's number (1 row)"] = await _median_ms(lambda: gql(one, 1), rounds)
        out["REST status, -created_at (with total)"] = await _median_ms(rest, rounds)
    return out


async def _database(kind: str, count: int, rounds: int, tmp: str) -> dict[str, Any]:
    if kind == "SQLite":
        return await _measure(f"sqlite+aiosqlite:///{tmp}/bench-{count}.db", count, rounds)
    name = f"bench_list_filters_{uuid.uuid4().hex[:8]}"
    await _pg_admin(f'CREATE DATABASE "{name}"')
    try:
        return await _measure(f"{PG}/{name}", count, rounds)
    finally:
        await _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def main(rounds: int) -> None:
    kinds = ["SQLite", *(["PostgreSQL"] if pg_available() else [])]
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            small = await _database(kind, SIZES[0], rounds, tmp)
            large = await _database(kind, SIZES[1], rounds, tmp)
            print(f"\n{kind}: one organisation, {SIZES[0]:,} vs {SIZES[1]:,} workspaces, {rounds} requests each (ms)")
            print(f"  {'request':42s} {'median':>17s} {'ratio':>6s} {'fastest':>17s} {'ratio':>6s}")
            print(f"  {'':42s} {SIZES[0]:>8,} {SIZES[1]:>8,} {'':6s} {SIZES[0]:>8,} {SIZES[1]:>8,}")
            for name, figures in small.items():
                if name.startswith("plan"):
                    continue
                (median, fastest), (big_median, big_fastest) = figures, large[name]
                print(
                    f"  {name:42s} {median:8.2f} {big_median:8.2f} {big_median / median:5.2f}x"
                    f" {fastest:8.2f} {big_fastest:8.2f} {big_fastest / fastest:5.2f}x"
                )
            print(f"  plan of the filtered keyset page half-way down, at {SIZES[1]:,}:")
            for line in large["plan"]:
                print(f"    {line}")
            print(f"  plan of the one-name substring page, at {SIZES[1]:,}:")
            for line in large["plan contains"]:
                print(f"    {line}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    asyncio.run(main(parser.parse_args().rounds))
