"""Live subscriptions' fan-out: one tail of the event log per organisation per node.

The event table is the truth (DESIGN.md §13). A subscriber must see every event of its
organisation after its cursor, once, in sequence order, across reconnects and across nodes.
Reading the table once per subscriber per wake-up would cost N queries per commit for N
subscribers, so each node keeps a hub:

- one *tail* per organisation that has subscribers on this node. Woken by ``wakeups`` (a commit
  on this node, or a NOTIFY from another node over PostgreSQL), and otherwise every
  ``poll_seconds`` as a safety net (a SQLite file written by another process, a lost NOTIFY),
  it reads the events after the last sequence it read and hands the same batch to every
  subscriber of that organisation: one query per wake-up, whatever the number of subscribers;
- each *subscriber* registers with the tail, waits until the tail knows where it starts, and
  only then reads where the log ends and its own backlog from the table: whatever commits
  after that end is read by the tail after it and handed over, so nothing falls through. It
  then follows the batches the tail hands it, skipping what it has already seen (the sequence
  says so) and reading the table again only for a gap, which sequences, being gapless per
  organisation, make visible;
- each subscriber's queue is bounded: ``max_pending`` events received but not yet sent. A
  subscriber whose client reads slower than its organisation writes is ended with
  ``SUBSCRIBER_TOO_SLOW`` (and the cursor to resume from) rather than holding an unbounded
  history in memory; resubscribing with that cursor replays from the table, missing nothing.

A tail stops when its last subscriber leaves; ``stop()`` ends every subscription (the server is
going away) with ``SHUTTING_DOWN``. Nothing here knows GraphQL: ``follow_events`` and
``follow_pack`` yield model rows; ``schema/subscriptions.py`` maps them to types.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from typing import Any

from evidence_gateway.auth import Scope
from evidence_gateway.core import wakeups
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import cursor_of
from evidence_gateway.errors import DomainError
from evidence_gateway.models import Event
from evidence_gateway.resolvers import pack_reads
from evidence_gateway.resolvers import subscriptions as feed
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import ReportPackRecord
from evidence_gateway.web.observability import tracing

log = logging.getLogger(__name__)

# Safety-net poll of each tail when no wake-up comes (another process writing SQLite, a NOTIFY
# lost while the LISTEN connection was re-opened).
POLL_SECONDS = 1.0
# Events a subscriber may have received from its tail and not yet sent: about 10 s of a busy
# organisation. Beyond it the subscriber is ended, never buffered without bound.
MAX_PENDING_EVENTS = 10_000
# On stop, how long a tail may take to finish its current read before it is cancelled.
_STOP_SECONDS = 5.0


class SubscriberTooSlow(DomainError):
    """The client read slower than its organisation's events arrived; resubscribe with ``after``."""

    status = 503
    code = "subscriber_too_slow"
    graphql_code = "SUBSCRIBER_TOO_SLOW"


class ShuttingDown(DomainError):
    """This node is stopping; subscribe again (on any node) with ``after`` to miss nothing."""

    status = 503
    code = "shutting_down"
    graphql_code = "SHUTTING_DOWN"


class Subscriber:
    """One live subscription's inbox: batches of events from its tail, bounded in size."""

    def __init__(self, max_pending: int) -> None:
        self._max_pending = max_pending
        self._batches: deque[Sequence[Event]] = deque()
        self._pending = 0
        self._ready = asyncio.Event()
        # Why the hub ended this subscriber (raised by next_batch once the inbox is dropped).
        self.ended: type[DomainError] | None = None
        # Set once the subscriber knows where the log ends: from then on nothing can pass it by.
        self.live = False

    def push(self, batch: Sequence[Event]) -> None:
        """Called by the tail, never blocks: the batch is shared by every subscriber of the org."""
        if self.ended is not None:
            return
        if self._pending + len(batch) > self._max_pending:
            self.end(SubscriberTooSlow)
            return
        self._batches.append(batch)
        self._pending += len(batch)
        self._ready.set()

    def end(self, reason: type[DomainError]) -> None:
        self.ended = reason
        self._batches.clear()  # a subscriber that is ended holds no memory
        self._pending = 0
        self._ready.set()

    async def next_batch(self) -> Sequence[Event]:
        """The next batch (no timer per wait: this runs once per message). Raises the end reason."""
        while not self._batches and self.ended is None:
            self._ready.clear()
            await self._ready.wait()
        if self.ended is not None:
            raise self.ended("subscription ended")
        batch = self._batches.popleft()
        self._pending -= len(batch)
        return batch


