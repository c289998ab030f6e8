"""Proof cost against log size: inclusion and consistency proofs from the subtree cache
(resolvers/tlog_tree.py) beside proofs hashed from every leaf (how they were made before), at
1,000 and 100,000 leaves of one organisation.

    python bench/tlog_proofs.py [--sizes 1000 100000] [--proofs 50] [--database-url URL]

Without --database-url a fresh SQLite file; a PostgreSQL URL must name an empty database (the
schema is created in it). Events are inserted directly with random leaf hashes (the proof's
cost does not depend on what the leaves hash); each size is its own organisation. Prints the
median time of one proof each way, the cold first proof (the cache filled from the leaves once)
and the rows read.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import tempfile
import time
import uuid
from typing import Any

from sqlalchemy import insert

from evidence_gateway.core import merkle
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import Event, Organization
from evidence_gateway.resolvers.tlog_tree import proof_tree
from evidence_gateway.store import migrate
from evidence_gateway.store import tlog as store
from evidence_gateway.store.db import Database


async def _fill(db: Database, n: int) -> uuid.UUID:
    org = uuid.uuid4()
    now = utcnow()
    async with db.engine.begin() as conn:
        await conn.execute(
            insert(Organization).values(id=org, name=f"bench {org}", webhook_signing_secret="whsec_x", created_at=now)
        )
        for at in range(0, n, 5000):
            rows: list[dict[str, Any]] = [
                {"id": uuid.uuid4(), "org_id": org, "sequence": s, "type": "bench", "occurred_at": now,
                 "subject_type": "bench", "subject_id": org, "data": {}, "leaf_hash": os.urandom(32)}
                for s in range(at + 1, min(at + 5000, n) + 1)
            ]  # fmt: skip
            await conn.execute(insert(Event), rows)
    return org


async def _time(fn: Any) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


async def _measure(db: Database, n: int, proofs: int) -> dict[str, float]:
    org = await _fill(db, n)
    picks = [random.randrange(n) for _ in range(proofs)]
    old = random.randrange(1, n)

    async def whole(index: int) -> list[bytes]:
        return merkle.Tree(await store.leaves(db, org, n)).inclusion(index, n)

    async def cached(index: int) -> list[bytes]:
        return (await proof_tree(db, org, n, inclusions=[index])).inclusion(index, n)

    cold = await _time(lambda: cached(picks[0]))
    for index in picks[:5]:
        assert await whole(index) == await cached(index)
    whole_t = [await _time(lambda i=i: whole(i)) for i in picks]
    cached_t = [await _time(lambda i=i: cached(i)) for i in picks]

    async def consistency() -> list[bytes]:
        return (await proof_tree(db, org, n, consistencies=[(old, n)])).consistency(old, n)

    async def consistency_whole() -> list[bytes]:
        return merkle.Tree(await store.leaves(db, org, n)).consistency(old, n)

    assert await consistency() == await consistency_whole()
    return {
        "inclusion_whole_ms": statistics.median(whole_t) * 1000,
        "inclusion_cached_ms": statistics.median(cached_t) * 1000,
        "first_proof_cold_ms": cold * 1000,
        "consistency_whole_ms": statistics.median([await _time(consistency_whole) for _ in range(5)]) * 1000,
        "consistency_cached_ms": statistics.median([await _time(consistency) for _ in range(proofs)]) * 1000,
        "cached_rows": float(len(await store.all_subtrees(db, org))),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 100_000])
    parser.add_argument("--proofs", type=int, default=50)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite+aiosqlite:///{tmp}/bench.db"
        db = Database(url)
        try:
            await migrate.prepare(db, migrate=True)
            print(f"{'leaves':>8} {'incl. whole':>12} {'incl. cache':>12} {'cold first':>11} "
                  f"{'cons. whole':>12} {'cons. cache':>12} {'cache rows':>10}")  # fmt: skip
            for n in args.sizes:
                r = await _measure(db, n, args.proofs)
                print(f"{n:>8} {r['inclusion_whole_ms']:>10.2f}ms {r['inclusion_cached_ms']:>10.2f}ms "
                      f"{r['first_proof_cold_ms']:>9.2f}ms {r['consistency_whole_ms']:>10.2f}ms "
                      f"{r['consistency_cached_ms']:>10.2f}ms {int(r['cached_rows']):>10}")  # fmt: skip
        finally:
            await db.dispose()


if __name__ == "__main__":
    asyncio.run(main())
