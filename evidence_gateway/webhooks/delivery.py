"""One attempt to deliver an event to a registered endpoint: sign, vet, send, record (DESIGN.md §16).

Shared by the dispatcher (scheduled attempts) and the hand retry of a delivery. The body is
the event exactly as the event log renders it, plus the Standard Webhooks ``timestamp``; the
``webhook-id`` header is the event id, the same on every attempt, so a receiver can drop
repeats. Each attempt resolves the host once, vets every address and connects to a vetted one
(no second lookup), so an answer that changes after registration cannot reach a private host.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import orjson

from evidence_gateway.auth import Principal
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import UnitOfWork, unit_of_work
from evidence_gateway.errors import InvalidInput
from evidence_gateway.models import Event, MessageStatus, WebhookDelivery, WebhookEndpoint, WebhookMessage
from evidence_gateway.read_models.representation import event_json, webhook_endpoint_json
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories import outbox
from evidence_gateway.web.observability import metrics
from evidence_gateway.webhooks import guard, sender, signing

# httpx (~5 MB resident) loads with the first outgoing request, not with the server.
if TYPE_CHECKING:
    import httpx

DISABLED_REASON = "failing for too long: every attempt failed since {since}"


@dataclass(frozen=True, slots=True)
class Job:
    """A message with what sending it needs: its endpoint and its event."""

    message: WebhookMessage
    endpoint: WebhookEndpoint
    event: Event


@dataclass(frozen=True, slots=True)
class Attempt:
    """What one attempt sent and how it went, before it is recorded."""

    job: Job
    outcome: sender.Outcome
    body: bytes
    duration_ms: int


def message_of(event: Event) -> dict[str, Any]:
    """``{type, timestamp, data}`` as Standard Webhooks suggests, with the rest of the event beside them."""
    return {**event_json(event), "timestamp": event.occurred_at}


def headers_for(endpoint: WebhookEndpoint, msg_id: str, body: bytes, now: datetime) -> dict[str, str]:
    secrets = signing.live_secrets(endpoint.secret, endpoint.previous_secret, endpoint.previous_secret_expires_at, now)
    return signing.signature_headers(secrets, msg_id, int(now.timestamp()), body)


def retry_delay(settings: Settings, attempts: int) -> float | None:
    """Seconds until the next try after ``attempts`` failed ones; None when the schedule is spent.

    Jitter (±20 %) spreads the retries of many messages that failed together.
    """
    schedule = settings.webhook_retry_delays()
    if attempts > len(schedule):
        return None
    return schedule[attempts - 1] * random.uniform(0.8, 1.2)


class _Host:
    def __init__(self, client: httpx.AsyncClient, concurrency: int) -> None:
        self.client = client
        self.slots = asyncio.Semaphore(concurrency)
        self.users = 0


class Clients:
    """One pooled HTTP client per receiving host, so attempts to a receiver reuse connections.

    Per host name, not per address: a pooled TLS connection carries the SNI name and certificate
    it was opened for, so it must never serve another name that shares the address. Requests
    still go to the address vetted for that attempt (a pool is keyed by it). A host gets at most
    ``PER_HOST`` attempts at once: kinder to a receiver than the node's whole in-flight limit,
    and a pool of a few connections is cheap to search (httpcore checks every pooled connection
    on every request). Attempts wait for a slot before their timeouts start. Idle hosts beyond
    ``MAX_HOSTS`` are closed, oldest first.
    """

    MAX_HOSTS = 64
    PER_HOST = 8

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._hosts: dict[str, _Host] = {}

    @contextlib.asynccontextmanager
    async def use(self, host: str) -> AsyncIterator[httpx.AsyncClient]:
        entry = self._hosts.pop(host, None) or _Host(
            sender.new_client(
                self.settings.webhook_connect_timeout_seconds, self.settings.webhook_read_timeout_seconds
            ),
            self.PER_HOST,
        )
        self._hosts[host] = entry  # most recently used last
        entry.users += 1
        try:
            async with entry.slots:
                yield entry.client
        finally:
            entry.users -= 1
            await self._trim()

    async def _trim(self) -> None:
        idle = [h for h, e in self._hosts.items() if e.users == 0]
        for host in idle[: max(0, len(self._hosts) - self.MAX_HOSTS)]:
            await self._hosts.pop(host).client.aclose()

    async def aclose(self) -> None:
        entries, self._hosts = list(self._hosts.values()), {}
        for entry in entries:
            await entry.client.aclose()


async def send(
    settings: Settings, url: str, body: bytes, headers: dict[str, str], clients: Clients | None = None
) -> sender.Outcome:
    """Resolve once, vet every address, POST to a vetted one."""
    try:
        target = await guard.checked(guard.parse_target_url(url, "url"), settings, "url")
    except InvalidInput as exc:
        # The rule, not a stack: the name now resolves somewhere it may not go.
        return sender.failed("refused: " + "; ".join(exc.fields.values()))
    connect, read = settings.webhook_connect_timeout_seconds, settings.webhook_read_timeout_seconds
    if clients is None:
        return await sender.post(target, body, headers, connect_timeout=connect, read_timeout=read)
    async with clients.use(target.host) as client:
        return await sender.post(target, body, headers, connect_timeout=connect, read_timeout=read, client=client)


async def load(db: Database, message_ids: list[uuid.UUID]) -> list[Job]:
    """The messages with their endpoints and events, in one query (gone ones are left out)."""
    if not message_ids:
        return []
    return [Job(message, endpoint, event) for message, endpoint, event in await outbox.jobs(db, message_ids)]


async def try_once(settings: Settings, job: Job, clients: Clients | None = None) -> Attempt:
    """Sign and send the job's event once; nothing is written here."""
    now = utcnow()
    body = dumps(message_of(job.event))
    started = time.perf_counter()
    headers = headers_for(job.endpoint, str(job.event.id), body, now)
    outcome = await send(settings, job.endpoint.url, body, headers, clients)
    seconds = time.perf_counter() - started
    metrics.webhook_delivery(
        str(job.endpoint.id), settings.metrics_webhook_endpoints, outcome.delivered, outcome.http_status, seconds
    )
    return Attempt(job, outcome, body, round(seconds * 1000))