class _Tail:
    """Reads one organisation's new events and hands each batch to all its subscribers."""

    def __init__(self, hub: SubscriptionHub, org_id: uuid.UUID) -> None:
        self.hub = hub
        self.db = hub.db
        self.org_id = org_id
        self.subscribers: set[Subscriber] = set()
        # The last sequence read: where the log ended when the tail started, then each batch's end.
        self.last = 0
        # Set once ``last`` is known. Subscribers wait for it before they read where the log ends,
        # so whatever comes after that end is read by the tail after it and handed to them.
        self.ready = asyncio.Event()
        self.woken = asyncio.Event()
        self.stopping = False
        self.task = asyncio.create_task(self._run(), name=f"subscription-tail-{org_id}")

    def wake(self) -> None:
        self.woken.set()

    def stop(self) -> None:
        """Ends the loop at its next turn (not mid-query: a cancelled read may strand a connection)."""
        self.stopping = True
        self.woken.set()
        self.ready.set()  # nobody waits for a start that will not come (they are ended anyway)

    async def _run(self) -> None:
        while not self.stopping:
            # Cleared before the read: a commit landing during the read wakes the next turn.
            self.woken.clear()
            try:
                await self._read()
            except Exception:  # the database went away for a moment: try again at the next turn
                log.warning("reading events of organisation %s failed; retrying", self.org_id, exc_info=True)
            if self.stopping:
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.hub.poll_seconds):
                    await self.woken.wait()

    async def _read(self) -> None:
        if not self.ready.is_set():
            # Subscribers read what came before from the table themselves.
            self.last = await feed.last_sequence(self.db, self.org_id)
            self.ready.set()
        while not self.stopping:
            rows = await feed.events_after(self.db, self.org_id, self.last)
            if rows:
                self.last = rows[-1].sequence
                batch = tuple(rows)
                with tracing.span("subscription fan-out", attributes={"evidence.events": len(batch)}):
                    for subscriber in list(self.subscribers):
                        subscriber.push(batch)
            if len(rows) < feed.PAGE:
                return


class SubscriptionHub:
    """This node's tails, by organisation. ``start``/``stop`` follow the app's lifespan."""

    def __init__(
        self,
        db: Database,
        *,
        poll_seconds: float = POLL_SECONDS,
        max_pending: int = MAX_PENDING_EVENTS,
    ) -> None:
        self.db = db
        self.poll_seconds = poll_seconds
        self.max_pending = max_pending
        self._tails: dict[uuid.UUID, _Tail] = {}
        self._stopping_tails: set[asyncio.Task[None]] = set()
        self._stopped = False

    @property
    def subscriber_count(self) -> int:
        """Subscriptions registered on this node (for operators and tests)."""
        return sum(len(t.subscribers) for t in self._tails.values())

    @property
    def live_count(self) -> int:
        """Subscriptions that have read where the log ends: an event committed now reaches them."""
        return sum(s.live for t in self._tails.values() for s in t.subscribers)

    def start(self) -> None:
        self._stopped = False
        wakeups.listen(self.wake)

    async def stop(self) -> None:
        """Ends every subscription (SHUTTING_DOWN) and waits for the tails to finish."""
        self._stopped = True
        wakeups.unlisten(self.wake)
        tails = list(self._tails.values())
        self._tails.clear()
        for tail in tails:
            for subscriber in tail.subscribers:
                subscriber.end(ShuttingDown)
            self._retire(tail)
        pending = list(self._stopping_tails)
        if pending:
            _done, late = await asyncio.wait(pending, timeout=_STOP_SECONDS)
            for task in late:
                task.cancel()
            if late:
                await asyncio.wait(late)

    def wake(self, org_id: uuid.UUID | None) -> None:
        """A wake-up listener (``wakeups.listen``): None means any organisation may have news."""
        if org_id is None:
            for tail in self._tails.values():
                tail.wake()
        elif (found := self._tails.get(org_id)) is not None:
            found.wake()

    @contextlib.asynccontextmanager
    async def subscribe(self, org_id: uuid.UUID) -> AsyncIterator[Subscriber]:
        """Registered for every batch the org's tail reads from now on, until the block exits."""
        if self._stopped:
            raise ShuttingDown("server shutting down")
        tail = self._tails.get(org_id)
        if tail is None:
            tail = self._tails[org_id] = _Tail(self, org_id)
        subscriber = Subscriber(self.max_pending)
        tail.subscribers.add(subscriber)
        try:
            await tail.ready.wait()
            yield subscriber
        finally:
            tail.subscribers.discard(subscriber)
            if not tail.subscribers and self._tails.get(org_id) is tail:
                del self._tails[org_id]
                self._retire(tail)

    def _retire(self, tail: _Tail) -> None:
        tail.stop()
        if not tail.task.done():
            self._stopping_tails.add(tail.task)
            tail.task.add_done_callback(self._stopping_tails.discard)


