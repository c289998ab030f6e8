"""What a read costs through each way of reaching SQLite from the event loop (issue 15's decision).

One page of 20 workspaces with its total (1,000 in the organisation), eight reads in flight, the
process's CPU time per read (every thread's) and the wall time:

- orm_session:   an AsyncSession, ORM entities, count then page (the product until 2026-11-25)
- core_async:    the async engine (aiosqlite), Core rows, page and total in one statement; the
                 adapter takes about four hops to aiosqlite's thread per statement
- raw_aiosqlite: the same SQL, compiled once, on one raw aiosqlite connection (execute_fetchall:
                 one hop), values left as SQLite returns them (no type processing)
- reader_thread: Database.fetch, what the product does now: the same Core statement on a
                 sqlite3 connection in a reader thread, one hop, SQLAlchemy's type processing

    python bench/hops.py [--n 4000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiosqlite
from sqlalchemy import func, insert, select
from sqlalchemy.dialects import sqlite
from sqlmodel import SQLModel

from evidence_gateway.auth import authenticate
from evidence_gateway.core.scoping import ORG_PARAM
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import Workspace
from evidence_gateway.resolvers import organizations
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository

WS = SQLModel.metadata.tables["workspace"]
CONCURRENCY = 8


async def measure(read: Callable[[], Awaitable[Any]], n: int) -> dict[str, float]:
    async def client(count: int) -> None:
        for _ in range(count):
            await read()

    await asyncio.gather(*(client(20) for _ in range(CONCURRENCY)))
    per = n // CONCURRENCY
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(client(per) for _ in range(CONCURRENCY)))
    done = per * CONCURRENCY
    return {
        "cpu_us": round((time.process_time() - cpu) / done * 1e6),
        "wall_us": round((time.perf_counter() - wall) / done * 1e6),
    }


async def main(n: int) -> dict[str, Any]:
    path = f"{tempfile.mkdtemp(prefix='eg-hops-')}/hops.db"
    db = Database(f"sqlite:///{path}")
    await migrate.prepare(db, migrate=True)
    principal = await authenticate(db, f"Bearer {await organizations.create_api_key(db, 'hops')}")
    org, now = principal.org_id, utcnow()
    rows = [
        {"id": uuid.uuid4(), "org_id": org, "name": f"w{i}", "status": "draft", "created_at": now, "updated_at": now}
        for i in range(1000)
    ]
    async with db.write() as session:
        await session.execute(insert(WS), rows)

    scoped = WS.c.org_id == org
    order = (WS.c.created_at.desc(), WS.c.id.desc())
    count_q = select(func.count()).select_from(WS).where(scoped)
    orm_page = select(Workspace).where(scoped).order_by(*order).limit(20)
    page = WorkspaceRepository._newest._page
    params = {ORG_PARAM: org, "page_limit": 20, "page_offset": 0}
    compiled = page.compile(dialect=sqlite.dialect(), compile_kwargs={"render_postcompile": True})
    raw_sql = str(compiled)
    raw_params = tuple(
        (org.hex if name == ORG_PARAM else params[name]) for name in compiled.positiontup or ()
    )  # how SQLAlchemy binds a UUID on SQLite
    raw = await aiosqlite.connect(path, isolation_level=None)

    async def orm_session() -> None:
        async with db.read() as session:
            (await session.execute(count_q)).scalar_one()
            list((await session.execute(orm_page)).scalars())

    async def core_async() -> None:
        async with db.engine.connect() as conn:
            (await conn.execute(page, params)).all()

    async def raw_aiosqlite() -> None:
        await raw.execute_fetchall(raw_sql, raw_params)

    async def reader_thread() -> None:
        await db.fetch(page, params)

    assert len(await raw.execute_fetchall(raw_sql, raw_params)) == 20
    assert len(await db.fetch(page, params)) == 20
    out: dict[str, Any] = {}
    for name, read in (("orm_session", orm_session), ("core_async", core_async),
                       ("raw_aiosqlite", raw_aiosqlite), ("reader_thread", reader_thread)):  # fmt: skip
        out[name] = await measure(read, n)
    await raw.close()
    await db.dispose()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.n)), indent=2))
