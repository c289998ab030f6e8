"""The webhook outbox (webhooks/dispatcher.py, webhooks/delivery.py): endpoints behind the log,
messages due, their claims, and the attempts' bookkeeping on messages and endpoints.

The dispatcher's reads and claims are not org-scoped: one dispatcher serves every
organisation, with no caller; each message and endpoint it takes names its organisation, and
an attempt is recorded in that organisation's unit of work. Statements there take the
organisation's id where they touch its rows (``locked_messages``).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, func, literal, or_, select, union_all, update
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.models import Event, MessageStatus, WebhookEndpoint, WebhookMessage
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database

_EVENT = table_of(Event)
_ENDPOINT = table_of(WebhookEndpoint)
_MESSAGE = table_of(WebhookMessage)


# A message owed to an enabled endpoint (the webhook backlog, store/repositories/backlog.py).
OWED: tuple[ColumnElement[bool], ...] = (_MESSAGE.c.status == MessageStatus.pending.value, _ENDPOINT.c.enabled)


def _due(now: Any) -> list[Any]:
    """A message that is owed, due by ``now``, claimed by no live node, to an enabled endpoint."""
    return [
        *OWED,
        _MESSAGE.c.next_attempt_at <= now,
        or_(_MESSAGE.c.claimed_until.is_(None), _MESSAGE.c.claimed_until < now),
    ]


# What every round looks at first, woken by every commit with events: which enabled endpoints are
# behind the log, and whether any message is due. One statement, built once, read as rows (on
# SQLite through the reader thread, off the write path's connection): a round costs one read.
_HEAD = select(func.max(_EVENT.c.sequence)).where(_EVENT.c.org_id == _ENDPOINT.c.org_id).scalar_subquery()
_BEHIND: Select[Any] = select(literal("behind").label("kind"), _ENDPOINT.c.id.label("id")).where(
    _ENDPOINT.c.enabled, _ENDPOINT.c.event_cursor < _HEAD
)
_ONE_DUE = (
    select(_MESSAGE.c.id)
    .join(_ENDPOINT, _ENDPOINT.c.id == _MESSAGE.c.endpoint_id)
    .where(*_due(bindparam("now")))
    .limit(1)
    .subquery()  # SQLite takes a LIMIT inside a compound select only in a subquery
)
_LOOK = union_all(_BEHIND, select(literal("due"), _ONE_DUE.c.id))


async def behind_and_due(db: Database, now: datetime) -> tuple[list[uuid.UUID], bool]:
    """The enabled endpoints behind their organisation's log, and whether any message is due."""
    looked = await db.fetch(_LOOK, {"now": now})
    return [row.id for row in looked if row.kind == "behind"], any(row.kind == "due" for row in looked)


async def lock_endpoint(db: Database, session: AsyncSession, endpoint_id: uuid.UUID) -> WebhookEndpoint | None:
    """The enabled endpoint, locked for its fan-out (None too when another node is on it)."""
    stmt = select(WebhookEndpoint).where(_ENDPOINT.c.id == endpoint_id, _ENDPOINT.c.enabled)
    stmt = db.skip_locked(stmt)
    found = await session.execute(stmt.execution_options(populate_existing=True))
    endpoint: WebhookEndpoint | None = found.scalar_one_or_none()
    return endpoint


async def events_after(session: AsyncSession, org_id: uuid.UUID, cursor: int, limit: int) -> list[Event]:
    """The organisation's events after an endpoint's cursor, oldest first."""
    stmt = (
        select(Event)
        .where(_EVENT.c.org_id == org_id, _EVENT.c.sequence > cursor)
        .order_by(_EVENT.c.sequence)
        .limit(limit)
    )
    return list((await session.execute(stmt)).scalars())


async def claim_due(db: Database, owner: str, now: datetime, until: datetime, limit: int) -> list[uuid.UUID]:
    """Claim up to ``limit`` due messages, soonest due first, for ``owner`` until ``until``."""
    due = (
        select(_MESSAGE.c.id)
        .join(_ENDPOINT, _ENDPOINT.c.id == _MESSAGE.c.endpoint_id)
        .where(*_due(now))
        .order_by(_MESSAGE.c.next_attempt_at)
        .limit(limit)
    )
    due = db.skip_locked(due, of=WebhookMessage)
    async with db.write() as session:
        ids = list((await session.execute(due)).scalars())
        if ids:
            await session.execute(
                update(WebhookMessage).where(_MESSAGE.c.id.in_(ids)).values(claimed_by=owner, claimed_until=until)
            )
    return ids


async def jobs(db: Database, message_ids: list[uuid.UUID]) -> list[tuple[WebhookMessage, WebhookEndpoint, Event]]:
    """The messages with their endpoints and events, in one query (gone ones are left out)."""
    if not message_ids:
        return []
    stmt = (
        select(WebhookMessage, WebhookEndpoint, Event)
        .join(WebhookEndpoint, _ENDPOINT.c.id == _MESSAGE.c.endpoint_id)
        .join(Event, _EVENT.c.id == _MESSAGE.c.event_id)
        .where(_MESSAGE.c.id.in_(message_ids))
    )
    async with db.read() as session:
        return [(message, endpoint, event) for message, endpoint, event in (await session.execute(stmt)).all()]


async def locked_messages(
    session: AsyncSession, org_id: uuid.UUID, message_ids: list[uuid.UUID]
) -> dict[uuid.UUID, WebhookMessage]:
    """The organisation's messages among ``message_ids``, locked (a concurrent delete of their
    endpoint, cascading to them, waits) and read as stored now."""
    stmt = (
        select(WebhookMessage)
        .where(_MESSAGE.c.id.in_(message_ids), _MESSAGE.c.org_id == org_id)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    return {m.id: m for m in (await session.execute(stmt)).scalars()}


async def mark_healthy(session: AsyncSession, endpoint_id: uuid.UUID) -> None:
    await session.execute(update(WebhookEndpoint).where(_ENDPOINT.c.id == endpoint_id).values(failing_since=None))


async def mark_failing(session: AsyncSession, endpoint_id: uuid.UUID, now: datetime) -> None:
    """The endpoint fails from ``now`` on, unless it was failing already."""
    stmt = update(WebhookEndpoint).where(_ENDPOINT.c.id == endpoint_id, _ENDPOINT.c.failing_since.is_(None))
    await session.execute(stmt.values(failing_since=now))


async def lock_failing_since(session: AsyncSession, endpoint_id: uuid.UUID, cutoff: datetime) -> WebhookEndpoint | None:
    """The endpoint, locked, if it is still enabled and has failed since before ``cutoff``."""
    stmt = (
        select(WebhookEndpoint)
        .where(_ENDPOINT.c.id == endpoint_id, _ENDPOINT.c.enabled, _ENDPOINT.c.failing_since < cutoff)
        .with_for_update()
        .execution_options(populate_existing=True)
    )
    endpoint: WebhookEndpoint | None = (await session.execute(stmt)).scalar_one_or_none()
    return endpoint
