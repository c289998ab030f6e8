"""The delivery log's attempts with their message's state now: an operator reading an attempt
that failed wants to know whether the event is still owed and when it is tried next, without
a second lookup."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from evidence_gateway.core.context import Ctx
from evidence_gateway.models import MessageStatus
from evidence_gateway.resolvers.pagination import Page
from evidence_gateway.store.repositories.webhooks import WebhookMessageStates


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
    for message_id, (status, next_attempt_at) in (await WebhookMessageStates(ctx).of(ids)).items():
        # Only an owed message has a next attempt; delivered and failed ones are done.
        states[message_id] = (status, next_attempt_at if status == MessageStatus.pending.value else None)
    return [LoggedAttempt(item, *states.get(item.message_id, (None, None))) for item in found]


async def with_message_state(ctx: Ctx, page: Page[Any]) -> Page[LoggedAttempt]:
    items = await attempts_of(ctx, page.items)
    return Page(items=items, page=page.page, per_page=page.per_page, total=page.total)
