"""Every SQL statement of the transparency log (models/tlog.py) but the append's own: leaves
(the events' ``leaf_hash``) and checkpoints read back, keys, and the backfill of migration 0011.

Core statements on the tables, read into records: the background checkpoint signer runs these on
every server, and one ORM statement or entity would configure every mapper (about 1.5 MB kept)
in a process that otherwise never needs them."""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Text, Uuid, bindparam, cast, func, select, text, update

from evidence_gateway.core.merkle import leaf_hash
from evidence_gateway.core.timeutil import as_aware, utcnow
from evidence_gateway.core.tlog import leaf_bytes
from evidence_gateway.models import Event, EvidenceKey, Organization, TlogCheckpoint, TlogSubtree
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database
from evidence_gateway.store.dialect_insert import insert_for
from evidence_gateway.store.record_types import EvidenceKeyRecord, TlogCheckpointRecord
from evidence_gateway.store.records import records

_EVENT = table_of(Event)
_CHECKPOINT = table_of(TlogCheckpoint)
_SUBTREE = table_of(TlogSubtree)
_KEY = table_of(EvidenceKey)

_EVENTS_FOR_LEAVES = {
    "sqlite": "SELECT id, org_id, sequence, type, occurred_at, actor, request_id, subject_type, subject_id, "
    "workspace_id, data FROM event ORDER BY org_id, sequence",
    "postgresql": "SELECT id, org_id, sequence, type, occurred_at, actor, request_id, subject_type, subject_id, "
    "workspace_id, data::text FROM event ORDER BY org_id, sequence",
}


def backfill_leaves(connection: Connection) -> None:
    """Migration 0011: the leaf hash of every event already stored (events are never rewritten)."""
    dialect = connection.dialect.name
    update_leaf = text("UPDATE event SET leaf_hash = :hash WHERE id = :id").bindparams(bindparam("id", type_=Uuid()))
    batch: list[dict[str, Any]] = []
    for row in connection.execute(text(_EVENTS_FOR_LEAVES[dialect])):
        batch.append({"id": _uuid(row.id), "hash": leaf_hash(_leaf_of_row(row))})
        if len(batch) >= 1000:
            connection.execute(update_leaf, batch)
            batch.clear()
    if batch:
        connection.execute(update_leaf, batch)


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


# ---- reads and writes of the running server --------------------------------------------------


async def leaves(db: Database, org_id: uuid.UUID, size: int, start: int = 0) -> list[bytes]:
    """The organisation's leaf hashes ``start``..``size - 1`` (events ``start + 1``..``size``), in order."""
    rows = await db.fetch(
        select(_EVENT.c.leaf_hash)
        .where(
            _EVENT.c.org_id == bindparam("org"),
            _EVENT.c.sequence > bindparam("start"),
            _EVENT.c.sequence <= bindparam("size"),
        )
        .order_by(_EVENT.c.sequence),
        {"org": org_id, "size": size, "start": start},
    )
    return [bytes(r[0]) if r[0] is not None else b"" for r in rows]


async def tree_size(db: Database, org_id: uuid.UUID) -> int:
    """Events committed: gapless, so the highest sequence (one seek of (org_id, sequence))."""
    rows = await db.fetch(
        select(func.max(_EVENT.c.sequence)).where(_EVENT.c.org_id == bindparam("org")), {"org": org_id}
    )
    top = rows[0][0] if rows else None
    return 0 if top is None else int(top)


async def grown_logs(db: Database) -> list[tuple[uuid.UUID, int]]:
    """Each organisation whose tree is larger than its latest checkpoint, with the tree's size:
    one index seek per organisation for each maximum, never a scan of the events."""
    org = table_of(Organization)
    top = select(func.max(_EVENT.c.sequence)).where(_EVENT.c.org_id == org.c.id).scalar_subquery()
    signed = select(func.max(_CHECKPOINT.c.size)).where(_CHECKPOINT.c.org_id == org.c.id).scalar_subquery()
    rows = await db.fetch(select(org.c.id, top, signed), {})
    return [(r[0], int(r[1])) for r in rows if r[1] is not None and int(r[1]) > int(r[2] or 0)]


async def checkpoint(db: Database, org_id: uuid.UUID, size: int | None = None) -> TlogCheckpointRecord | None:
    """The checkpoint of ``size``, or the latest one."""
    stmt = select(*_CHECKPOINT.c).where(_CHECKPOINT.c.org_id == bindparam("org"))
    params: dict[str, Any] = {"org": org_id}
    if size is not None:
        stmt = stmt.where(_CHECKPOINT.c.size == bindparam("size"))
        params["size"] = size
    found = records(_CHECKPOINT, await db.fetch(stmt.order_by(_CHECKPOINT.c.size.desc()).limit(1), params))
    return found[0] if found else None


async def store_checkpoint(db: Database, row: TlogCheckpointRecord) -> TlogCheckpointRecord:
    """Kept once per size: two nodes signing the same size keep the first (both are valid)."""
    insert = insert_for(db.is_sqlite)
    async with db.write() as session:
        await session.execute(insert(_CHECKPOINT).values(**row._asdict()).on_conflict_do_nothing())
    stored = await checkpoint(db, row.org_id, row.size)
    assert stored is not None
    return stored