async def follow_events(
    hub: SubscriptionHub,
    ctx: Ctx,
    only: feed.EventFilter,
    after: int | None,
) -> AsyncGenerator[Event, None]:
    """The organisation's events after ``after`` (None: from now on) that pass ``only``, then
    live, in sequence order, each once.

    ``position`` is the sequence up to which every event has been yielded or filtered out;
    ``target`` the sequence the table is known to hold up to. The tail's batches are followed
    while they continue ``position``; a gap (the backlog at the start, or anything a batch
    skipped: a safety net, the tail starts before the subscriber reads ``target``) is read
    from the table. The key's scope is checked before anything is read (its validity is the
    socket's: schema/websocket.py).
    """
    ctx.require(Scope.READ)
    position = after
    async with hub.subscribe(ctx.org_id) as subscriber:
        target = await feed.last_sequence(ctx.db, ctx.org_id)
        if position is None:
            position = target
        subscriber.live = True
        live: deque[Event] = deque()
        try:
            while True:
                if position < target:
                    rows = await feed.events_after(ctx.db, ctx.org_id, position, until=target, only=only)
                    for event in rows:
                        yield event
                        position = event.sequence
                    if len(rows) < feed.PAGE:
                        position = target
                    continue
                if not live:
                    batch = await subscriber.next_batch()
                    live.extend(e for e in batch if e.sequence > position)
                    continue
                event = live[0]
                if event.sequence > position + 1:
                    target = event.sequence - 1
                    continue
                live.popleft()
                if event.sequence <= position:
                    continue
                if only.matches(event):
                    yield event
                position = event.sequence
        except (SubscriberTooSlow, ShuttingDown) as ended:
            message = _ended_message(ended, hub.max_pending) + ": subscribe again with `after` to resume"
            raise type(ended)(message, after=cursor_of(position)) from None


async def follow_pack(hub: SubscriptionHub, ctx: Ctx, pack_id: Any) -> AsyncGenerator[ReportPackRecord, None]:
    """The pack as it is now, then again after each of its ``pack.*`` events.

    The log's end is read before the pack, so a change committed in between is yielded once
    more rather than missed. Unknown and other organisations' packs: NOT_FOUND, as ``pack(id)``;
    the scope and the pack's existence are checked before the first yield.
    """
    ctx.require(Scope.READ)
    start = await feed.last_sequence(ctx.db, ctx.org_id)
    pack = await pack_reads.get_pack(ctx, pack_id)
    yield pack
    changes = follow_events(hub, ctx, feed.pack_filter(pack.id), start)
    try:
        async with contextlib.aclosing(changes):
            async for _event in changes:
                yield await pack_reads.get_pack(ctx, pack.id)
    except (SubscriberTooSlow, ShuttingDown) as ended:
        # No cursor here: subscribing again yields the pack as it is then.
        raise type(ended)(_ended_message(ended, hub.max_pending) + ": subscribe again") from None


def _ended_message(ended: DomainError, max_pending: int) -> str:
    if isinstance(ended, SubscriberTooSlow):
        return f"subscriber too slow: more than {max_pending} events were waiting to be sent"
    return "server shutting down"
