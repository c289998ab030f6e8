"""PACT answers owed to recipients' hosts (exchange/outbox.py): queued, claimed, recorded.

As the webhook outbox's (store/repositories/outbox.py), the sender's reads and claims are not
org-scoped: one sender serves every organisation, with no caller; each message names its
organisation and recipient, and is read with that recipient's row (its host and credentials).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Table, bindparam, or_, select, update
from sqlalchemy.exc import IntegrityError

from evidence_gateway.models import DataRecipient, ExchangeMessage
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import DataRecipientRecord

_MESSAGE: Table = table_of(ExchangeMessage)
_RECIPIENT: Table = table_of(DataRecipient)

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"


def _due(now: Any) -> list[Any]:
    return [
        _MESSAGE.c.status == PENDING,
        _MESSAGE.c.next_attempt_at <= now,
        or_(_MESSAGE.c.claimed_until.is_(None), _MESSAGE.c.claimed_until < now),
    ]


_ONE_DUE = select(_MESSAGE.c.id).where(*_due(bindparam("now"))).limit(1)


async def any_due(db: Database, now: datetime) -> bool:
    """Whether a message is due: a read (an idle sender takes no write lock, which SQLite has one of)."""
    return bool(await db.fetch(_ONE_DUE, {"now": now}))


async def enqueue(db: Database, message: ExchangeMessage) -> bool:
    """Queue a message; False when the recipient's request was queued before (one answer each)."""
    try:
        async with db.write() as session:
            session.add(message)
    except IntegrityError:
        return False
    return True


async def claim_due(
    db: Database, owner: str, now: datetime, until: datetime, limit: int
) -> list[tuple[ExchangeMessage, DataRecipientRecord]]:
    """Claim up to ``limit`` due messages for ``owner`` until ``until``, each with its recipient."""
    due = select(_MESSAGE.c.id).where(*_due(now)).order_by(_MESSAGE.c.next_attempt_at).limit(limit)
    due = db.skip_locked(due, of=ExchangeMessage)
    async with db.write() as session:
        ids = list((await session.execute(due)).scalars())
        if not ids:
            return []
        await session.execute(
            update(ExchangeMessage).where(_MESSAGE.c.id.in_(ids)).values(claimed_by=owner, claimed_until=until)
        )
        stmt = (
            select(ExchangeMessage, *_RECIPIENT.c)
            .join(_RECIPIENT, _RECIPIENT.c.id == _MESSAGE.c.recipient_id)
            .where(_MESSAGE.c.id.in_(ids))
        )
        found = (await session.execute(stmt)).all()
    return [(row[0], DataRecipientRecord._make(tuple(row)[1:])) for row in found]


async def record(db: Database, message_id: uuid.UUID, owner: str, **values: Any) -> None:
    """One attempt's outcome on its message, released from ``owner``'s claim (a message another
    node took over meanwhile is left to it)."""
    stmt = (
        update(ExchangeMessage)
        .where(_MESSAGE.c.id == message_id, _MESSAGE.c.claimed_by == owner)
        .values(claimed_by=None, claimed_until=None, **values)
    )
    async with db.write() as session:
        await session.execute(stmt)
