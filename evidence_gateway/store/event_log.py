"""The event append, in the one place it is written: per database only where they must differ.

Sequences are per organisation, strictly increasing and gapless to readers (DESIGN.md §13). On
SQLite every write transaction holds the database's single write lock, so ``MAX(sequence) + 1``
inside it is both ordered and gapless. On PostgreSQL the numbers come from the organisation's
``event_counter`` row, bumped by an upsert in the committing transaction: its row lock orders
committing writers of one organisation, so sequence order is commit order, and a rollback gives
the numbers back. Either way the append is one statement on the session's own connection,
through the driver: it runs on every write, and each statement through the async adapter costs
several thread hops (PERFORMANCE-NOTES).

A change that adds one row (a create) writes that row in the same statement (``NewRow``), and
bumps its list's count there when its table is counted (list_counts.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Dialect, Table
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.events import PendingEvent
from evidence_gateway.core.merkle import leaf_hash
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.tlog import leaf_bytes
from evidence_gateway.store import list_counts
from evidence_gateway.store.db import Database, driver_connection
from evidence_gateway.store.internals import on_aiosqlite_thread


@dataclass(frozen=True, slots=True)
class NewRow:
    """The one row a change adds, written in the statement that appends its events.

    ``values`` are in the table's column order, already through the column types' bind
    processors, so the row is stored exactly as an ORM flush would store it.
    """

    table: Table
    values: tuple[Any, ...]


_SQLITE_APPEND = (
    "INSERT INTO event (id, org_id, sequence, type, occurred_at, actor, request_id, subject_type, subject_id, "
    "workspace_id, data, leaf_hash) VALUES (?, ?, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM event WHERE org_id = ?), "
    "?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_POSTGRES_COUNTER = """
counter AS (
    INSERT INTO event_counter (org_id, last_sequence) {source}
    ON CONFLICT (org_id) DO UPDATE SET last_sequence = event_counter.last_sequence + EXCLUDED.last_sequence
    -- Wakes every node's LISTEN connection when (and only if) this transaction commits.
    RETURNING last_sequence, pg_notify('evidence_events', CAST(event_counter.org_id AS text))
)
INSERT INTO event (id, org_id, sequence, type, occurred_at, actor, request_id, subject_type, subject_id,
                   workspace_id, data, leaf_hash)
SELECT e.id, $1, counter.last_sequence - $2::bigint + e.ord, e.type, $3, $4, $5, e.subject_type, e.subject_id,
       e.workspace_id, e.data::json, e.leaf_hash
FROM counter, unnest($6::uuid[], $7::bigint[], $8::text[], $9::text[], $10::uuid[], $11::uuid[], $12::text[],
                     $13::bytea[])
    AS e(id, ord, type, subject_type, subject_id, workspace_id, data, leaf_hash)
"""
# The parameters above are $1..$13 ($13: the events' leaf hashes); a new row's values follow.
_POSTGRES_ROW_FIRST = 14


def appends_alone(db: Database) -> bool:
    """Whether a change that is one new row and its events can be one statement in autocommit
    (PostgreSQL); on SQLite the write lock is taken by the transaction's BEGIN IMMEDIATE."""
    return not db.is_sqlite


async def append(
    session: AsyncSession,
    db: Database,
    org_id: uuid.UUID,
    events: Sequence[PendingEvent],
    *,
    actor: uuid.UUID | None,
    request_id: str | None,
    new_row: NewRow | None = None,
) -> asyncio.Future[None] | None:
    """Number and insert the events in the caller's transaction, in emit order, with the change's
    ``new_row`` if it has one.

    The very last statement before the commit. On SQLite it is queued, not awaited: the caller
    commits right away and awaits the returned future afterwards (see ``_queue_sqlite``).
    """
    if not events and new_row is None:
        return None
    driver = await driver_connection(session)
    if db.is_sqlite:
        return _queue_sqlite(driver, org_id, new_row, _sqlite_rows(org_id, events, actor, request_id))
    if not events:
        assert new_row is not None
        await driver.execute(_insert_sql(new_row.table, 1), *new_row.values)
        if list_counts.is_counted(new_row.table.name):
            await driver.execute(list_counts.postgres_bump(new_row.table.name), org_id)
        return None
    await driver.execute(*_postgres_statement(org_id, events, actor, request_id, new_row))
    return None


