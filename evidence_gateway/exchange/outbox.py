"""The sender of PACT answers: the answers queued for recipients' hosts go out here, never inside
the request that asked (DESIGN.md §16, as webhooks do).

It runs wherever the webhook dispatcher runs (``EVIDENCE_DISPATCHER``, ``serve`` or ``worker``).
Due messages are claimed for a bounded time (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so every
node may run a sender and none sends what another holds), answered from the recipient's
publications as they are then (exchange/answers.py), sent with a token from the recipient's host
(exchange/outbound.py) and recorded: delivered, or retried on the webhooks' schedule
(``EVIDENCE_WEBHOOK_RETRY_SCHEDULE``, about 28 hours; PACT asks for an exponential backoff given
up after at most 72) and then failed. A node that dies mid-attempt lets its claim run out.
A recipient revoked, or whose host was cleared, since it asked is not answered. Published
notices (a pack newly published to a recipient with a host) go the same way, unless the pack was
withdrawn before they went out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from datetime import timedelta
from typing import Any

from evidence_gateway.core.leases import NODE_ID
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.exchange import answers, host, outbound
from evidence_gateway.models import ExchangeMessage
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import DataRecipientRecord
from evidence_gateway.store.repositories import exchange_outbox
from evidence_gateway.webhooks import delivery, sender

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
# Answers on the wire at once per node: a recipient's host is one customer's system.
IN_FLIGHT = 8


class ExchangeOutbox:
    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._in_flight: set[asyncio.Task[Any]] = set()

    @property
    def running(self) -> bool:
        return self._loop_task is not None and not self._loop_task.done()

    async def start(self) -> None:
        answers.register(self._wake)
        self._loop_task = asyncio.create_task(self._run())

    async def stop(self, grace_seconds: float) -> None:
        """Stop claiming; let answers on the wire finish for ``grace_seconds``, then cancel them
        (their claims run out and another node sends them)."""
        answers.unregister(self._wake)
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

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                claimed = await self.dispatch_due()
            except Exception:
                log.exception("PACT answer round failed")
                claimed = 0
            if claimed:
                continue
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await self._wake.wait()

    async def dispatch_due(self) -> int:
        room = IN_FLIGHT - len(self._in_flight)
        if room <= 0:
            return 0
        now = utcnow()
        if not await exchange_outbox.any_due(self.db, now):
            return 0
        until = now + timedelta(seconds=self.settings.webhook_claim_seconds)
        claimed = await exchange_outbox.claim_due(self.db, NODE_ID, now, until, room)
        for message, recipient in claimed:
            task = asyncio.create_task(self._send(message, recipient))
            self._in_flight.add(task)
            task.add_done_callback(self._sent)
        return len(claimed)

    def _sent(self, task: asyncio.Task[Any]) -> None:
        self._in_flight.discard(task)
        self._wake.set()

    async def _send(self, message: ExchangeMessage, recipient: DataRecipientRecord) -> None:
        try:
            await self._attempt(message, recipient)
        except Exception:
            # Unrecorded: the claim runs out and the message is tried again.
            log.exception("PACT answer %s to recipient %s failed", message.id, recipient.client_id)

    async def _attempt(self, message: ExchangeMessage, recipient: DataRecipientRecord) -> None:
        if recipient.revoked_at is not None or not (
            recipient.host_url and recipient.host_client_id and recipient.host_client_secret
        ):
            why = "the recipient is revoked" if recipient.revoked_at is not None else "the recipient's host is not set"
            await self._finish(message.id, status=exchange_outbox.FAILED, last_error=f"not sent: {why}")
            return
        caller = host.Recipient(recipient.id, recipient.org_id, recipient.client_id, recipient.host_url)
        ctx = host.recipient_ctx(self.db, self.settings, caller, None)
        if message.kind == "published":
            pf_ids = await host.pack_footprint_ids(ctx, caller, uuid.UUID(message.request["pack_id"]))
            if pf_ids is None:
                await self._finish(message.id, status=exchange_outbox.FAILED, last_error="not sent: withdrawn")
                return
            what, event = "published", answers.notice(message, pf_ids)
        else:
            what, event = answers.answer(message, await host.footprints(ctx, caller))
        credentials = outbound.HostCredentials(
            recipient.host_url, recipient.host_client_id, recipient.host_client_secret
        )
        client = sender.new_client(
            self.settings.webhook_connect_timeout_seconds, self.settings.webhook_read_timeout_seconds
        )
        try:
            async with client:
                status = await outbound.send_event(self.settings, client, credentials, message.major, event)
        except outbound.Failed as failed:
            await self._failed(message, what, failed)
            return
        log.info("PACT %s event %s (for %s) to recipient %s delivered", what, message.id,
                 message.request_event_id[:100], recipient.client_id)  # fmt: skip
        await self._finish(
            message.id,
            status=exchange_outbox.DELIVERED,
            attempts=message.attempts + 1,
            answer=what,
            last_status=status,
            last_error=None,
            delivered_at=utcnow(),
            next_attempt_at=None,
        )

    async def _failed(self, message: ExchangeMessage, what: str, failed: outbound.Failed) -> None:
        attempts = message.attempts + 1
        delay = delivery.retry_delay(self.settings, attempts)
        log.warning("PACT %s event %s (for %s) not delivered (attempt %d): %s", what, message.id,
                    message.request_event_id[:100], attempts, failed.message)  # fmt: skip
        values: dict[str, Any] = {
            "attempts": attempts,
            "answer": what,
            "last_status": failed.status,
            "last_error": failed.message[:2000],
        }
        if delay is None:
            values.update(status=exchange_outbox.FAILED, next_attempt_at=None)
        else:
            values["next_attempt_at"] = utcnow() + timedelta(seconds=delay)
        await self._finish(message.id, **values)

    async def _finish(self, message_id: uuid.UUID, **values: Any) -> None:
        await exchange_outbox.record(self.db, message_id, NODE_ID, **values)
