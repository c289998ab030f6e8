"""The event log's reads (its one append is store/event_log.py's, in the unit of work)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core.scoping import of_org, owned_by, table_of
from evidence_gateway.models import ApiKey, Event
from evidence_gateway.resolvers.list_queries import ListQuery
from evidence_gateway.store.db import Database
from evidence_gateway.store.keyset import Order, Slice, keyset_slice, window
from evidence_gateway.store.list_filters import conditions, order_of
from evidence_gateway.store.record_types import EventRecord
from evidence_gateway.store.repository import Repository

# The event log's cursor order, oldest first: sequence is unique per organisation
# (uq_event_org_sequence).
_OLDEST_FIRST = Order.ascending_by("event", Event.sequence)


class EventRepository(Repository[Event, EventRecord]):
    model = Event
    record = EventRecord
    kind = "event"
    time_column = "occurred_at"

    async def after(
        self, after_sequence: int | None, limit: int, query: ListQuery | None = None, *, newest_first: bool = False
    ) -> list[Event]:
        """The caller's events after ``after_sequence`` in log order (None: from the start), at
        most ``limit``, narrowed by ``query``'s filters; ``newest_first`` walks the log backwards
        (after a position: below it)."""
        table = self.table
        seq = table.c.sequence
        if after_sequence is None:
            bound = []
        else:
            bound = [seq < after_sequence if newest_first else seq > after_sequence]
        stmt = (
            self.get_readable_statement()
            .where(*bound, *conditions(table, query))
            .order_by(seq.desc() if newest_first else seq)
            .limit(limit)
        )
        async with self.ctx.db.read() as session:
            return list((await session.execute(stmt)).scalars())

    async def slice_oldest_first(self, *, query: ListQuery | None = None, **relay: Any) -> Slice[Event]:
        """A cursor list (first/after, last/before) of the caller's events, oldest first (or in
        ``query``'s order), narrowed by ``query``'s filters."""
        order = order_of(self.table, query, _OLDEST_FIRST)
        win = window(order, **relay)
        scoped = [owned_by(self.ctx, Event), *conditions(self.table, query)]
        return await keyset_slice(self.ctx.db, Event, scoped, order, win)

    async def entity(self, event_id: uuid.UUID) -> Event | None:
        """The caller's event as an entity (node(id) renders it as the scope may see it)."""
        stmt = self.get_readable_statement().where(self.table.c.id == event_id)
        async with self.ctx.db.read() as session:
            found: Event | None = (await session.execute(stmt)).scalar_one_or_none()
        return found

    async def audit_rows(
        self, session: AsyncSession, workspace_id: uuid.UUID, upto_sequence: int, types: list[str]
    ) -> Sequence[Row[Any]]:
        """(type, occurred_at, actor, display_prefix, subject_type, subject_id, data) of the
        workspace's events of ``types`` up to ``upto_sequence``, in log order, each with its
        actor key's display prefix (a pack's audit trail)."""
        stmt = (
            select(
                col(Event.type),
                col(Event.occurred_at),
                col(Event.actor),
                col(ApiKey.display_prefix),
                col(Event.subject_type),
                col(Event.subject_id),
                col(Event.data),
            )
            .outerjoin(ApiKey, col(ApiKey.id) == col(Event.actor))
            .where(
                owned_by(self.ctx, Event),
                col(Event.workspace_id) == workspace_id,
                col(Event.sequence) <= upto_sequence,
                col(Event.type).in_(types),
            )
            .order_by(col(Event.sequence))
        )
        return (await session.execute(stmt)).all()

    async def last_sequence(self, session: AsyncSession) -> int:
        """The caller's highest committed sequence, 0 before its first event (the audit trail's end)."""
        table = self.table
        stmt = select(func.coalesce(func.max(table.c.sequence), 0)).where(owned_by(self.ctx, table))
        return int((await session.execute(stmt)).scalar_one())


# The subscription hub tails one organisation's log for all its subscribers, with the
# organisation's id and no caller's context: these two reads are scoped by that id.


async def org_last_sequence(db: Database, org_id: uuid.UUID) -> int:
    """The organisation's newest committed sequence (0: no events yet)."""
    async with db.read() as session:
        found = await session.scalar(select(func.max(Event.sequence)).where(of_org(org_id, Event)))
    return int(found or 0)


async def org_events_after(
    db: Database,
    org_id: uuid.UUID,
    after: int,
    *,
    until: int | None,
    types: frozenset[str] | None,
    subject_id: uuid.UUID | None,
    limit: int,
) -> list[Event]:
    """The organisation's events with ``after < sequence <= until``, oldest first; only those of
    ``types`` and about ``subject_id`` when given (a subscriber's filter, in SQL)."""
    table = table_of(Event)
    stmt = select(Event).where(of_org(org_id, Event), table.c.sequence > after)
    if until is not None:
        stmt = stmt.where(table.c.sequence <= until)
    if types is not None:
        stmt = stmt.where(table.c.type.in_(sorted(types)))
    if subject_id is not None:
        stmt = stmt.where(table.c.subject_id == subject_id)
    async with db.read() as session:
        return list((await session.execute(stmt.order_by(table.c.sequence).limit(limit))).scalars())
