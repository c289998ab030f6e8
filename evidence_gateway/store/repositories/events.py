"""The event log's reads (its one append is store/event_log.py's, in the unit of work)."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.scoping import owned_by
from evidence_gateway.models import Event
from evidence_gateway.store.record_types import EventRecord
from evidence_gateway.store.repository import Repository


class EventRepository(Repository[Event, EventRecord]):
    model = Event
    record = EventRecord
    kind = "event"
    time_column = "occurred_at"

    async def after(self, after_sequence: int, limit: int) -> list[Event]:
        """The caller's events after ``after_sequence``, oldest first, at most ``limit``."""
        table = self.table
        stmt = (
            self.get_readable_statement()
            .where(table.c.sequence > after_sequence)
            .order_by(table.c.sequence)
            .limit(limit)
        )
        async with self.ctx.db.read() as session:
            return list((await session.execute(stmt)).scalars())

    async def entity(self, event_id: uuid.UUID) -> Event | None:
        """The caller's event as an entity (node(id) renders it as the scope may see it)."""
        stmt = self.get_readable_statement().where(self.table.c.id == event_id)
        async with self.ctx.db.read() as session:
            found: Event | None = (await session.execute(stmt)).scalar_one_or_none()
        return found

    async def last_sequence(self, session: AsyncSession) -> int:
        """The caller's highest committed sequence, 0 before its first event (the audit trail's end)."""
        table = self.table
        stmt = select(func.coalesce(func.max(table.c.sequence), 0)).where(owned_by(self.ctx, table))
        return int((await session.execute(stmt)).scalar_one())
