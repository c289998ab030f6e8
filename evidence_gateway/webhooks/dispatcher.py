"""The webhook dispatcher: turns the event log into deliveries, at least once (DESIGN.md §16).

Two steps, each its own short transaction, so a request never waits for a receiver:

1. **Fan-out.** Each enabled endpoint keeps a cursor in its organisation's event sequence. Events
   after it become messages (one per event the endpoint wants) and the cursor moves, together.
   Sequences commit in order (DESIGN.md §13), so nothing behind a cursor can still appear.
2. **Delivery.** Due messages are claimed for a bounded time (``FOR UPDATE SKIP LOCKED`` on
   PostgreSQL, so every node may run a dispatcher and none sends an attempt another node holds;
   on SQLite the write lock makes each claim atomic), sent, and recorded with the schedule moved
   on. A node that dies mid-attempt simply lets its claim run out; another node, or this one
   restarted, sends the message again with the same ``webhook-id``.

Wake-ups (``wakeups``) start both at once after a commit; a slow poll covers everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from datetime import timedelta
from typing import Any

from evidence_gateway.core import wakeups
from evidence_gateway.core.leases import NODE_ID
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import MessageStatus, WebhookMessage
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories import outbox
from evidence_gateway.web.observability import tracing
from evidence_gateway.webhooks import delivery

log = logging.getLogger(__name__)

# Events turned into messages per endpoint and transaction.
FAN_OUT_BATCH = 500
# Attempts recorded per transaction at most.
RECORD_BATCH = 200
# How often an idle dispatcher looks without a wake-up (retries falling due, other processes).
POLL_SECONDS = 1.0
# After a wake-up, how long to let further commits gather: one round then serves many events.
GATHER_SECONDS = 0.01


class Dispatcher:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._recorder: asyncio.Task[None] | None = None
        self._in_flight: set[asyncio.Task[Any]] = set()
        # Attempts made and not yet recorded; they count against the in-flight limit.
        self._made: asyncio.Queue[delivery.Attempt] = asyncio.Queue()
        self._clients = delivery.Clients(settings)

    @property
    def running(self) -> bool:
        """Its loop is alive (for /readyz): started, not stopped, not crashed."""
        return self._loop_task is not None and not self._loop_task.done()

    async def start(self) -> None:
        wakeups.listen(self._woken)
        self._loop_task = asyncio.create_task(self._run())
        self._recorder = asyncio.create_task(self._record_loop())

    async def stop(self, grace_seconds: float) -> None:
        """Stop claiming; let attempts on the wire finish for ``grace_seconds``, then cancel them
        (their claims run out and another node sends them again)."""
        wakeups.unlisten(self._woken)
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        if self._in_flight:
            _done, pending = await asyncio.wait(self._in_flight, timeout=grace_seconds)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending)
        if self._recorder is not None:
            await self._record_made()  # what finished is written, not sent again
            self._recorder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._recorder
        await self._clients.aclose()

    def _woken(self, _org_id: uuid.UUID | None) -> None:
        self._wake.set()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                # One read a round, woken by every commit with events (store/repositories/outbox.py).
                behind, any_due = await outbox.behind_and_due(self.db, utcnow())
                progressed = 0
                if behind:
                    with tracing.span("webhook fan-out", attributes={"evidence.endpoints": len(behind)}):
                        progressed += await self.fan_out(behind)
                progressed += await self.dispatch_due(any_due)
            except Exception:
                log.exception("webhook dispatch round failed")
                progressed = 0
            if progressed:
                continue
            idle = not self._in_flight
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await self._wake.wait()
            if idle:
                # Woken from idle by a commit: let the commits right behind it join this round.
                await asyncio.sleep(GATHER_SECONDS)

    # ---- fan-out ------------------------------------------------------------------------------

    async def fan_out(self, endpoint_ids: list[uuid.UUID]) -> int:
        """Messages for every event these endpoints (the ones behind the log) have not seen yet,
        the first ones claimed and sent at once (no second transaction to claim them); returns
        events consumed."""
        consumed = 0
        for endpoint_id in endpoint_ids:
            count, jobs = await self._fan_out_one(endpoint_id, self._room())
            consumed += count
            self._start(jobs)
        return consumed

    async def _fan_out_one(self, endpoint_id: uuid.UUID, room: int) -> tuple[int, list[delivery.Job]]:
        async with self.db.write() as session:
            endpoint = await outbox.lock_endpoint(self.db, session, endpoint_id)  # None: another node is on it
            if endpoint is None:
                return 0, []
            events = await outbox.events_after(session, endpoint.org_id, endpoint.event_cursor, FAN_OUT_BATCH)
            if not events:
                return 0, []
            wanted = set(endpoint.event_types)
            now = utcnow()
            until = now + timedelta(seconds=self.settings.webhook_claim_seconds)
            jobs: list[delivery.Job] = []
            for event in events:
                if wanted and event.type not in wanted:
                    continue
                mine = len(jobs) < room
                message = WebhookMessage(
                    org_id=endpoint.org_id,
                    endpoint_id=endpoint.id,
                    event_id=event.id,
                    event_type=event.type,
                    status=MessageStatus.pending.value,
                    attempts=0,
                    next_attempt_at=now,
                    claimed_by=NODE_ID if mine else None,
                    claimed_until=until if mine else None,
                    created_at=now,
                )
                session.add(message)
                if mine:
                    jobs.append(delivery.Job(message, endpoint, event))
            endpoint.event_cursor = events[-1].sequence
        return len(events), jobs

    # ---- delivery -----------------------------------------------------------------------------

    def _room(self) -> int:
        return max(0, self.settings.webhook_max_in_flight - len(self._in_flight))

    def _start(self, jobs: list[delivery.Job]) -> None:
        for job in jobs:
            task = asyncio.create_task(self._send(job))
            self._in_flight.add(task)
            task.add_done_callback(self._sent)

    async def dispatch_due(self, any_due: bool) -> int:
        """Claim due messages (retries, and what fan-out left unclaimed) up to this node's free
        capacity and start sending them; ``any_due``: the round's look found one."""
        room = self._room()
        if not any_due:
            return 0
        # While attempts are on the wire, claim in batches rather than one message per finished one.
        if room <= 0 or (self._in_flight and room < min(8, self.settings.webhook_max_in_flight)):
            return 0
        with tracing.span("webhook dispatch", attributes={"evidence.room": room}):
            claimed = await self.claim(room)
            self._start(await delivery.load(self.db, claimed))
        return len(claimed)

    def _sent(self, task: asyncio.Task[Any]) -> None:
        self._in_flight.discard(task)
        self._wake.set()  # room for the next ones

    async def _send(self, job: delivery.Job) -> None:
        attributes = {
            "evidence.webhook.endpoint_id": str(job.endpoint.id),
            "evidence.webhook.message_id": str(job.message.id),
            "evidence.event.type": job.event.type,
        }
        try:
            with tracing.span("webhook delivery", attributes=attributes):
                self._made.put_nowait(await delivery.try_once(self.settings, job, self._clients))
        except Exception:
            # Unrecorded: the claim runs out and the message is sent again.
            log.exception("webhook delivery of message %s failed", job.message.id)

    async def _record_loop(self) -> None:
        """Write finished attempts in batches: one transaction per organisation and round."""
        while True:
            first = await self._made.get()
            self._made.put_nowait(first)
            try:
                await self._record_made()
            except Exception:
                # Unrecorded: their claims run out and the messages are sent again.
                log.exception("recording webhook attempts failed")
            self._wake.set()  # retries may be due

    async def _record_made(self) -> None:
        made: list[delivery.Attempt] = []
        while not self._made.empty() and len(made) < RECORD_BATCH:
            made.append(self._made.get_nowait())
        by_org: dict[uuid.UUID, list[delivery.Attempt]] = {}
        for sent in made:
            by_org.setdefault(sent.job.message.org_id, []).append(sent)
        for attempts in by_org.values():
            await delivery.record(self.db, self.settings, attempts, claimed_by=NODE_ID)

    async def claim(self, limit: int) -> list[uuid.UUID]:
        now = utcnow()
        until = now + timedelta(seconds=self.settings.webhook_claim_seconds)
        return await outbox.claim_due(self.db, NODE_ID, now, until, limit)