async def append_alone(
    db: Database,
    org_id: uuid.UUID,
    events: Sequence[PendingEvent],
    new_row: NewRow,
    *,
    actor: uuid.UUID | None,
    request_id: str | None,
) -> None:
    """PostgreSQL, a change that is one new row and its events and read nothing first: the
    whole change as one statement in autocommit, so its own transaction.

    One round trip where a transaction takes four (BEGIN, INSERT, the append, COMMIT), and the
    organisation's event counter is locked only while the server runs the statement: every
    writer of the organisation queues on that lock, so it must not be held across round trips
    to a busy event loop (create throughput is bounded by how long it is held).
    """
    await db.execute_alone(*_postgres_statement(org_id, events, actor, request_id, new_row))


def new_row(db: Database, table: Table, values: Sequence[Any]) -> NewRow:
    """A row of ``table`` (``values`` in column order, as Python values) in its stored form."""
    processors = _processors_of(table, db.engine.dialect)
    return NewRow(table, tuple(v if p is None else p(v) for p, v in zip(processors, values, strict=True)))


def single_new_row(session: AsyncSession) -> NewRow | None:
    """A change that only adds one row (a created workspace, evidence item, delivery): the row,
    to write in the statement that appends the events, instead of an ORM flush.

    Creates are the hottest writes. On SQLite a flush through the async adapter costs three hops
    to the driver's thread (cursor, execute, close), the queued INSERT none of its own; on
    PostgreSQL it costs a round trip. Values go through the column types' own bind processors,
    so the row is stored exactly as the ORM would store it. Anything else flushes as usual.
    """
    sync = session.sync_session
    if len(sync.new) != 1 or sync.dirty or sync.deleted:
        return None
    (obj,) = sync.new
    table = getattr(type(obj), "__table__", None)
    if table is None:
        return None
    processors = _processors_of(table, sync.get_bind().dialect)
    values = []
    for column, process in zip(table.columns, processors, strict=True):
        value = getattr(obj, column.key)
        values.append(process(value) if process is not None else value)
    sync.expunge(obj)
    return NewRow(table, tuple(values))


_PROCESSORS: dict[tuple[Table, str], list[Callable[[Any], Any] | None]] = {}


def _processors_of(table: Table, dialect: Dialect) -> list[Callable[[Any], Any] | None]:
    """Each column's bind processor on ``dialect``, in table order: what turns a Python value into
    the stored one, so a row the driver inserts is stored exactly as the ORM and Core store it.

    The dialect's own implementation of each type: the generic type's ``bind_processor`` lacks
    it (a SQLite timestamp went to the driver as a datetime, and sqlite3 stored it with a
    ``+00:00`` SQLAlchemy never writes).
    """
    cached = _PROCESSORS.get((table, dialect.name))
    if cached is None:
        cached = [column.type.dialect_impl(dialect).bind_processor(dialect) for column in table.columns]
        _PROCESSORS[(table, dialect.name)] = cached
    return cached


def _postgres_statement(
    org_id: uuid.UUID,
    events: Sequence[PendingEvent],
    actor: uuid.UUID | None,
    request_id: str | None,
    new_row: NewRow | None,
) -> tuple[Any, ...]:
    at = utcnow()
    ids = [uuid.uuid4() for _ in events]
    return (
        _postgres_append(new_row.table if new_row is not None else None),
        org_id,
        len(events),
        at,
        actor,
        request_id,
        ids,
        list(range(1, len(events) + 1)),
        [e.type.value for e in events],
        [e.subject_type for e in events],
        [e.subject_id for e in events],
        [e.workspace_id for e in events],
        [e.data for e in events],
        _leaf_hashes(events, ids, at, actor, request_id),
        *(new_row.values if new_row is not None else ()),
    )


