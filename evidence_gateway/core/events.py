"""The event catalogue and how a unit of work appends to the log (DESIGN.md §13).

Sequences are per organisation, strictly increasing and gapless to readers. On SQLite every
write transaction holds the database's single write lock, so ``MAX(sequence) + 1`` inside it is
both ordered and gapless. On PostgreSQL the numbers come from the organisation's
``event_counter`` row, bumped by an upsert in the committing transaction: its row lock orders
committing writers of one organisation, so sequence order is commit order, and a rollback gives
the numbers back. Either way the append is one statement on the session's own connection,
through the driver: it runs on every write, and each statement through the async adapter costs
several thread hops (PERFORMANCE-NOTES).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.core.merkle import leaf_hash
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.tlog import leaf_bytes
from evidence_gateway.errors import InvalidInput
from evidence_gateway.store.db import Database, driver_connection


class EventType(enum.StrEnum):
    """``resource.past_tense_verb``; docs/events.md has a JSON Schema for each."""

    workspace_created = "workspace.created"
    workspace_status_changed = "workspace.status_changed"
    import_registered = "import.registered"
    calculation_completed = "calculation.completed"
    calculation_failed = "calculation.failed"
    pack_generated = "pack.generated"
    pack_failed = "pack.failed"
    pack_status_changed = "pack.status_changed"
    evidence_item_created = "evidence_item.created"
    legacy_report_imported = "legacy_report.imported"
    webhook_endpoint_created = "webhook_endpoint.created"
    webhook_endpoint_updated = "webhook_endpoint.updated"
    webhook_endpoint_secret_rotated = "webhook_endpoint.secret_rotated"
    webhook_endpoint_disabled = "webhook_endpoint.disabled"
    webhook_endpoint_deleted = "webhook_endpoint.deleted"
    api_key_created = "api_key.created"
    api_key_revoked = "api_key.revoked"


@dataclass(frozen=True, slots=True)
class PendingEvent:
    type: EventType
    subject_type: str
    subject_id: uuid.UUID
    workspace_id: uuid.UUID | None
    # The resource as REST renders it, already encoded: captured at emit time.
    data: str


def pending(
    type_: EventType,
    subject_type: str,
    subject_id: uuid.UUID,
    data: Mapping[str, Any],
    *,
    workspace_id: uuid.UUID | None = None,
) -> PendingEvent:
    """Encoded now: the row shows the resource as it was at this change, not at commit."""
    return PendingEvent(type_, subject_type, subject_id, workspace_id, dumps(dict(data)).decode())


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
    INSERT INTO event_counter (org_id, last_sequence) VALUES ($1, $2::bigint)
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


async def append(
    session: AsyncSession,
    org_id: uuid.UUID,
    events: list[PendingEvent],
    *,
    actor: uuid.UUID | None,
    request_id: str | None,
    is_sqlite: bool,
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
    if is_sqlite:
        return _queue_sqlite(driver, new_row, _sqlite_rows(org_id, events, actor, request_id))
    if not events:
        assert new_row is not None
        await driver.execute(_insert_sql(new_row.table, 1), *new_row.values)
        return None
    await driver.execute(*_postgres_statement(org_id, events, actor, request_id, new_row))
    return None


async def append_alone(
    db: Database,
    org_id: uuid.UUID,
    events: list[PendingEvent],
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


def _postgres_statement(
    org_id: uuid.UUID,
    events: list[PendingEvent],
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
    events: list[PendingEvent], ids: list[uuid.UUID], at: datetime, actor: uuid.UUID | None, request_id: str | None
) -> list[bytes]:
    """Each event's leaf hash in its organisation's transparency log (core/tlog.py)."""
    return [
        leaf_hash(leaf_bytes(id=i, type=e.type.value, occurred_at=at, actor=actor, request_id=request_id,
                             subject_type=e.subject_type, subject_id=e.subject_id, workspace_id=e.workspace_id,
                             data=e.data))
        for i, e in zip(ids, events, strict=True)
    ]  # fmt: skip


def _sqlite_rows(
    org_id: uuid.UUID, events: list[PendingEvent], actor: uuid.UUID | None, request_id: str | None
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
        sql = _POSTGRES_APPENDS[table] = f"WITH{row}{_POSTGRES_COUNTER}"
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


def _queue_sqlite(driver: Any, new_row: NewRow | None, rows: list[tuple[Any, ...]]) -> asyncio.Future[None]:
    """Put the inserts on aiosqlite's worker queue (as SQLAlchemy's own adapter does for what
    aiosqlite has no call for), ahead of the commit the caller issues next.

    Both then run back to back in the driver's thread, sparing the write lock a round trip to
    the event loop on every write. If an insert fails it rolls the transaction back right
    there, so the commit that follows finds nothing to commit and the future carries the error:
    the change and its events still commit together or not at all.
    """
    sqlite = driver._conn
    future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def insert() -> None:
        try:
            if new_row is not None:
                sqlite.execute(_insert_sql(new_row.table, 0), new_row.values)
            if rows:
                sqlite.executemany(_SQLITE_APPEND, rows)
        except BaseException:
            sqlite.rollback()
            raise

    driver._tx.put_nowait((future, insert))
    return future


# ---- cursors: a position in an organisation's log, as clients see it -----------------------------

_CURSOR_PREFIX = "evs1:"


def cursor_of(sequence: int) -> str:
    """Opaque to clients: a position in the organisation's log."""
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{sequence}".encode()).decode().rstrip("=")


def sequence_of(cursor: str | None, field: str = "after") -> int:
    if not cursor:
        return 0
    refused = InvalidInput(fields={field: "not a cursor returned by this API"})
    try:
        text = base64.urlsafe_b64decode((cursor + "=" * (-len(cursor) % 4)).encode("ascii")).decode("ascii")
    except (ValueError, binascii.Error, UnicodeError):
        raise refused from None
    number = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not number.isdigit() or len(number) > 18:
        raise refused
    return int(number)
