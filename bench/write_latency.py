"""Per-request latency of one write (POST /api/v2/workspaces): one client, in process, sequential.

With one request at a time there is no queueing, so p50 is the write path's own cost (CPU and
the database's commit), steadier on a busy machine than a load test. Compare two builds by
alternating them, each pinned to the same core:

    PYTHONPATH=. taskset -c 1 python -P bench/write_latency.py sqlite 3000
    PYTHONPATH=../baseline taskset -c 1 python -P bench/write_latency.py postgresql 3000
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
import uuid

import asyncpg
import httpx

from evidence_gateway.app import create_app
from evidence_gateway.auth import generate_key, hash_key
from evidence_gateway.models import ApiKey
from evidence_gateway.resolvers.organizations import get_or_create_org
from evidence_gateway.settings import Settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database

PG = {"host": "127.0.0.1", "user": "postgres", "database": "postgres"}


async def _admin(sql: str) -> None:
    conn = await asyncpg.connect(**PG)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def measure(url: str, n: int) -> list[float]:
    db = Database(url)
    await migrate.upgrade(db)
    await db.dispose()
    app = create_app(Settings(database_url=url, secret_key="x", background_work=False, dispatcher=False))
    async with app.router.lifespan_context(app):
        org = await get_or_create_org(app.state.db, "bench")
        key = generate_key()
        async with app.state.db.write() as session:
            session.add(ApiKey(org_id=org.id, key_hash=hash_key(key), display_prefix=key[:10], scope="admin"))
        headers = {"Authorization": f"Bearer {key}"}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for _ in range(200):  # warm up
                await client.post("/api/v2/workspaces", json={"name": "w"}, headers=headers)
            latencies = []
            for _ in range(n):
                start = time.perf_counter()
                resp = await client.post("/api/v2/workspaces", json={"name": "w"}, headers=headers)
                latencies.append(time.perf_counter() - start)
                assert resp.status_code == 201
    return sorted(latencies)


async def main(backend: str, n: int) -> None:
    name = None
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/bench.db"
    else:
        name = f"bench_latency_{uuid.uuid4().hex[:8]}"
        await _admin(f'CREATE DATABASE "{name}"')
        url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    try:
        lat = await measure(url, n)
    finally:
        if name:
            await _admin(f'DROP DATABASE "{name}" WITH (FORCE)')
    print(f"{backend} p50 {lat[len(lat) // 2] * 1000:.3f} ms p90 {lat[int(len(lat) * 0.9)] * 1000:.3f} ms")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
