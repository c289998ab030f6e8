"""Where the time of a 50,000-row import goes, stage by stage, in-process (no HTTP).

Uses the product's own pieces (orjson, the ImportCreate model, the Shipment table) on a
fresh SQLite file and compares the ORM bulk path the resolver uses with a plain Core
executemany, so a proposed fix can be sized before it is made.

    python bench/import_phases.py [--rows 50000] [--database-url sqlite:///...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path

import orjson
from sqlalchemy import insert

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import shipments  # noqa: E402

from evidence_gateway.models import ImportBatch, Organization, Shipment, Workspace  # noqa: E402
from evidence_gateway.resolvers.imports import INSERT_CHUNK, ImportCreate  # noqa: E402
from evidence_gateway.resolvers.validation import parse  # noqa: E402
from evidence_gateway.store import migrate  # noqa: E402
from evidence_gateway.store.db import Database  # noqa: E402


async def main(rows_n: int, url: str | None) -> dict[str, float]:
    tmp = tempfile.mkdtemp(prefix="eg-import-")
    db = Database(url or f"sqlite:///{tmp}/import.db")
    await migrate.prepare(db, migrate=True)  # a throwaway bench database: bring it to head
    out: dict[str, float] = {}
    body = json.dumps({"source_row_count": rows_n, "shipments": shipments(rows_n)}).encode()

    t = time.perf_counter()
    data = orjson.loads(body)
    out["orjson_loads_s"] = time.perf_counter() - t
    t = time.perf_counter()
    payload = parse(ImportCreate, data)
    out["pydantic_validate_s"] = time.perf_counter() - t
    t = time.perf_counter()
    dumped = [row.model_dump() for row in payload.shipments or []]
    out["model_dump_s"] = time.perf_counter() - t

    org = Organization(name=f"o-{uuid.uuid4()}", webhook_signing_secret="whsec_x")
    async with db.write() as s:
        s.add(org)
    ws = Workspace(org_id=org.id, name="w")
    async with db.write() as s:
        s.add(ws)

    async def store(orm: bool) -> float:
        batch = ImportBatch(workspace_id=ws.id, org_id=org.id, source_row_count=rows_n, shipment_count=rows_n)
        t0 = time.perf_counter()
        async with db.write() as s:
            s.add(batch)
            await s.flush()
            for start in range(0, rows_n, INSERT_CHUNK):
                chunk = [
                    {
                        "id": uuid.uuid4(),
                        "org_id": org.id,
                        "workspace_id": ws.id,
                        "import_batch_id": batch.id,
                        "row_index": start + i,
                        **row,
                    }  # fmt: skip
                    for i, row in enumerate(dumped[start : start + INSERT_CHUNK])
                ]
                if orm:
                    await s.execute(insert(Shipment), chunk)
                else:
                    conn = await s.connection()
                    await conn.execute(Shipment.__table__.insert(), chunk)  # type: ignore[attr-defined]
        return time.perf_counter() - t0

    # Both orders, so neither path is favoured by a warm page cache.
    out["insert_core_executemany_s"] = await store(orm=False)
    out["insert_orm_bulk_s"] = await store(orm=True)
    out["insert_core_executemany_again_s"] = await store(orm=False)
    await db.dispose()
    return {k: round(v, 3) for k, v in out.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.rows, args.database_url)), indent=2))
