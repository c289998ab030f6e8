"""The delivery log's attempts with their message's state now: an operator reading an attempt
that failed wants to know whether the event is still owed and when it is tried next, without
a second lookup."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned, rows, table_of
from evidence_gateway.models import MessageStatus, WebhookMessage
from evidence_gateway.resolvers.pagination import Page

_MESSAGES = table_of(WebhookMessage)
# The messages of one page of attempts, built once; one statement per page, none without messages.
_STATES = select(_MESSAGES.c.id, _MESSAGES.c.status, _MESSAGES.c.next_attempt_at).where(
    owned(WebhookMessage), _MESSAGES.c.id.in_(bindparam("message_ids", expanding=True))
)


@dataclass(frozen=True, slots=True)
class LoggedAttempt:
    """A recorded attempt, read as it is, plus its message's state as of this read (None for a
    test to a bare URL, or once the endpoint and its messages are deleted)."""

    # Not "attempt": that is the attempt's number, read through __getattr__ like every column.
    record: Any
    message_status: str | None
    next_attempt_at: datetime | None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.record, name)


async def attempts_of(ctx: Ctx, found: Sequence[Any]) -> list[LoggedAttempt]:
    """Recorded attempts with the state of their message (one statement for them all)."""
    ids = sorted({item.message_id for item in found if item.message_id is not None}, key=str)
    states: dict[uuid.UUID, tuple[str, datetime | None]] = {}
    if ids:
        for row in await rows(ctx, _STATES, message_ids=ids):
            # Only an owed message has a next attempt; delivered and failed ones are done.
            due = row.next_attempt_at if row.status == MessageStatus.pending.value else None
            states[row.id] = (row.status, due)
    return [LoggedAttempt(item, *states.get(item.message_id, (None, None))) for item in found]


async def with_message_state(ctx: Ctx, page: Page[Any]) -> Page[LoggedAttempt]:
    items = await attempts_of(ctx, page.items)
    return Page(items=items, page=page.page, per_page=page.per_page, total=page.total)
