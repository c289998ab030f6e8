"""Org-scoped batch reads behind every GraphQL DataLoader.

The one place that turns a list of keys into records for a relation, so each of them is
filtered on the caller's organisation by construction: a foreign key is simply absent. The
statements are built once per relation (the keys are one expanding parameter) and read as
records (``records.py``), which the GraphQL types take by attribute.
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import cache
from typing import Any, TypeVar

from sqlalchemy import Select, bindparam, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned, rows, table_of
from evidence_gateway.store.records import records

K = TypeVar("K", bound=Hashable)
# Orders for grouped_by_key: (column name, descending).
NEWEST = (("created_at", True), ("id", True))
OLDEST = (("created_at", False), ("id", False))


@cache
def _by_keys(model: Any, key_name: str, order: tuple[tuple[str, bool], ...] = ()) -> Select[Any]:
    table = table_of(model)
    stmt = select(*table.c).where(owned(table), table.c[key_name].in_(bindparam("batch_keys", expanding=True)))
    return stmt.order_by(*(table.c[name].desc() if desc else table.c[name] for name, desc in order))


async def one_per_key(ctx: Ctx, model: Any, key: Any, keys: list[K]) -> dict[K, Any]:
    """``{key: record}`` where ``key`` is unique per record (an id, a run id)."""
    found = await rows(ctx, _by_keys(model, key.key), batch_keys=list(keys))
    return {getattr(r, key.key): r for r in records(table_of(model), found)}


async def grouped_by_key(
    ctx: Ctx, model: Any, key: Any, keys: list[K], *order_by: tuple[str, bool]
) -> dict[K, list[Any]]:
    """``{key: [records...]}`` in ``order_by`` order (column name, descending); every requested
    key is present."""
    out: dict[K, list[Any]] = {k: [] for k in keys}
    found = await rows(ctx, _by_keys(model, key.key, tuple(order_by)), batch_keys=list(keys))
    for record in records(table_of(model), found):
        out[getattr(record, key.key)].append(record)
    return out
