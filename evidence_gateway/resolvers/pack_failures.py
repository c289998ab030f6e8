"""A pack that cannot be finished: failed with its files, in the unit of work or, for the
sweeper, by a plain update."""

from __future__ import annotations

import logging
import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import as_aware, utcnow
from evidence_gateway.core.uow import UnitOfWork
from evidence_gateway.models import PackStatus
from evidence_gateway.read_models.representation import pack_json
from evidence_gateway.resolvers.leased import INTERRUPTED
from evidence_gateway.resolvers.preconditions import touch
from evidence_gateway.store import artifact_files as store
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.packs import PackArtifactRepository, ReportPackRepository

log = logging.getLogger(__name__)


async def fail_pack(
    uow: UnitOfWork, pack_id: uuid.UUID, message: str, *, reason: str = "error", expired_only: bool = False
) -> bool:
    """A pack whose generation did not finish: failed, every artifact failed and unreadable.

    Only while it is still being generated (a lease or a queue place); the sweeper passes
    ``expired_only`` so a lease renewed meanwhile wins.
    """
    session = uow.session
    pack = await ReportPackRepository(uow.ctx).load_unsealed(session, pack_id)
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
        if not await ReportPackRepository.fail_expired(session, pack_id, utcnow()):
            return False
        await _fail_files(session, pack_id, message)
    log.error("pack %s failed by a plain update, without its event", pack_id)
    return True


# ---- reads ------------------------------------------------------------------------------------


async def _fail_files(session: AsyncSession, pack_id: uuid.UUID, message: str) -> None:
    """A failed pack keeps no stored files; each artifact says why it failed."""
    await store.discard(session, pack_id)
    await PackArtifactRepository.fail_of_pack(session, pack_id, message)
