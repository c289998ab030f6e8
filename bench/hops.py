"""Size the per-request database overhead of the workspace list, in-process (no HTTP).

Sequential calls on one event loop against a fresh SQLite file with 1,000 workspaces:

- product:            auth.authenticate + resolvers.workspaces.list_workspaces (what a request does)
- core_two_sessions:  the same shape in Core: two connections, BEGIN on each, auth / count / page
- core_one_conn:      one connection, autocommit (no BEGIN): auth, count, page
- core_one_conn_over: one connection, autocommit: auth, then page + count(*) OVER () in one statement

    python bench/hops.py [--n 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from typing import Any

from sqlalchemy import event, func, insert, select
from sqlalchemy.ext.asyncio import create_async_engine
from sqlmodel import SQLModel

from evidence_gateway.auth import authenticate, hash_key
from evidence_gateway.db import Database
from evidence_gateway.resolvers import organizations, workspaces
from evidence_gateway.resolvers.context import Ctx
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.settings import Settings
from evidence_gateway.timeutil import utcnow

WS = SQLModel.metadata.tables["workspace"]
KEY = SQLModel.metadata.tables["api_key"]


async def main(n: int) -> dict[str, Any]:
    path = f"{tempfile.mkdtemp(prefix='eg-hops-')}/hops.db"
    db = Database(f"sqlite:///{path}")
    await db.create_schema(migrate=True)  # a throwaway bench database: bring it to head
    key = await organizations.create_api_key(db, "hops")
    principal = await authenticate(db, f"Bearer {key}")
    now = utcnow()
    rows = [
        {
            "id": uuid.uuid4(),
            "org_id": principal.org_id,
            "name": f"w{i}",
            "status": "draft",
            "created_at": now,
            "updated_at": now,
        }  # fmt: skip
        for i in range(1000)
    ]
    async with db.write() as session:
        await session.execute(insert(WS), rows)
    ctx = Ctx(db=db, settings=Settings(database_url=f"sqlite:///{path}"), principal=principal)
    params = page_params(1, 20)

    async def product() -> None:
        p = await authenticate(db, f"Bearer {key}")
        await workspaces.list_workspaces(Ctx(db=db, settings=ctx.settings, principal=p), params)

    engine = create_async_engine(f"sqlite+aiosqlite:///{path}")

    @event.listens_for(engine.sync_engine, "connect")
    def _connect(dbapi_conn: Any, _rec: Any) -> None:
        dbapi_conn.isolation_level = None

    digest = hash_key(key)
    auth_q = select(KEY.c.id, KEY.c.org_id).where(KEY.c.key_hash == digest, KEY.c.revoked_at.is_(None))
    scoped = WS.c.org_id == principal.org_id
    order = (WS.c.created_at.desc(), WS.c.id.desc())
    count_q = select(func.count()).select_from(WS).where(scoped)
    page_q = select(*WS.c).where(scoped).order_by(*order).limit(20)
    over_q = select(*WS.c, func.count().over().label("total")).where(scoped).order_by(*order).limit(20)

    async def core_two_sessions() -> None:
        async with engine.connect() as conn:
            await conn.exec_driver_sql("BEGIN")
            (await conn.execute(auth_q)).first()
            await conn.rollback()
        async with engine.connect() as conn:
            await conn.exec_driver_sql("BEGIN")
            (await conn.execute(count_q)).scalar_one()
            (await conn.execute(page_q)).all()
            await conn.rollback()

    async def core_one_conn() -> None:
        async with engine.connect() as conn:
            (await conn.execute(auth_q)).first()
            (await conn.execute(count_q)).scalar_one()
            (await conn.execute(page_q)).all()

    async def core_one_conn_over() -> None:
        async with engine.connect() as conn:
            (await conn.execute(auth_q)).first()
            (await conn.execute(over_q)).all()

    out: dict[str, Any] = {}
    for name, fn in (("product", product), ("core_two_sessions", core_two_sessions),
                     ("core_one_conn", core_one_conn), ("core_one_conn_over", core_one_conn_over)):  # fmt: skip
        for _ in range(50):
            await fn()
        t0 = time.perf_counter()
        for _ in range(n):
            await fn()
        out[name] = {"us_per_request": round((time.perf_counter() - t0) / n * 1e6)}
    base = out["product"]["us_per_request"]
    for v in out.values():
        v["vs_product"] = round(base / v["us_per_request"], 2)
    await engine.dispose()
    await db.dispose()
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.n)), indent=2))