async def attempt(
    db: Database,
    settings: Settings,
    message_id: uuid.UUID,
    *,
    claimed_by: str | None,
    api_key_id: uuid.UUID | None = None,
) -> WebhookDelivery | None:
    """Send the message's event once and record the attempt; None when the message is gone.

    ``claimed_by``: the dispatcher node holding the message (it then moves the schedule on);
    None for a hand retry, which records its attempt and can only deliver the message.
    """
    jobs = await load(db, [message_id])
    if not jobs:
        return None
    sent = await try_once(settings, jobs[0])
    (delivery,) = await record(db, settings, [sent], claimed_by=claimed_by, api_key_id=api_key_id)
    return delivery


async def record(
    db: Database,
    settings: Settings,
    attempts: list[Attempt],
    *,
    claimed_by: str | None,
    api_key_id: uuid.UUID | None = None,
) -> list[WebhookDelivery]:
    """Store attempts of one organisation's messages in one transaction: each attempt, its
    message moved on, its endpoint's health."""
    org_id = attempts[0].job.message.org_id
    ctx = Ctx(db=db, settings=settings, principal=Principal(org_id=org_id, key_id=api_key_id))
    now = utcnow()
    async with unit_of_work(ctx) as uow:
        # Endpoints before messages: the order a delete takes them in (endpoint, then its messages).
        await _update_health(uow, settings, attempts, now)
        session = uow.session
        ids = [a.job.message.id for a in attempts]
        # Locked, so a concurrent delete of the endpoint (cascading to its messages) waits for us.
        current = await outbox.locked_messages(session, org_id, ids)
        deliveries = []
        for sent in attempts:
            message = current.get(sent.job.message.id)
            deliveries.append(_delivery(sent, message, api_key_id, now))
            if message is not None:
                _advance(settings, message, sent.outcome.delivered, claimed_by, now)
        session.add_all(deliveries)
    return deliveries


def _delivery(
    sent: Attempt, message: WebhookMessage | None, api_key_id: uuid.UUID | None, now: datetime
) -> WebhookDelivery:
    outcome, job = sent.outcome, sent.job
    return WebhookDelivery(
        org_id=job.message.org_id,
        webhook_id=str(job.event.id),
        target_url=job.endpoint.url,
        event_type=job.event.type,
        delivered=outcome.delivered,
        http_status=outcome.http_status,
        error=outcome.error[:2000] if outcome.error else None,
        response_excerpt=outcome.response_excerpt,
        payload=orjson.loads(sent.body),
        api_key_id=api_key_id,
        created_at=now,
        # Kept only while the endpoint exists (a deleted one leaves its attempts anonymous).
        endpoint_id=job.endpoint.id if message is not None else None,
        message_id=message.id if message is not None else None,
        event_id=job.event.id,
        attempt=message.attempts + 1 if message is not None else None,
        duration_ms=sent.duration_ms,
    )


def _advance(
    settings: Settings, message: WebhookMessage, delivered: bool, claimed_by: str | None, now: datetime
) -> None:
    """The message after one more attempt: delivered, retried later, or given up."""
    message.attempts += 1
    owner = claimed_by is not None and message.claimed_by == claimed_by
    if delivered:
        message.status = MessageStatus.delivered.value
        message.delivered_at = now
        message.next_attempt_at = None
    elif owner and message.status == MessageStatus.pending.value:
        delay = retry_delay(settings, message.attempts)
        if delay is None:
            message.status = MessageStatus.failed.value
            message.next_attempt_at = None
        else:
            message.next_attempt_at = now + timedelta(seconds=delay)
    if owner:
        message.claimed_by = None
        message.claimed_until = None


async def _update_health(uow: UnitOfWork, settings: Settings, attempts: list[Attempt], now: datetime) -> None:
    """A success makes an endpoint healthy; failures make it failing and, once every attempt
    has failed for long enough, disabled. Rows are written only when their state changes."""
    last: dict[uuid.UUID, tuple[WebhookEndpoint, bool]] = {}
    for sent in attempts:  # in the order they finished: the last outcome decides
        last[sent.job.endpoint.id] = (sent.job.endpoint, sent.outcome.delivered)
    session = uow.session
    for endpoint_id, (seen, delivered) in last.items():
        if delivered:
            if seen.failing_since is not None:
                await outbox.mark_healthy(session, endpoint_id)
            continue
        if seen.failing_since is None:
            await outbox.mark_failing(session, endpoint_id, now)
            continue
        cutoff = now - timedelta(seconds=settings.webhook_disable_after_seconds)
        if seen.enabled and seen.failing_since < cutoff:
            await _disable(uow, endpoint_id, cutoff, now)


async def _disable(uow: UnitOfWork, endpoint_id: uuid.UUID, cutoff: datetime, now: datetime) -> None:
    endpoint = await outbox.lock_failing_since(uow.session, endpoint_id, cutoff)
    if endpoint is None:  # succeeded, re-enabled or disabled meanwhile
        return
    since = endpoint.failing_since.isoformat() if endpoint.failing_since else now.isoformat()
    endpoint.enabled = False
    endpoint.disabled_reason = DISABLED_REASON.format(since=since)[:200]
    endpoint.updated_at = now
    uow.emit(EventType.webhook_endpoint_disabled, "webhook_endpoint", endpoint.id, webhook_endpoint_json(endpoint))
