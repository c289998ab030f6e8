"""/api/v2/events (extension): the organisation's event log, oldest first, cursor-paginated."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.read_models import EventPage
from evidence_gateway.resolvers import events
from evidence_gateway.rest_compat.http import JSONResponse, caller, link_header, link_to
from evidence_gateway.rest_compat.list_params import list_filters, list_order


async def list_events(request: Request) -> Response:
    """GET /v2/events?after=&limit=: events after the cursor; ``next_cursor`` continues.
    ``filter[...]`` narrows it and ``sort=-sequence`` reads it newest first (list_params.py;
    without ``sort``: oldest first, as always)."""
    ctx = await caller(request)
    query = request.query_params
    page = await events.list_events(
        ctx, query.get("after"), query.get("limit"), filters=list_filters(query), order=list_order(query)
    )
    links = {"first": link_to(request, after=None)}
    if page.has_more and page.next_cursor is not None:
        links["next"] = link_to(request, after=page.next_cursor)
    return JSONResponse(EventPage.render_page(page), headers={"Link": link_header(links)})


routes = [Route("/v2/events", list_events, methods=["GET"])]
