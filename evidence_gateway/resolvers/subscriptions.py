"""Org-scoped reads of the event log for live subscribers (GraphQL subscriptions, docs/events.md).

The subscription hub (``evidence_gateway/core/subscriptions.py``) tails one organisation's log and
each subscriber catches up from the table; both read through these functions, so what a
subscriber can see is decided here, next to the other resolvers: one organisation's events,
filtered by type (and subject, for a pack's changes), in sequence order.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evidence_gateway.core.events import EventType, sequence_of
from evidence_gateway.errors import InvalidInput
from evidence_gateway.models import Event
from evidence_gateway.resolvers.events import as_seen_by as as_seen_by  # as the events query shows them
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories import events

# Rows per read: large enough that a backlog costs few round trips, small enough that one read
# holds little memory and a connection only briefly.
PAGE = 500
MAX_TYPES = 50

PACK_EVENT_TYPES = frozenset(t.value for t in EventType if t.value.startswith("pack."))


@dataclass(frozen=True, slots=True)
class EventFilter:
    """Which events a subscriber wants: the same test in SQL (catching up) and in memory (live)."""

    types: frozenset[str] | None = None
    subject_id: uuid.UUID | None = None

    def matches(self, event: Event) -> bool:
        return (self.types is None or event.type in self.types) and (
            self.subject_id is None or event.subject_id == self.subject_id
        )


def event_filter(types: Iterable[Any] | None) -> EventFilter:
    """``types`` as a subscriber gave them: known event types only, so a typo is an error
    now rather than a subscription that silently never delivers anything."""
    if types is None:
        return EventFilter()
    given = list(types)
    if len(given) > MAX_TYPES:
        raise InvalidInput(fields={"types": f"at most {MAX_TYPES} types"})
    known = {t.value for t in EventType}
    unknown = sorted({str(t) for t in given if t not in known})
    if unknown:
        raise InvalidInput(fields={"types": f"unknown event type(s): {', '.join(unknown)} (see docs/events.md)"})
    return EventFilter(types=frozenset(given))


def pack_filter(pack_id: uuid.UUID) -> EventFilter:
    """The events that change one pack: every ``pack.*`` event whose subject it is."""
    return EventFilter(types=PACK_EVENT_TYPES, subject_id=pack_id)


def start_after(cursor: str | None) -> int | None:
    """Where a subscription starts: after the cursor's event, or (None) after the log's end."""
    return sequence_of(cursor) if cursor else None


async def last_sequence(db: Database, org_id: uuid.UUID) -> int:
    """The organisation's newest committed sequence (0: no events yet)."""
    return await events.org_last_sequence(db, org_id)


async def events_after(
    db: Database,
    org_id: uuid.UUID,
    after: int,
    *,
    until: int | None = None,
    only: EventFilter | None = None,
    limit: int = PAGE,
) -> list[Event]:
    """The organisation's events with ``after < sequence <= until``, oldest first, filtered."""
    only = only or EventFilter()
    return await events.org_events_after(
        db, org_id, after, until=until, types=only.types, subject_id=only.subject_id, limit=limit
    )