def _leaf_hashes(
    events: Sequence[PendingEvent],
    ids: list[uuid.UUID],
    at: datetime,
    actor: uuid.UUID | None,
    request_id: str | None,
) -> list[bytes]:
    """Each event's leaf hash in its organisation's transparency log (core/tlog.py)."""
    return [
        leaf_hash(leaf_bytes(id=i, type=e.type.value, occurred_at=at, actor=actor, request_id=request_id,
                             subject_type=e.subject_type, subject_id=e.subject_id, workspace_id=e.workspace_id,
                             data=e.data))
        for i, e in zip(ids, events, strict=True)
    ]  # fmt: skip


def _sqlite_rows(
    org_id: uuid.UUID, events: Sequence[PendingEvent], actor: uuid.UUID | None, request_id: str | None
) -> list[tuple[Any, ...]]:
    """The event rows, each with its leaf hash."""
    now = utcnow()
    ids = [uuid.uuid4() for _ in events]
    # Stored as SQLAlchemy stores them on SQLite: hex uuids, naive UTC times, JSON text.
    at = now.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")
    hashes = _leaf_hashes(events, ids, now, actor, request_id)
    return [
        (i.hex, org_id.hex, org_id.hex, e.type.value, at, actor.hex if actor else None, request_id,
         e.subject_type, e.subject_id.hex, e.workspace_id.hex if e.workspace_id else None, e.data, h)
        for i, e, h in zip(ids, events, hashes, strict=True)
    ]  # fmt: skip


_POSTGRES_APPENDS: dict[Table | None, str] = {}


def _postgres_append(table: Table | None) -> str:
    """The append, with a new row as one more data-modifying CTE: PostgreSQL runs every part of
    the statement exactly once, atomically, and checks foreign keys at its end."""
    sql = _POSTGRES_APPENDS.get(table)
    if sql is None:
        row = "" if table is None else f" new_row AS ({_insert_sql(table, _POSTGRES_ROW_FIRST)}),"
        source = "VALUES ($1, $2::bigint)"
        if table is not None and list_counts.is_counted(table.name):
            # The row's list count, bumped before the event counter is taken: the counter's row
            # is read from it (list_counts.py: always the count first, then the counter).
            row += f" counted AS ({list_counts.postgres_bump(table.name)} RETURNING 1),"
            source = "SELECT $1, $2::bigint FROM counted"
        sql = _POSTGRES_APPENDS[table] = f"WITH{row}{_POSTGRES_COUNTER.format(source=source)}"
    return sql


_INSERTS: dict[tuple[Table, int], str] = {}


def _insert_sql(table: Table, first: int) -> str:
    """``INSERT`` of every column in table order: ``?`` markers (SQLite), or ``$first``… (PostgreSQL)."""
    sql = _INSERTS.get((table, first))
    if sql is None:
        names = ", ".join(f'"{column.name}"' for column in table.columns)
        count = len(table.columns)
        marks = ", ".join("?" * count) if first == 0 else ", ".join(f"${first + i}" for i in range(count))
        sql = f'INSERT INTO "{table.name}" ({names}) VALUES ({marks})'
        _INSERTS[(table, first)] = sql
    return sql


def _queue_sqlite(
    driver: Any, org_id: uuid.UUID, new_row: NewRow | None, rows: list[tuple[Any, ...]]
) -> asyncio.Future[None]:
    """Put the inserts on aiosqlite's worker queue, ahead of the commit the caller issues next.

    Both then run back to back in the driver's thread, sparing the write lock a round trip to
    the event loop on every write. If an insert fails it rolls the transaction back right
    there, so the commit that follows finds nothing to commit and the future carries the error:
    the change and its events still commit together or not at all.
    """

    def insert(sqlite: sqlite3.Connection) -> None:
        try:
            if new_row is not None:
                sqlite.execute(_insert_sql(new_row.table, 0), new_row.values)
                if list_counts.is_counted(new_row.table.name):
                    sqlite.execute(list_counts.SQLITE_BUMP, (org_id.hex, new_row.table.name))
            if rows:
                sqlite.executemany(_SQLITE_APPEND, rows)
        except BaseException:
            sqlite.rollback()
            raise

    return on_aiosqlite_thread(driver, insert)
