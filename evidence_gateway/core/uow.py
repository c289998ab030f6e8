"""The one write path (DESIGN.md §12): a transaction, the resolver's changes, their events and the
idempotent answer, committed together or not at all. No resolver commits on its own."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.auth import Scope
from evidence_gateway.core import events, idempotency, wakeups
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType, PendingEvent
from evidence_gateway.models.base import table_of
from evidence_gateway.store import event_log
from evidence_gateway.store.db import has_run_anything
from evidence_gateway.store.records import new_record
from evidence_gateway.web.observability import metrics

_NO_RESULT = object()


class UnitOfWork:
    def __init__(self, session: AsyncSession, ctx: Ctx) -> None:
        self.session = session
        self.ctx = ctx
        self.events: list[PendingEvent] = []
        self._result: Any = _NO_RESULT
        self._new_row: event_log.NewRow | None = None

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

    def insert(self, model: Any, **values: Any) -> Any:
        """The change's one new row of ``model``, without an ORM entity: returned as a record (read
        by attribute like the entity) and written with the change's events (see event_log.append).
        Creates are the hottest writes, and the entity was a tenth of one's CPU."""
        if self._new_row is not None:
            raise RuntimeError("a unit of work inserts at most one row this way")
        record = new_record(model, values)
        self._new_row = event_log.new_row(self.ctx.db, table_of(model), record)
        return record

    def respond(self, result: Any, *, shown_once: tuple[str, ...] = ()) -> None:
        """The request's answer is ``result``: an Idempotency-Key's record stores it with this change.

        ``shown_once``: secrets the answer shows for the only time (a new webhook endpoint's or API
        key): the stored answer has them replaced by null, so a replay never shows them again.
        """
        self._result = result
        if shown_once and self.ctx.idempotency is not None:
            self.ctx.idempotency.shown_once.update(shown_once)

    @property
    def responded(self) -> bool:
        return self._result is not _NO_RESULT


@asynccontextmanager
async def unit_of_work(ctx: Ctx) -> AsyncIterator[UnitOfWork]:
    # Every change passes here, so a read-only key is refused here, once, before anything runs.
    ctx.require(Scope.WRITE)
    queued: asyncio.Future[None] | None = None
    uow: UnitOfWork | None = None
    try:
        async with ctx.db.write() as session:
            uow = UnitOfWork(session, ctx)
            yield uow
            # Only reached when the block returned: on an exception the transaction rolls back whole.
            # The resolver's rows go first: on PostgreSQL the event counter's row lock is then held
            # only for the append and the commit (it orders every writer of the organisation).
            inserted = uow._new_row
            new_row = inserted if inserted is not None else event_log.single_new_row(session)
            idempotent = uow.responded and ctx.idempotency is not None
            # PostgreSQL, nothing read or written yet: the row and its events are the whole change.
            alone = (
                new_row is not None
                and bool(uow.events)
                and not idempotent
                and event_log.appends_alone(ctx.db)
                and not has_run_anything(session)
                and not _pending(session)
            )
            if alone:
                assert new_row is not None
                await event_log.append_alone(
                    ctx.db, ctx.org_id, uow.events, new_row, actor=ctx.actor, request_id=ctx.request_id
                )
            if not alone:
                if new_row is None or inserted is not None:
                    await session.flush()  # the entities' changes (none: nothing is sent)
                if idempotent:
                    assert ctx.idempotency is not None
                    await idempotency.complete(session, ctx.idempotency, uow._result)
                queued = await event_log.append(
                    session,
                    ctx.db,
                    ctx.org_id,
                    uow.events,
                    actor=ctx.actor,
                    request_id=ctx.request_id,
                    new_row=new_row,
                )
    except BaseException:
        if queued is not None:
            # The commit failed after the events were queued: their outcome no longer matters.
            queued.add_done_callback(lambda f: f.cancelled() or f.exception())
        raise
    if queued is not None:
        # SQLite: the events ran just before the commit, in the driver's thread; a failure there
        # rolled everything back and is raised here.
        await queued
    if uow is not None and uow.events:
        # Committed: this node's dispatcher and subscribers look now (other nodes: pg_notify).
        wakeups.published(ctx.org_id)
        metrics.events_appended(e.type.value for e in uow.events)


def _pending(session: AsyncSession) -> bool:
    sync = session.sync_session
    return bool(sync.new or sync.dirty or sync.deleted)
