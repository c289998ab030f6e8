"""A run that cannot be finished: failed in the unit of work or, for the sweeper, by a plain
update."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from sqlalchemy import select, update
from sqlmodel import col

from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import UnitOfWork
from evidence_gateway.models import (
    CalculationRun,
    RunStatus,
)
from evidence_gateway.read_models.representation import run_json
from evidence_gateway.resolvers.leased import INTERRUPTED
from evidence_gateway.store.db import Database, rows_changed

log = logging.getLogger(__name__)


def _failing(run_id: uuid.UUID, message: str, *, expired_only: bool) -> Any:
    stmt = update(CalculationRun).where(
        col(CalculationRun.id) == run_id, col(CalculationRun.status) == RunStatus.running.value
    )
    if expired_only:
        stmt = stmt.where(col(CalculationRun.lease_expires_at) < utcnow())
    return stmt.values(
        status=RunStatus.failed.value,
        error_message=message[:2000],
        completed_at=utcnow(),
        lease_owner=None,
        lease_expires_at=None,
    )


async def fail_run(
    uow: UnitOfWork, run_id: uuid.UUID, message: str, *, reason: str = "error", expired_only: bool = False
) -> bool:
    """Mark a running run failed with its event, unless it already ended; the sweeper passes
    ``expired_only`` so a lease renewed meanwhile wins.

    A run whose resource cannot be written as JSON (a value stored before the input rule
    refused it) is failed all the same, without the event: a run left ``running`` because its
    failure could not be announced would be retried by every sweep, for ever.
    """
    done = await uow.session.execute(_failing(run_id, message, expired_only=expired_only))
    if not rows_changed(done):
        return False
    run = (
        await uow.session.execute(
            select(CalculationRun).where(col(CalculationRun.id) == run_id).execution_options(populate_existing=True)
        )
    ).scalar_one()
    try:
        uow.emit(
            EventType.calculation_failed,
            "calculation_run",
            run.id,
            {**(run_json(run) or {}), "reason": INTERRUPTED if expired_only else reason},
            workspace_id=run.workspace_id,
        )
    except TypeError:  # orjson's JSONEncodeError: an integer beyond 64 bits, say
        log.exception("calculation run %s failed without its calculation.failed event", run_id)
    return True


async def fail_run_plainly(db: Database, run_id: uuid.UUID, message: str) -> bool:
    """The sweeper's last resort when ``fail_run`` itself failed: the expired run failed by one
    plain update, no event, so no row can stay ``running`` and be retried every pass."""
    async with db.write() as session:
        done = await session.execute(_failing(run_id, message, expired_only=True))
    if rows_changed(done):
        log.error("calculation run %s failed by a plain update, without its event", run_id)
        return True
    return False
