"""SQL of packs' signed statements (models/tlog.py SignedStatement): the pack's log events that
a statement covers, the statements kept, and the events still awaiting one."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.models import (
    ApprovalAction,
    CalculationRun,
    Event,
    FactorVersion,
    PackArtifact,
    ReportPack,
    SignedStatement,
    Workspace,
)
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database
from evidence_gateway.store.dialect_insert import insert_for
from evidence_gateway.store.tlog import event_columns

# The events a statement is signed for: a pack's generation (its seal) and each status change.
SEALED_TYPES = ("pack.generated", "pack.status_changed")
# The log's events by table column: every checkpoint the signer issues asks pack_events_between,
# and an ORM-annotated column would configure every mapper (store/tlog.py).
_EVENT = table_of(Event)


async def pack_events(db: Database, org_id: uuid.UUID, workspace_id: uuid.UUID, pack_id: uuid.UUID) -> Sequence[Any]:
    """The pack's generation and status changes, in log order (through the workspace's index)."""
    return await db.fetch(
        event_columns()
        .where(
            _EVENT.c.org_id == bindparam("org"),
            _EVENT.c.workspace_id == bindparam("ws"),
            _EVENT.c.subject_id == bindparam("pack"),
            _EVENT.c.type.in_(SEALED_TYPES),
        )
        .order_by(_EVENT.c.sequence),
        {"org": org_id, "ws": workspace_id, "pack": pack_id},
    )


async def statements_of(db: Database, org_id: uuid.UUID, pack_id: uuid.UUID) -> list[SignedStatement]:
    async with db.read() as session:
        found = await session.execute(
            select(SignedStatement)
            .where(col(SignedStatement.org_id) == org_id, col(SignedStatement.pack_id) == pack_id)
            .order_by(col(SignedStatement.event_sequence))
        )
        return list(found.scalars())


async def keep(db: Database, row: SignedStatement) -> None:
    """Once per event: a second signer of the same event (another node) keeps the first."""
    insert = insert_for(db.is_sqlite)
    values = {
        c: getattr(row, c)
        for c in ("id", "org_id", "pack_id", "kind", "event_sequence", "key_id", "envelope", "created_at")
    }
    async with db.write() as session:
        await session.execute(insert(SignedStatement).values(**values).on_conflict_do_nothing())


async def keep_timestamp(db: Database, statement_id: uuid.UUID, reply: bytes) -> None:
    """A seal's time-stamp, once: a token another node kept first stays."""
    async with db.write() as session:
        await session.execute(
            update(SignedStatement)
            .where(col(SignedStatement.id) == statement_id, col(SignedStatement.timestamp).is_(None))
            .values(timestamp=reply)
        )


async def pack_events_between(db: Database, org_id: uuid.UUID, after: int, through: int) -> list[tuple[Any, Any]]:
    """(pack id, workspace id) of pack events with sequences in (after, through]: a range of the
    (org_id, sequence) index, each event read once as checkpoints advance."""
    rows = await db.fetch(
        select(_EVENT.c.subject_id, _EVENT.c.workspace_id)
        .where(
            _EVENT.c.org_id == bindparam("org"),
            _EVENT.c.sequence > bindparam("a"),
            _EVENT.c.sequence <= bindparam("b"),
            _EVENT.c.type.in_(SEALED_TYPES),
        )
        .distinct(),
        {"org": org_id, "a": after, "b": through},
    )
    return [(r[0], r[1]) for r in rows]


async def pack_rows(
    db: Database, org_id: uuid.UUID
) -> tuple[list[ReportPack], list[ApprovalAction], list[PackArtifact]]:
    """One organisation's packs, approval actions and artifacts, for ``log verify`` (which runs as
    the installation, over every organisation, not as a caller)."""
    async with db.read() as session:
        packs = (await session.execute(select(ReportPack).where(col(ReportPack.org_id) == org_id))).scalars()
        actions = (await session.execute(select(ApprovalAction).where(col(ApprovalAction.org_id) == org_id))).scalars()
        files = (await session.execute(select(PackArtifact).where(col(PackArtifact.org_id) == org_id))).scalars()
        return list(packs), list(actions), list(files)


class SealInputs(NamedTuple):
    """What a pack's seal names besides its files: the pack and what it was built from."""

    pack: ReportPack
    run: CalculationRun | None
    factors: FactorVersion | None
    workspace: Workspace | None


async def seal_inputs(session: AsyncSession, org_id: uuid.UUID, pack_id: uuid.UUID) -> SealInputs | None:
    """The organisation's generated (hashed) pack and its run, factor version and workspace, or
    None. The factor version is shared reference data, read by id (the run names it)."""
    pack = await session.get(ReportPack, pack_id)
    if pack is None or pack.org_id != org_id or pack.pack_hash is None:
        return None
    run = await session.get(CalculationRun, pack.calculation_run_id) if pack.calculation_run_id else None
    if run is not None and run.org_id != org_id:
        run = None
    factors = await session.get(FactorVersion, run.factor_version_id) if run and run.factor_version_id else None
    workspace = await session.get(Workspace, pack.workspace_id)
    if workspace is not None and workspace.org_id != org_id:
        workspace = None
    return SealInputs(pack, run, factors, workspace)
