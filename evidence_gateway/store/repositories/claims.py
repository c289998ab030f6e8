"""The worker's claims over queued and interrupted work (worker.py): which runs and packs wait
for a worker, taking them under a lease, and which leases have run out.

Not org-scoped: the worker serves every organisation and has no caller; each item it answers
names its organisation, and the work then runs in that organisation's context.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import ColumnElement, Select, func, select, update

from evidence_gateway.models import CalculationRun, PackStatus, ReportPack, RunStatus
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database, rows_changed

_RUN = table_of(CalculationRun)
_PACK = table_of(ReportPack)


class Claimed(NamedTuple):
    """Queued work this node now holds the lease of, and whose it is."""

    id: uuid.UUID
    org_id: uuid.UUID
    api_key_id: uuid.UUID | None


class Expired(NamedTuple):
    """Work whose lease ran out, and whose organisation it belongs to."""

    id: uuid.UUID
    org_id: uuid.UUID


# Queued: a run started (running) that no worker holds; a pack asked for (its audit position
# recorded) that is neither generated nor held. The queue's gauges count the same
# (store/repositories/backlog.py).
RUN_QUEUED: tuple[ColumnElement[bool], ...] = (_RUN.c.status == RunStatus.running.value, _RUN.c.lease_owner.is_(None))
PACK_QUEUED: tuple[ColumnElement[bool], ...] = (
    _PACK.c.status.in_([PackStatus.draft.value, PackStatus.archived.value]),
    _PACK.c.pack_hash.is_(None),
    _PACK.c.lease_owner.is_(None),
    _PACK.c.lease_expires_at.is_(None),
    _PACK.c.audit_sequence.is_not(None),
)
_QUEUED_RUNS = select(_RUN.c.id, _RUN.c.org_id, _RUN.c.api_key_id).where(*RUN_QUEUED)
_QUEUED_PACKS = select(_PACK.c.id, _PACK.c.org_id, _PACK.c.api_key_id).where(*PACK_QUEUED)


async def claim_queued_runs(db: Database, owner: str, until: datetime, batch: int) -> list[Claimed]:
    return await _claim(db, _RUN, _QUEUED_RUNS, owner, until, batch)


async def claim_queued_packs(db: Database, owner: str, until: datetime, batch: int) -> list[Claimed]:
    return await _claim(db, _PACK, _QUEUED_PACKS, owner, until, batch)


async def expired_runs(db: Database, now: datetime, batch: int) -> list[Expired]:
    """Up to ``batch`` running runs whose lease ran out, taken in turns across organisations."""
    return await _expired(
        db,
        _RUN,
        batch,
        _RUN.c.status == RunStatus.running.value,
        _RUN.c.lease_owner.is_not(None),
        _RUN.c.lease_expires_at < now,
    )


async def expired_packs(db: Database, now: datetime, batch: int) -> list[Expired]:
    """Up to ``batch`` packs whose generation lease ran out, taken in turns across organisations."""
    return await _expired(db, _PACK, batch, _PACK.c.lease_owner.is_not(None), _PACK.c.lease_expires_at < now)


async def _claim(
    db: Database, table: Any, queued: Select[Any], owner: str, until: datetime, batch: int
) -> list[Claimed]:
    stmt = queued.order_by(table.c.created_at).limit(batch)
    # Look before locking: an idle node polls every second, and on SQLite a write
    # transaction would take the database's one write lock from the requests.
    async with db.read() as session:
        if not (await session.execute(stmt)).first():
            return []
    stmt = db.skip_locked(stmt)
    claimed = []
    async with db.write() as session:
        for item_id, org_id, key_id in (await session.execute(stmt)).all():
            taken = await session.execute(
                update(table)
                .where(table.c.id == item_id, table.c.lease_owner.is_(None))
                .values(lease_owner=owner, lease_expires_at=until)
            )
            if rows_changed(taken):
                claimed.append(Claimed(item_id, org_id, key_id))
    return claimed


async def _expired(db: Database, table: Any, batch: int, *where: ColumnElement[bool]) -> list[Expired]:
    """Ranked within their organisation by lease expiry and taken rank by rank (a window
    function, on SQLite and PostgreSQL alike)."""
    rank = (
        func.row_number()
        .over(partition_by=table.c.org_id, order_by=(table.c.lease_expires_at, table.c.id))
        .label("rank")
    )
    ranked = select(table.c.id, table.c.org_id, table.c.lease_expires_at, rank).where(*where).subquery()
    stmt = select(ranked.c.id, ranked.c.org_id).order_by(ranked.c.rank, ranked.c.lease_expires_at, ranked.c.id)
    async with db.read() as session:
        return [Expired(r[0], r[1]) for r in (await session.execute(stmt.limit(batch))).all()]
