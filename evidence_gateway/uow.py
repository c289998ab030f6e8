"""The one write path (DESIGN.md §12): a transaction, the resolver's changes, their events and the
idempotent answer, committed together or not at all. No resolver commits on its own."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway import events, idempotency
from evidence_gateway.events import EventType, PendingEvent
from evidence_gateway.resolvers.context import Ctx

_NO_RESULT = object()


class UnitOfWork:
    def __init__(self, session: AsyncSession, ctx: Ctx) -> None:
        self.session = session
        self.ctx = ctx
        self.events: list[PendingEvent] = []
        self.sequences: list[int] = []
        self._result: Any = _NO_RESULT

    def emit(
        self,
        type_: EventType,
        subject_type: str,
        subject_id: uuid.UUID,
        data: Mapping[str, Any],
        *,
        workspace_id: uuid.UUID | None = None,
    ) -> None:
        """Append an event of this change; it commits with it."""
        self.events.append(events.pending(type_, subject_type, subject_id, data, workspace_id=workspace_id))

    def respond(self, result: Any) -> None:
        """The request's answer is ``result``: an Idempotency-Key's record stores it with this change."""
        self._result = result

    @property
    def responded(self) -> bool:
        return self._result is not _NO_RESULT


@asynccontextmanager
async def unit_of_work(ctx: Ctx) -> AsyncIterator[UnitOfWork]:
    async with ctx.db.write() as session:
        uow = UnitOfWork(session, ctx)
        yield uow
        # Only reached when the block returned: on an exception the transaction rolls back whole.
        await session.flush()
        uow.sequences = await events.append(session, ctx.org_id, uow.events, actor=ctx.actor, request_id=ctx.request_id)
        if uow.responded and ctx.idempotency is not None:
            await idempotency.complete(session, ctx.idempotency, uow._result)
