"""A pack that cannot be finished: failed with its files, in the unit of work or, for the
sweeper, by a plain update."""

from __future__ import annotations

import logging
import uuid

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import as_aware, utcnow
from evidence_gateway.core.uow import UnitOfWork
from evidence_gateway.models import (
    ArtifactStatus,
    PackArtifact,
    PackStatus,
    ReportPack,
)
from evidence_gateway.read_models.representation import pack_json
from evidence_gateway.resolvers.leased import INTERRUPTED
from evidence_gateway.resolvers.preconditions import touch
from evidence_gateway.store import artifact_files as store
from evidence_gateway.store.db import Database, rows_changed

log = logging.getLogger(__name__)


async def fail_pack(
    uow: UnitOfWork, pack_id: uuid.UUID, message: str, *, reason: str = "error", expired_only: bool = False
) -> bool:
    """A pack whose generation did not finish: failed, every artifact failed and unreadable.

    Only while it is still being generated (a lease or a queue place); the sweeper passes
    ``expired_only`` so a lease renewed meanwhile wins.
    """
    session = uow.session
    stmt = select(ReportPack).where(col(ReportPack.id) == pack_id, col(ReportPack.pack_hash).is_(None))
    stmt = stmt.with_for_update().execution_options(populate_existing=True)
    pack = (await session.execute(stmt)).scalar_one_or_none()
    if pack is None or pack.status == PackStatus.failed.value:
        return False
    lease_end = as_aware(pack.lease_expires_at)
    if expired_only and (lease_end is None or lease_end >= utcnow()):
        return False
    await _fail_files(session, pack_id, message)
    before = pack.status
    pack.status = PackStatus.failed.value
    pack.lease_owner = None
    pack.lease_expires_at = None
    touch(pack)
    try:
        uow.emit(
            EventType.pack_failed,
            "report_pack",
            pack.id,
            {**pack_json(pack, [], uow.ctx.settings), "status_before": before, "status_after": pack.status,
             "reason": INTERRUPTED if expired_only else reason, "error": message[:2000]},
            workspace_id=pack.workspace_id,
        )  # fmt: skip
    except TypeError:  # not writable as JSON: failed all the same (see calculation_failures.fail_run)
        log.exception("pack %s failed without its pack.failed event", pack_id)
    return True


async def fail_pack_plainly(db: Database, pack_id: uuid.UUID, message: str) -> bool:
    """The sweeper's last resort when ``fail_pack`` itself failed: the expired pack and its
    artifacts failed by plain updates, its stored files removed, no event."""
    async with db.write() as session:
        done = await session.execute(
            update(ReportPack)
            .where(
                col(ReportPack.id) == pack_id,
                col(ReportPack.pack_hash).is_(None),
                col(ReportPack.status) != PackStatus.failed.value,
                col(ReportPack.lease_expires_at) < utcnow(),
            )
            .values(
                status=PackStatus.failed.value,
                lease_owner=None,
                lease_expires_at=None,
                row_version=col(ReportPack.row_version) + 1,
            )
        )
        if not rows_changed(done):
            return False
        await _fail_files(session, pack_id, message)
    log.error("pack %s failed by a plain update, without its event", pack_id)
    return True


# ---- reads ------------------------------------------------------------------------------------


async def _fail_files(session: AsyncSession, pack_id: uuid.UUID, message: str) -> None:
    """A failed pack keeps no stored files; each artifact says why it failed."""
    await store.discard(session, pack_id)
    await session.execute(
        update(PackArtifact)
        .where(col(PackArtifact.report_pack_id) == pack_id)
        .values(status=ArtifactStatus.failed.value, error_message=message[:2000], generated_at=None)
    )
