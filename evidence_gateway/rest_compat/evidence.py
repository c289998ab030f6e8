"""/api/v2/evidence-items: create (contract), read one and list (extensions)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.http_body import read_json_object
from evidence_gateway.models import EvidenceItem
from evidence_gateway.resolvers import evidence
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.rest_compat.http import caller, envelope, paginated, pick

EVIDENCE_ITEM_FIELDS = (
    "id",
    "workspace_id",
    "report_pack_id",
    "shipment_id",
    "org_id",
    "evidence_type",
    "title",
    "file_name",
    "file_url",
    "file_sha256",
    "mime_type",
    "issue_date",
    "valid_from",
    "valid_to",
    "source_system",
    "verification_status",
    "attachment_scope",
    "extracted_metadata_json",
    "notes",
    "uploaded_at",
)


def evidence_item_json(item: EvidenceItem) -> dict[str, Any]:
    return pick(item, EVIDENCE_ITEM_FIELDS)


async def create_evidence_item(request: Request) -> Response:
    """POST /v2/evidence-items: 201 with the stored item."""
    ctx = await caller(request)
    body = await read_json_object(request, ctx.settings.max_body_bytes)
    return envelope(evidence_item_json(await evidence.create_evidence_item(ctx, body)), status=201)


async def list_evidence_items(request: Request) -> Response:
    """GET /v2/evidence-items (extension): newest first, optionally one workspace's."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await evidence.list_evidence_items(ctx, params, query.get("workspace_id"))
    return paginated(page, evidence_item_json)


async def get_evidence_item(request: Request) -> Response:
    """GET /v2/evidence-items/{id} (extension)."""
    ctx = await caller(request)
    return envelope(evidence_item_json(await evidence.get_evidence_item(ctx, request.path_params["id"])))


routes = [
    Route("/v2/evidence-items", create_evidence_item, methods=["POST"]),
    Route("/v2/evidence-items", list_evidence_items, methods=["GET"]),
    Route("/v2/evidence-items/{id}", get_evidence_item, methods=["GET"]),
]
