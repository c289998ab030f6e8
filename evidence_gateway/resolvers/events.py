"""Reading the event log: the caller's organisation only, oldest first, by an opaque cursor, each
event as the caller's scope may see it (``as_seen_by``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from evidence_gateway.auth import Scope
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import cursor_of, sequence_of
from evidence_gateway.errors import InvalidInput
from evidence_gateway.models import Event
from evidence_gateway.models.base import table_of
from evidence_gateway.resolvers.list_queries import EVENTS, Direction, parse_list_query
from evidence_gateway.resolvers.validation import parse
from evidence_gateway.store.repositories.events import EventRepository

# What only an admin key reads in an event's data, by subject type: a webhook endpoint's URL is
# often a bearer capability (a token in its path or query), and endpoints are admin business.
ADMIN_ONLY_DATA: dict[str, tuple[str, ...]] = {"webhook_endpoint": ("url",)}

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


def as_seen_by(ctx: Ctx, event: Event) -> Event:
    """The event as the caller may see it: for a key below ``admin``, the admin-only values of its
    data are null. Decided when it is read, by the reader's scope; the stored event keeps them.
    The event itself when nothing is hidden, else a copy."""
    hidden = ADMIN_ONLY_DATA.get(event.subject_type)
    if hidden is None or ctx.principal.scope.allows(Scope.ADMIN):
        return event
    data = event.data
    if not any(data.get(name) is not None for name in hidden):
        return event
    values = {key: getattr(event, key) for key in table_of(Event).c.keys()}
    values["data"] = {**data, **dict.fromkeys(hidden)}
    return Event(**values)  # never added to a session: a copy to render, not a change


@dataclass(frozen=True, slots=True)
class EventPage:
    items: list[Event]
    # Where to continue: the cursor of the last event returned (or the one given, if none).
    next_cursor: str | None
    has_more: bool


class _PageInput(BaseModel):
    # Lax on purpose: query strings arrive as text ("20").
    model_config = ConfigDict(extra="ignore", frozen=True)

    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT


async def list_events(
    ctx: Ctx,
    after: str | None = None,
    limit: Any = None,
    *,
    limit_field: str = "limit",
    filters: Any = None,
    order: Any = None,
) -> EventPage:
    """Events after the cursor, oldest first (``order`` sequence DESC: newest first, the cursor
    then continuing below its position), at most ``limit`` of them, narrowed by ``filters``
    (list_queries.EVENTS; the cursor stays the log position, so a filtered tail continues)."""
    query = parse_list_query(EVENTS, filters, order)
    newest_first = query.ordering is not None and query.ordering.direction is Direction.desc
    try:
        count = parse(_PageInput, {} if limit is None else {"limit": limit}).limit
    except InvalidInput as exc:
        raise InvalidInput(fields={limit_field: exc.fields.get("limit", "invalid")}) from None
    after_sequence = sequence_of(after)
    start = None if newest_first and not after else after_sequence
    rows = await EventRepository(ctx).after(start, count + 1, query, newest_first=newest_first)
    items = [as_seen_by(ctx, e) for e in rows[:count]]
    next_cursor = cursor_of(items[-1].sequence) if items else (after or None)
    return EventPage(items=items, next_cursor=next_cursor, has_more=len(rows) > count)
