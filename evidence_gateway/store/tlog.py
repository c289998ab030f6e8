"""Every SQL statement of the transparency log (models/tlog.py): leaves written with their
events, the leaves and checkpoints read back, and the backfill of migration 0011."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, text

from evidence_gateway.core.merkle import leaf_hash
from evidence_gateway.core.timeutil import as_aware
from evidence_gateway.core.tlog import leaf_bytes

# SQLite, in the event append's own call on the driver's thread: each event's leaf at
# ``sequence - 1``, found by the event's id (its primary key) just inserted.
SQLITE_LEAF = "INSERT INTO tlog_leaf (org_id, idx, hash) SELECT org_id, sequence - 1, ? FROM event WHERE id = ?"


def postgres_leaves(hashes_param: int) -> str:
    """PostgreSQL: the tail of the append statement. The event insert above it is the CTE
    ``appended`` (RETURNING id, sequence); ``$1`` is the organisation, ``$6`` the events' ids."""
    return (
        f"INSERT INTO tlog_leaf (org_id, idx, hash) SELECT $1, appended.sequence - 1, leaf.hash "
        f"FROM appended JOIN unnest($6::uuid[], ${hashes_param}::bytea[]) AS leaf(id, hash) ON leaf.id = appended.id"
    )


_EVENTS_FOR_LEAVES = {
    "sqlite": "SELECT id, org_id, sequence, type, occurred_at, actor, request_id, subject_type, subject_id, "
    "workspace_id, data FROM event ORDER BY org_id, sequence",
    "postgresql": "SELECT id, org_id, sequence, type, occurred_at, actor, request_id, subject_type, subject_id, "
    "workspace_id, data::text FROM event ORDER BY org_id, sequence",
}


def backfill_leaves(connection: Connection) -> None:
    """Migration 0011: a leaf for every event already stored (events are never rewritten)."""
    dialect = connection.dialect.name
    insert = text("INSERT INTO tlog_leaf (org_id, idx, hash) VALUES (:org_id, :idx, :hash)")
    batch: list[dict[str, Any]] = []
    for row in connection.execute(text(_EVENTS_FOR_LEAVES[dialect])):
        batch.append({"org_id": row.org_id, "idx": row.sequence - 1, "hash": leaf_hash(_leaf_of_row(row))})
        if len(batch) >= 1000:
            connection.execute(insert, batch)
            batch.clear()
    if batch:
        connection.execute(insert, batch)


def _uuid(value: Any) -> uuid.UUID | None:
    if value is None:
        return None
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _time(value: Any) -> datetime:
    """SQLite hands raw SQL its stored text; PostgreSQL a datetime."""
    return as_aware(value if isinstance(value, datetime) else datetime.fromisoformat(str(value)))


def _leaf_of_row(row: Any) -> bytes:
    return leaf_bytes(
        id=_uuid(row.id),  # type: ignore[arg-type]
        type=row.type,
        occurred_at=_time(row.occurred_at),
        actor=_uuid(row.actor),
        request_id=row.request_id,
        subject_type=row.subject_type,
        subject_id=_uuid(row.subject_id),  # type: ignore[arg-type]
        workspace_id=_uuid(row.workspace_id),
        data=row.data,
    )
