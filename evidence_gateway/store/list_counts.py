"""Exact row counts of the organisation-wide REST lists, kept by the write path.

The unfiltered page/per_page list of a counted table reads its ``pagination.total`` from the
organisation's ``list_count`` row instead of counting the rows (a COUNT over 100,000 index
entries is most of a first page's time; the row is one index probe). The count stays exact
because it changes in the transaction that changes the rows, in one of two places:

- a change's one new row written with its events (``event_log``: ``uow.insert`` and
  ``single_new_row``): the bump is part of that statement (PostgreSQL) or runs right after the
  row's insert in the driver's thread (SQLite), so it commits or rolls back with it;
- everything the ORM flushes (several new rows, deletes): ``_after_flush`` below, on the
  flush's own connection.

A rollback takes the bump back with the rows. On PostgreSQL the row is locked from the bump to
the commit, so creates of one organisation's rows of one table queue on it, as all of an
organisation's writers already queue on its event counter. Always the count first, then the
event counter (the flush comes before the append, and the append's statement bumps the count
before it takes the counter): two writers never wait on each other in opposite orders.

Filtered lists keep counting (their totals depend on the filter). Rows that are neither inserted
nor deleted (archived workspaces, failed runs) stay in their lists, so nothing else moves a count.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Select, event, func, literal, select
from sqlalchemy.orm import Session

from evidence_gateway.core.scoping import owned, table_of
from evidence_gateway.models import ListCount
from evidence_gateway.store.dialect_insert import insert_for

# The tables whose organisation-wide list reads its total here (migration 0020 backfilled them).
COUNTED = frozenset({"workspace", "report_pack", "calculation_run", "evidence_item", "webhook_endpoint"})

_COUNT = table_of(ListCount)

SQLITE_BUMP = (
    "INSERT INTO list_count (org_id, list_name, row_count) VALUES (?, ?, 1) "
    "ON CONFLICT (org_id, list_name) DO UPDATE SET row_count = list_count.row_count + 1"
)
# $1 is the organisation in the append's statement (event_log); the list's name is a literal.
_POSTGRES_BUMP = (
    "INSERT INTO list_count (org_id, list_name, row_count) VALUES ($1, '{name}', 1) "
    "ON CONFLICT (org_id, list_name) DO UPDATE SET row_count = list_count.row_count + 1"
)


def is_counted(table_name: str) -> bool:
    return table_name in COUNTED


def postgres_bump(table_name: str) -> str:
    """The bump of ``table_name``'s count for the organisation ``$1`` (a counted table's name only)."""
    if table_name not in COUNTED:
        raise ValueError(f"{table_name} is not counted")
    return _POSTGRES_BUMP.format(name=table_name)


def total_of(table_name: str) -> Select[Any]:
    """The caller's count of ``table_name`` (0 before its first row), for statements built once
    and run with the organisation bound (store/scoped.py ``rows``)."""
    stored = (
        select(_COUNT.c.row_count).where(owned(_COUNT), _COUNT.c.list_name == literal(table_name)).scalar_subquery()
    )
    return select(func.coalesce(stored, 0))


def _upsert(session: Session, org_id: uuid.UUID, name: str, delta: int) -> None:
    insert = insert_for(session.get_bind().dialect.name == "sqlite")
    stmt = insert(_COUNT).values(org_id=org_id, list_name=name, row_count=delta)
    stmt = stmt.on_conflict_do_update(
        index_elements=[_COUNT.c.org_id, _COUNT.c.list_name],
        set_={"row_count": _COUNT.c.row_count + delta},
    )
    session.connection().execute(stmt)


def _deltas(session: Session) -> Mapping[tuple[uuid.UUID, str], int]:
    out: dict[tuple[uuid.UUID, str], int] = {}
    for objects, step in ((session.new, 1), (session.deleted, -1)):
        for obj in objects:
            table = getattr(type(obj), "__table__", None)
            if table is not None and table.name in COUNTED:
                key = (obj.org_id, table.name)
                out[key] = out.get(key, 0) + step
    return out


@event.listens_for(Session, "after_flush")
def _after_flush(session: Session, _context: Any) -> None:
    """The ORM's inserts and deletes of counted rows, counted on the flush's connection (the
    session still lists them as new and deleted here)."""
    if not session.new and not session.deleted:
        return
    for (org_id, name), delta in sorted(_deltas(session).items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
        if delta:
            _upsert(session, org_id, name, delta)
