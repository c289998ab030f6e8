"""GraphQL over the event log: the caller's organisation's events, oldest first, by cursor."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from evidence_gateway.core.events import EventType as EventKind
from evidence_gateway.core.events import cursor_of
from evidence_gateway.core.timeutil import as_aware
from evidence_gateway.models import Event
from evidence_gateway.resolvers import connections, events
from evidence_gateway.resolvers.events import DEFAULT_LIMIT as EVENTS_DEFAULT_LIMIT
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.list_inputs import FILTER_HELP, ORDER_HELP, EventFilter, EventOrder, filters_of, order_of
from evidence_gateway.schema.outputs import EventData, event_data, json_deprecation
from evidence_gateway.schema.relay import After, Before, Connection, First, Last, Node, connection, deprecated_for

GqlInfo = Info[GraphQLContext, None]


@strawberry.type(name="Event", description="Something that happened to the organisation's data (docs/events.md).")
class EventType(Node):
    id: uuid.UUID = strawberry.field(description="Event id (the webhook-id of its deliveries).")
    sequence: int = strawberry.field(description="Position in the organisation's log: strictly increasing, no gaps.")
    cursor: str = strawberry.field(description="Opaque cursor of this event: pass as `after` to continue from it.")
    type: str = strawberry.field(description="resource.past_tense_verb, e.g. workspace.created.")
    occurred_at: datetime = strawberry.field(description="When the change committed.")
    actor: uuid.UUID | None = strawberry.field(description="API key that caused it (null: command line, sweeper).")
    request_id: str | None = strawberry.field(description="X-Request-ID of the request that caused it.")
    subject_type: str = strawberry.field(description="Kind of resource the event is about.")
    subject_id: uuid.UUID = strawberry.field(description="Id of that resource.")
    workspace_id: uuid.UUID | None = strawberry.field(description="Workspace the resource belongs to, if any.")
    data: JSON = strawberry.field(
        description="The resource as REST renders it, plus status_before/status_after.",
        deprecation_reason=json_deprecation("detail"),
    )
    # True when admin-only values of ``data`` are hidden from this reader (resolvers/events.py):
    # results shared between subscribers are kept per view (schema/subscriptions.py).
    redacted: strawberry.Private[bool] = False

    @strawberry.field(description="The event's type, typed.")
    def kind(self) -> EventKind:
        return EventKind(self.type)

    @strawberry.field(description="The typed part of data: the resource's id, its status move, reason and error.")
    def detail(self) -> EventData:
        return event_data(self.type, self.data)


@strawberry.type(description="A slice of the event log.")
class EventPage:
    items: list[EventType] = strawberry.field(description="Events after the cursor, oldest first.")
    next_cursor: str | None = strawberry.field(description="Pass as `after` to read on (also when items is empty).")
    has_more: bool = strawberry.field(description="More events follow right now.")


def event_type(event: Event, *, redacted: bool = False) -> EventType:
    return EventType(
        id=event.id,
        sequence=event.sequence,
        cursor=cursor_of(event.sequence),
        type=event.type,
        occurred_at=as_aware(event.occurred_at),
        actor=event.actor,
        request_id=event.request_id,
        subject_type=event.subject_type,
        subject_id=event.subject_id,
        workspace_id=event.workspace_id,
        data=JSON(event.data),
        redacted=redacted,
    )


@strawberry.type
class Query:
    @strawberry.field(
        description="The organisation's event log, oldest first (or in orderBy's order), narrowed by filter, as a "
        "connection (edge cursors are their own; Event.cursor continues the events field and subscriptions)."
    )
    async def events_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[EventFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[EventOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[EventType]:
        found = await connections.events(
            info.context.ctx,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, event_type)

    @strawberry.field(
        description="The organisation's event log after a cursor, oldest first (at most 200).",
        deprecation_reason=deprecated_for("eventsConnection"),
    )
    async def events(
        self,
        info: GqlInfo,
        after: Annotated[str | None, strawberry.argument(description="Cursor of the last event already seen.")] = None,
        first: Annotated[int, strawberry.argument(description="How many events, 1 to 200.")] = EVENTS_DEFAULT_LIMIT,
    ) -> EventPage:
        page = await events.list_events(info.context.ctx, after, first, limit_field="first")
        return EventPage(
            items=[event_type(e) for e in page.items], next_cursor=page.next_cursor, has_more=page.has_more
        )


@strawberry.type
class Mutation:
    """The log is written by the other mutations, never directly."""