async def subtrees(
    db: Database, org_id: uuid.UUID, wanted: Collection[tuple[int, int]]
) -> dict[tuple[int, int], bytes]:
    """The cached hashes of ``wanted`` subtrees (level, first leaf) there are."""
    if not wanted:
        return {}
    firsts = sorted({first for _level, first in wanted})
    stmt = select(_SUBTREE.c.level, _SUBTREE.c.first_leaf, _SUBTREE.c.hash).where(
        _SUBTREE.c.org_id == org_id, _SUBTREE.c.first_leaf.in_(firsts)
    )
    async with db.read() as session:
        rows = (await session.execute(stmt)).all()
    return {(r[0], r[1]): bytes(r[2]) for r in rows if (r[0], r[1]) in wanted}


async def all_subtrees(db: Database, org_id: uuid.UUID) -> list[tuple[int, int, bytes]]:
    """Every cached subtree of the organisation's log, as (level, first leaf, hash)."""
    stmt = select(_SUBTREE.c.level, _SUBTREE.c.first_leaf, _SUBTREE.c.hash).where(_SUBTREE.c.org_id == org_id)
    async with db.read() as session:
        return [(r[0], r[1], bytes(r[2])) for r in (await session.execute(stmt)).all()]


async def keep_subtrees(db: Database, org_id: uuid.UUID, rows: Sequence[tuple[int, int, bytes]]) -> None:
    """Cache complete subtrees; one already kept stays (its hash cannot differ: leaves never change)."""
    insert = insert_for(db.is_sqlite)
    for at in range(0, len(rows), 500):
        values = [{"org_id": org_id, "level": lv, "first_leaf": f, "hash": h} for lv, f, h in rows[at : at + 500]]
        async with db.write() as session:
            await session.execute(insert(_SUBTREE).values(values).on_conflict_do_nothing())


async def event_position(db: Database, org_id: uuid.UUID, event_id: uuid.UUID) -> Any | None:
    """The event's row with its data as stored (JSON text), for its leaf; None if not the organisation's."""
    rows = await db.fetch(
        event_columns().where(_EVENT.c.org_id == bindparam("org"), _EVENT.c.id == bindparam("id")),
        {"org": org_id, "id": event_id},
    )
    return rows[0] if rows else None


async def events_of(db: Database, org_id: uuid.UUID, first: int, last: int) -> Sequence[Any]:
    """Events ``first``..``last`` (sequences) with their data as stored, in order."""
    return await db.fetch(
        event_columns()
        .where(_EVENT.c.org_id == bindparam("org"), _EVENT.c.sequence.between(bindparam("a"), bindparam("b")))
        .order_by(_EVENT.c.sequence),
        {"org": org_id, "a": first, "b": last},
    )


def event_columns() -> Any:
    """An event's columns with its data as stored (JSON text), for its leaf."""
    return select(
        _EVENT.c.id, _EVENT.c.sequence, _EVENT.c.type, _EVENT.c.occurred_at, _EVENT.c.actor,
        _EVENT.c.request_id, _EVENT.c.subject_type, _EVENT.c.subject_id, _EVENT.c.workspace_id,
        cast(_EVENT.c.data, Text).label("data"),
    )  # fmt: skip


def leaf_of(row: Any) -> bytes:
    """The canonical leaf of an event row read by ``event_position`` / ``events_of``."""
    return _leaf_of_row(row)


async def all_checkpoints(db: Database, org_id: uuid.UUID) -> list[TlogCheckpointRecord]:
    stmt = select(*_CHECKPOINT.c).where(_CHECKPOINT.c.org_id == bindparam("org")).order_by(_CHECKPOINT.c.size)
    return records(_CHECKPOINT, await db.fetch(stmt, {"org": org_id}))


async def organisations(db: Database) -> list[uuid.UUID]:
    rows = await db.fetch(select(table_of(Organization).c.id), {})
    return [r[0] for r in rows]


# ---- the instance's keys -----------------------------------------------------------------------


async def keys(db: Database) -> list[EvidenceKeyRecord]:
    return records(_KEY, await db.fetch(select(*_KEY.c).order_by(_KEY.c.created_at), {}))


async def record_key(db: Database, key_id: str, name: str, public: bytes, seed: str | None) -> None:
    insert = insert_for(db.is_sqlite)
    async with db.write() as session:
        await session.execute(
            insert(_KEY)
            .values(key_id=key_id, name=name, public_key=public, private_seed=seed, created_at=utcnow())
            .on_conflict_do_nothing()
        )


async def retire_keys(db: Database, except_key_id: str) -> None:
    """Generated keys other than the new one stop signing; their public halves stay."""
    async with db.write() as session:
        await session.execute(
            update(_KEY)
            .where(_KEY.c.key_id != except_key_id, _KEY.c.retired_at.is_(None))
            .values(retired_at=utcnow(), private_seed=None)
        )
