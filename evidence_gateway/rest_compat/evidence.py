"""/api/v2/evidence-items: create (contract), read one and list (extensions)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.core.context import Ctx
from evidence_gateway.models import EvidenceItem
from evidence_gateway.read_models import EvidenceItem as EvidenceItemOut
from evidence_gateway.resolvers import evidence
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.rest_compat.http import caller, envelope, paginated
from evidence_gateway.rest_compat.list_params import list_filters, list_order
from evidence_gateway.rest_compat.writes import location, write


async def create_evidence_item(request: Request) -> Response:
    """POST /v2/evidence-items: 201 with the stored item and its Location."""

    def render(item: EvidenceItem, ctx: Ctx) -> Response:
        headers = {"Location": location(ctx, f"/v2/evidence-items/{item.id}")}
        return envelope(EvidenceItemOut.render(item), status=201, headers=headers)

    return await write(request, evidence.create_evidence_item, render)


async def list_evidence_items(request: Request) -> Response:
    """GET /v2/evidence-items (extension): newest first, optionally one workspace's; ``filter[...]``
    and ``sort`` (list_params.py)."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await evidence.list_evidence_items(
        ctx, params, query.get("workspace_id"), list_filters(query), list_order(query)
    )
    return paginated(page, EvidenceItemOut.render, request=request)


async def get_evidence_item(request: Request) -> Response:
    """GET /v2/evidence-items/{id} (extension)."""
    ctx = await caller(request)
    return envelope(EvidenceItemOut.render(await evidence.get_evidence_item(ctx, request.path_params["id"])))


routes = [
    Route("/v2/evidence-items", create_evidence_item, methods=["POST"]),
    Route("/v2/evidence-items", list_evidence_items, methods=["GET"]),
    Route("/v2/evidence-items/{id}", get_evidence_item, methods=["GET"]),
]
