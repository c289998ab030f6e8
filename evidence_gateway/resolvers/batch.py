"""Org-scoped batch reads behind every GraphQL DataLoader.

The one place that turns a list of keys into records for a relation, so each of them is
filtered on the caller's organisation by construction: a foreign key is simply absent.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

from sqlalchemy import select
from sqlmodel import col

from evidence_gateway.resolvers.context import Ctx

M = TypeVar("M")
K = TypeVar("K", bound=Hashable)


async def one_per_key(ctx: Ctx, model: type[M], key: Any, keys: list[K]) -> dict[K, M]:
    """``{key: record}`` where ``key`` is unique per record (an id, a run id)."""
    async with ctx.db.read() as session:
        rows = await session.execute(
            select(model).where(model.org_id == ctx.org_id, col(key).in_(keys))  # type: ignore[attr-defined]
        )
        return {getattr(r, key.key): r for r in rows.scalars()}


async def grouped_by_key(ctx: Ctx, model: type[M], key: Any, keys: list[K], *order_by: Any) -> dict[K, list[M]]:
    """``{key: [records...]}`` in ``order_by`` order; every requested key is present."""
    out: dict[K, list[M]] = {k: [] for k in keys}
    async with ctx.db.read() as session:
        rows = await session.execute(
            select(model)
            .where(model.org_id == ctx.org_id, col(key).in_(keys))  # type: ignore[attr-defined]
            .order_by(*order_by)
        )
        for record in rows.scalars():
            out[getattr(record, key.key)].append(record)
    return out
