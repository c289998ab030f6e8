"""/api/v2/events (extension): the organisation's event log, oldest first, cursor-paginated."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.models import Event
from evidence_gateway.resolvers import events
from evidence_gateway.rest_compat.http import JSONResponse, caller

EVENT_FIELDS = (
    "id",
    "sequence",
    "type",
    "occurred_at",
    "actor",
    "request_id",
    "subject_type",
    "subject_id",
    "workspace_id",
    "data",
)


def event_json(event: Event) -> dict[str, Any]:
    return {**{f: getattr(event, f) for f in EVENT_FIELDS}, "cursor": events.cursor_of(event.sequence)}


async def list_events(request: Request) -> Response:
    """GET /v2/events?after=&limit=: events after the cursor; ``next_cursor`` continues."""
    ctx = await caller(request)
    query = request.query_params
    page = await events.list_events(ctx, query.get("after"), query.get("limit"))
    return JSONResponse(
        {
            "data": [event_json(e) for e in page.items],
            "pagination": {"next_cursor": page.next_cursor, "has_more": page.has_more},
        }
    )


routes = [Route("/v2/events", list_events, methods=["GET"])]
