"""A run that cannot be finished: failed in the unit of work or, for the sweeper, by a plain
update."""

from __future__ import annotations

import logging
import uuid

from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import UnitOfWork
from evidence_gateway.read_models.representation import run_json
from evidence_gateway.resolvers.leased import INTERRUPTED
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.calculations import CalculationRunRepository

log = logging.getLogger(__name__)


async def fail_run(
    uow: UnitOfWork, run_id: uuid.UUID, message: str, *, reason: str = "error", expired_only: bool = False
) -> bool:
    """Mark a running run failed with its event, unless it already ended; the sweeper passes
    ``expired_only`` so a lease renewed meanwhile wins.

    A run whose resource cannot be written as JSON (a value stored before the input rule
    refused it) is failed all the same, without the event: a run left ``running`` because its
    failure could not be announced would be retried by every sweep, for ever.
    """
    if not await CalculationRunRepository.fail_running(
        uow.session, run_id, message, utcnow(), expired_only=expired_only
    ):
        return False
    run = await CalculationRunRepository(uow.ctx).reloaded(uow.session, run_id)
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
        done = await CalculationRunRepository.fail_running(session, run_id, message, utcnow(), expired_only=True)
    if done:
        log.error("calculation run %s failed by a plain update, without its event", run_id)
        return True
    return False
