"""Per-request latency of one write (POST /api/v2/workspaces): one client, in process, sequential.

With one request at a time there is no queueing, so p50 is the write path's own cost (CPU and
the database's commit), steadier on a busy machine than a load test. Compare two builds by
alternating them, each pinned to the same core:

    PYTHONPATH=. taskset -c 1 python -P bench/write_latency.py sqlite 3000
    PYTHONPATH=../baseline taskset -c 1 python -P bench/write_latency.py postgresql 3000
"""

import asyncio
import sys
import tempfile
import time
import uuid

import httpx


async def main(backend: str, n: int) -> None:
    from evidence_gateway.app import create_app
    from evidence_gateway.auth import generate_key, hash_key
    from evidence_gateway.models import ApiKey
    from evidence_gateway.resolvers.organizations import get_or_create_org
    from evidence_gateway.settings import Settings
    from evidence_gateway.store import migrate
    from evidence_gateway.store.db import Database

    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/m.db"
        name = None
    else:
        import asyncpg

        name = f"micro_{uuid.uuid4().hex[:8]}"
        c = await asyncpg.connect(host="127.0.0.1", user="postgres", database="postgres")
        await c.execute(f'CREATE DATABASE "{name}"')
        await c.close()
        url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    db = Database(url)
    await migrate.upgrade(db)
    await db.dispose()
    s = Settings(database_url=url, secret_key="x", background_work=False, dispatcher=False, rate_limits=False)
    app = create_app(s)
    try:
        async with app.router.lifespan_context(app):
            org = await get_or_create_org(app.state.db, "m")
            key = generate_key()
            async with app.state.db.write() as session:
                session.add(ApiKey(org_id=org.id, key_hash=hash_key(key), display_prefix=key[:10], scope="admin"))
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                h = {"Authorization": f"Bearer {key}"}
                for _ in range(200):
                    await c.post("/api/v2/workspaces", json={"name": "w"}, headers=h)
                lat = []
                for _ in range(n):
                    t = time.perf_counter()
                    r = await c.post("/api/v2/workspaces", json={"name": "w"}, headers=h)
                    lat.append(time.perf_counter() - t)
                    assert r.status_code == 201
        lat.sort()
        print(f"{backend} p50 {lat[len(lat) // 2] * 1000:.3f} ms p90 {lat[int(len(lat) * 0.9)] * 1000:.3f} ms")
    finally:
        if name:
            import asyncpg

            c = await asyncpg.connect(host="127.0.0.1", user="postgres", database="postgres")
            await c.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            await c.close()


asyncio.run(main(sys.argv[1], int(sys.argv[2])))
