"""Each node's background work (DESIGN.md §15): the sweeper and the queue of respond-async work.

The sweeper runs at start-up and every lease period: work whose lease ran out (its node died or
hung) is marked ``failed`` with reason ``interrupted`` and a ``*.failed`` event, and expired
idempotency records are purged. The queue loop claims queued runs and packs — with
``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so several nodes share the queue and none takes an
item twice; on SQLite the conditional claim alone decides — and runs them under a lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from evidence_gateway.auth import Principal
from evidence_gateway.core import idempotency
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.leases import NODE_ID, expiry, register_waiter, unregister_waiter
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import UnitOfWork, unit_of_work
from evidence_gateway.errors import DomainError
from evidence_gateway.resolvers import calculation_failures, calculations, pack_failures, packs, tlog
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories import claims
from evidence_gateway.web.observability import tracing

log = logging.getLogger(__name__)

CLAIM_BATCH = 4
# Expired runs (and packs) one sweep fails at most; the next pass takes the rest.
SWEEP_BATCH = 500
# How often an idle node looks at the queue when nothing woke it (another node's requests).
POLL_SECONDS = 1.0
INTERRUPTED_MESSAGE = "interrupted: the node working on it stopped renewing its lease"


class Worker:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self._wake = asyncio.Event()
        self._loops: list[asyncio.Task[None]] = []
        self._jobs: set[asyncio.Task[Any]] = set()

    @property
    def running(self) -> bool:
        """Its loops are alive (for /readyz): started, not stopped, not crashed."""
        return bool(self._loops) and not any(task.done() for task in self._loops)

    async def start(self) -> None:
        await self.sweep()
        register_waiter(self._wake)
        self._loops = [asyncio.create_task(self._sweep_loop()), asyncio.create_task(self._queue_loop())]
        self._loops.append(asyncio.create_task(self._checkpoint_loop()))

    async def stop(self, grace_seconds: float) -> None:
        """Stop taking work; give running jobs ``grace_seconds``, then cancel them (they fail)."""
        unregister_waiter(self._wake)
        for task in self._loops:
            task.cancel()
        for task in self._loops:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._jobs:
            _done, pending = await asyncio.wait(self._jobs, timeout=grace_seconds)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)

    # ---- the sweeper ---------------------------------------------------------------------------

    async def sweep(self, batch: int = SWEEP_BATCH) -> int:
        """Fail work with an expired lease; returns how many runs and packs it failed.

        At most ``batch`` runs and ``batch`` packs a pass, taken in turns across organisations
        (each one's longest-expired first, then each one's next): one organisation's thousand
        dead runs cannot keep another's from being failed for a single pass.
        """
        now = utcnow()
        failed = 0
        expired_runs = await claims.expired_runs(self.db, now, batch)
        for run_id, org_id in expired_runs:
            failed += await self._as_system(org_id, partial(_fail_run, run_id), partial(_plain_fail_run, run_id))
        expired_packs = await claims.expired_packs(self.db, now, batch)
        for pack_id, org_id in expired_packs:
            failed += await self._as_system(org_id, partial(_fail_pack, pack_id), partial(_plain_fail_pack, pack_id))
        await idempotency.purge(self.db)
        if failed:
            log.warning("sweeper failed %d interrupted runs/packs", failed)
        return failed

    async def _as_system(
        self,
        org_id: uuid.UUID,
        change: Callable[[UnitOfWork], Awaitable[bool]],
        plain: Callable[[Database], Awaitable[bool]],
    ) -> int:
        """``change`` (the failure with its event) in the organisation's name; if that cannot be
        done at all (the event cannot be built, say), ``plain``: the same failure, no event, so
        that no row is retried every pass for ever."""
        ctx = Ctx(db=self.db, settings=self.settings, principal=Principal(org_id=org_id, key_id=None))
        try:
            async with unit_of_work(ctx) as uow:
                return 1 if await change(uow) else 0
        except Exception:
            log.exception("sweeper could not fail interrupted work of organisation %s with its event", org_id)
        try:
            return 1 if await plain(self.db) else 0
        except Exception:
            log.exception("sweeper could not fail interrupted work of organisation %s", org_id)
            return 0

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.lease_seconds)
            try:
                with tracing.span("sweep"):
                    await self.sweep()
            except Exception:
                log.exception("sweep failed")

    async def _checkpoint_loop(self) -> None:
        """Signs a checkpoint of every log that grew, every EVIDENCE_CHECKPOINT_SECONDS (on any node:
        two nodes signing the same size keep one), and seals what awaits a seal."""
        while True:
            await asyncio.sleep(self.settings.checkpoint_seconds)
            try:
                await tlog.checkpoint_grown(self.db, self.settings)
            except Exception:
                log.exception("signing checkpoints failed")

    # ---- the queue ------------------------------------------------------------------------------

    async def _queue_loop(self) -> None:
        while True:
            try:
                claimed = await self.claim()
            except Exception:
                log.exception("claiming queued work failed")
                claimed = 0
            if claimed:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), POLL_SECONDS)
            self._wake.clear()

    async def claim(self) -> int:
        """Take up to a few queued runs and packs and start them; returns how many."""
        until = expiry(self.settings.lease_seconds)
        runs = await claims.claim_queued_runs(self.db, NODE_ID, until, CLAIM_BATCH)
        for run_id, org_id, key_id in runs:
            self._spawn(calculations.execute_run(self._ctx(org_id, key_id), run_id), "calculation run", run_id, org_id)
        queued_packs = await claims.claim_queued_packs(self.db, NODE_ID, until, CLAIM_BATCH)
        for pack_id, org_id, key_id in queued_packs:
            self._spawn(packs.execute_pack(self._ctx(org_id, key_id), pack_id), "pack generation", pack_id, org_id)
        return len(runs) + len(queued_packs)

    def _ctx(self, org_id: uuid.UUID, key_id: uuid.UUID | None) -> Ctx:
        return Ctx(db=self.db, settings=self.settings, principal=Principal(org_id=org_id, key_id=key_id))

    def _spawn(self, work: Awaitable[Any], what: str, item_id: uuid.UUID, org_id: uuid.UUID) -> None:
        async def run() -> None:
            # Queued work is a trace of its own (the request that queued it has long answered).
            attributes = {"evidence.work": what, "evidence.item_id": str(item_id), "evidence.org_id": str(org_id)}
            try:
                with tracing.span(f"queued {what}", kind="consumer", attributes=attributes):
                    await work
            except DomainError as exc:
                log.info("queued work ended with %s: %s", exc.code, exc.message)
            except Exception:
                log.exception("queued work failed")

        task = asyncio.create_task(run())
        self._jobs.add(task)
        task.add_done_callback(self._jobs.discard)


async def _fail_run(run_id: uuid.UUID, uow: UnitOfWork) -> bool:
    return await calculation_failures.fail_run(uow, run_id, INTERRUPTED_MESSAGE, expired_only=True)


async def _fail_pack(pack_id: uuid.UUID, uow: UnitOfWork) -> bool:
    return await pack_failures.fail_pack(uow, pack_id, INTERRUPTED_MESSAGE, expired_only=True)


async def _plain_fail_run(run_id: uuid.UUID, db: Database) -> bool:
    return await calculation_failures.fail_run_plainly(db, run_id, INTERRUPTED_MESSAGE)


async def _plain_fail_pack(pack_id: uuid.UUID, db: Database) -> bool:
    return await pack_failures.fail_pack_plainly(db, pack_id, INTERRUPTED_MESSAGE)
