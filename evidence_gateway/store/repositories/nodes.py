"""node(id): which of the caller's tables holds an id, in one statement.

Ids are random UUIDs, unique across tables, so the id is enough: one statement asks every
node table at once (each by primary key, each filtered by the caller's organisation).
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import literal, select, union_all

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned_by, table_of


async def table_holding(ctx: Ctx, node_id: uuid.UUID, models: tuple[Any, ...]) -> int | None:
    """The index in ``models`` of the caller's table that has a row ``node_id``, or None (another
    organisation's id is not found, exactly as an unknown one)."""
    probes = [
        select(literal(i).label("kind")).where(table_of(model).c.id == node_id, owned_by(ctx, model))
        for i, model in enumerate(models)
    ]
    async with ctx.db.read() as session:
        found: int | None = (await session.execute(union_all(*probes).limit(1))).scalar_one_or_none()
    return found
