"""The event log as readers page it (REST /v2/events, webhooks, subscriptions)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from evidence_gateway.core.events import cursor_of
from evidence_gateway.read_models.base import EXTENSION, ReadModel


class Event(ReadModel):
    """Something that happened to the organisation's data (docs/events.md)."""

    # leaf_hash: served by the log's proofs (/api/v2/log/...), not with every event.
    internal = frozenset({"org_id", "leaf_hash"})
    model_config = ConfigDict(json_schema_extra=EXTENSION)
    derived = frozenset({"cursor"})

    id: uuid.UUID
    sequence: int = Field(ge=1)
    type: str = Field(description="resource.past_tense_verb (docs/events.md).")
    occurred_at: datetime
    actor: uuid.UUID | None
    request_id: str | None
    subject_type: str
    subject_id: uuid.UUID
    workspace_id: uuid.UUID | None
    data: dict[str, Any] = Field(description="The resource as REST renders it, plus status_before/status_after.")
    cursor: str = Field(description="Pass as `after` to continue after this event.")

    @classmethod
    def derive(cls, obj: Any) -> dict[str, Any]:
        return {"cursor": cursor_of(obj.sequence)}


class EventPagination(ReadModel):
    """Where the next page starts."""

    next_cursor: str | None
    has_more: bool


class EventPage(ReadModel):
    """Events after a cursor, oldest first, and the cursor to continue from."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    data: list[Event]
    pagination: EventPagination

    @classmethod
    def render_page(cls, page: Any) -> dict[str, Any]:
        return {
            "data": [Event.render(e) for e in page.items],
            "pagination": EventPagination.render(page),
        }
