"""Cursor connections at 100k rows: page 1 against a page 5,000 deep, REST offset against keyset.

    python bench/connections.py            # SQLite, and PostgreSQL when it answers on 127.0.0.1:5432
    python bench/connections.py --rounds 50

Seeds one organisation with 100,000 workspaces (bulk SQL, as bench/run.py's scale test), then
times, in process (httpx over ASGI, so the figures are the app's own work without a socket):

- REST ``GET /api/v2/workspaces?page=1`` and ``page=5000`` (OFFSET 99,980 and a COUNT);
- GraphQL ``workspacesConnection(first: 20)`` and the same ``after`` the cursor of row 99,980;
- the same two with ``totalCount`` selected (a COUNT, on demand only).

It also prints the plan the database chose for the deep keyset page, which must be a range of
the ``(org_id, created_at, id)`` index. docs/performance.md ("Cursor connections") has a run.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select, text
from sqlalchemy.dialects import postgresql, sqlite

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.run import _bulk_insert_workspaces, _pg_admin, pg_available  # noqa: E402
from evidence_gateway.app import create_app  # noqa: E402
from evidence_gateway.models import Organization, Workspace  # noqa: E402
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository  # noqa: E402

WORKSPACES = WorkspaceRepository._order
from evidence_gateway.resolvers.organizations import create_api_key  # noqa: E402
from evidence_gateway.settings import Settings  # noqa: E402
from evidence_gateway.store import migrate  # noqa: E402
from evidence_gateway.store.db import Database  # noqa: E402
from evidence_gateway.store.keyset import Window  # noqa: E402

ROWS = 100_000
DEEP = ROWS - 20  # page 5,000 of 20
PG = "postgresql+asyncpg://postgres@127.0.0.1:5432"
CONNECTION = "query($after: String) { workspacesConnection(first: 20, after: $after) { %s nodes { id name } } }"


async def _seed(url: str) -> str:
    db = Database(url)
    try:
        await migrate.upgrade(db)
        key = await create_api_key(db, "bench-scale")
    finally:
        await db.dispose()
    await _bulk_insert_workspaces(url, "bench-scale", ROWS)
    return key


async def _deep_cursor_and_plan(url: str) -> tuple[str, list[str]]:
    """The cursor of row DEEP (newest first) and the plan of the keyset page that starts there."""
    db = Database(url)
    try:
        async with db.read() as session:
            if not db.is_sqlite:
                await session.execute(text("ANALYZE workspace"))
            org_id = (await session.execute(select(Organization.id).where(Organization.name == "bench-scale"))).scalar()
            row = (
                (
                    await session.execute(
                        select(Workspace)
                        .where(Workspace.org_id == org_id)
                        .order_by(*WORKSPACES.sort())
                        .offset(DEEP - 1)
                    )
                )
                .scalars()
                .first()
            )
            key = WORKSPACES.key_of(row)
            win = Window(first=20, last=None, after=key, before=None)
            stmt = (
                select(Workspace)
                .where(Workspace.org_id == org_id, WORKSPACES.beyond(win.after or (), sqlite=db.is_sqlite))
                .order_by(*WORKSPACES.sort())
                .limit(21)
            )
            dialect = sqlite.dialect() if db.is_sqlite else postgresql.dialect()
            sql = str(stmt.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
            explain = "EXPLAIN QUERY PLAN " if db.is_sqlite else "EXPLAIN "
            plan = [" ".join(str(c) for c in r) for r in (await session.execute(text(explain + sql))).all()]
        return WORKSPACES.encode(key), plan
    finally:
        await db.dispose()


async def _median_ms(call: Any, rounds: int) -> float:
    await call()  # warm: caches, plans, the pool
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        await call()
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


async def _measure(url: str, rounds: int) -> dict[str, Any]:
    key = await _seed(url)
    cursor, plan = await _deep_cursor_and_plan(url)
    settings = Settings(database_url=url, secret_key="bench", background_work=False, dispatcher=False)
    app = create_app(settings)
    headers = {"Authorization": f"Bearer {key}"}
    out: dict[str, Any] = {"plan": plan}
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench", headers=headers) as client,
    ):

        async def rest(page: int) -> None:
            resp = await client.get("/api/v2/workspaces", params={"page": page, "per_page": 20})
            assert resp.status_code == 200 and len(resp.json()["data"]) == 20, resp.text[:200]

        async def gql(after: str | None, total: bool) -> None:
            doc = CONNECTION % ("totalCount" if total else "")
            resp = await client.post("/graphql", json={"query": doc, "variables": {"after": after}})
            body = resp.json()
            assert "errors" not in body and len(body["data"]["workspacesConnection"]["nodes"]) == 20, body

        out["rest page 1"] = await _median_ms(lambda: rest(1), rounds)
        out["rest page 5,000"] = await _median_ms(lambda: rest(5_000), rounds)
        out["connection first page"] = await _median_ms(lambda: gql(None, False), rounds)
        out["connection after row 99,980"] = await _median_ms(lambda: gql(cursor, False), rounds)
        out["connection first page + totalCount"] = await _median_ms(lambda: gql(None, True), rounds)
        out["connection after row 99,980 + totalCount"] = await _median_ms(lambda: gql(cursor, True), rounds)
    return out


async def main(rounds: int) -> None:
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        runs["SQLite"] = await _measure(f"sqlite+aiosqlite:///{tmp}/bench.db", rounds)
    if pg_available():
        name = f"bench_connections_{uuid.uuid4().hex[:8]}"
        await _pg_admin(f'CREATE DATABASE "{name}"')
        try:
            runs["PostgreSQL"] = await _measure(f"{PG}/{name}", rounds)
        finally:
            await _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    for database, figures in runs.items():
        print(f"\n{database}: {ROWS:,} workspaces, median of {rounds} requests (ms)")
        for name, value in figures.items():
            if name != "plan":
                print(f"  {name:45s} {value:8.2f}")
        print("  plan of the deep keyset page:")
        for line in figures["plan"]:
            print(f"    {line}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    asyncio.run(main(parser.parse_args().rounds))
