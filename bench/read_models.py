"""What rendering a REST list page costs per item: the read models' ``render`` against pydantic's
own paths and against the field tuples they replaced.

    python bench/read_models.py            # 20 workspaces a page, ORM entities and Core rows

CPU only (no server, no database round trip in the timed part): each variant turns one page of
20 workspaces into the JSON bytes of ``{"data": [...]}``. Figures go in docs/performance.md.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from sqlalchemy import select

from evidence_gateway import models
from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.read_models import Workspace
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database

PAGE = 20
ROUNDS = 7
# The path the read models replaced: a comprehension over a tuple of field names (the names
# themselves now come from the read model, so this file does not name a field again).
FIELDS_BEFORE = tuple(Workspace.model_fields)
PAGE_ADAPTER = TypeAdapter(list[Workspace])


async def _page() -> tuple[list[Any], list[Any]]:
    """20 workspaces as the resolvers read them: ORM entities, and Core rows of the same table."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        try:
            await migrate.upgrade(db)  # as the app's start-up brings an SQLite file to head
            await create_api_key(db, "bench")
            async with db.write() as session:
                org = (await session.execute(select(models.Organization))).scalars().one()
                for i in range(PAGE):
                    session.add(models.Workspace(org_id=org.id, name=f"ws {i}", external_reference=f"r{i}"))
            async with db.read() as session:
                entities = list((await session.execute(select(models.Workspace))).scalars())
                table = models.Workspace.__table__  # type: ignore[attr-defined]
                rows = list(await session.execute(select(*table.columns)))
        finally:
            await db.dispose()
    return entities, rows


def _variants() -> dict[str, Callable[[list[Any]], bytes]]:
    return {
        "field tuple + orjson (before)": lambda page: dumps(
            {"data": [{f: getattr(o, f) for f in FIELDS_BEFORE} for o in page]}
        ),
        "Workspace.render + orjson (now)": lambda page: dumps({"data": [Workspace.render(o) for o in page]}),
        "model_validate + model_dump(json)": lambda page: dumps(
            {"data": [Workspace.model_validate(o).model_dump(mode="json") for o in page]}
        ),
        "model_validate + orjson": lambda page: dumps(
            {"data": [Workspace.model_validate(o).model_dump() for o in page]}
        ),
        "TypeAdapter validate + dump_json": lambda page: PAGE_ADAPTER.dump_json(PAGE_ADAPTER.validate_python(page)),
    }


def _per_item_us(render: Callable[[list[Any]], bytes], page: list[Any]) -> float:
    loops = 1000
    start = time.perf_counter()
    for _ in range(loops):
        render(page)
    return (time.perf_counter() - start) / loops / len(page) * 1e6


def main() -> None:
    entities, rows = asyncio.run(_page())
    variants = _variants()
    samples: dict[tuple[str, str], list[float]] = {}
    # Interleaved rounds, best of each: other work on the box slows a round, never speeds one up.
    for _ in range(ROUNDS):
        for name, render in variants.items():
            for source, page in (("orm", entities), ("row", rows)):
                samples.setdefault((name, source), []).append(_per_item_us(render, page))
    print(f"{'variant (20 workspaces a page)':<38} {'ORM µs/item':>12} {'Row µs/item':>12}")
    for name in variants:
        orm, row = min(samples[name, "orm"]), min(samples[name, "row"])
        print(f"{name:<38} {orm:>12.2f} {row:>12.2f}")


if __name__ == "__main__":
    main()
