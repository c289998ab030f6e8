"""/api/v2/workspaces and imports: parse -> resolver -> envelope."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.http_body import read_json_object
from evidence_gateway.resolvers import imports, workspaces
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.rest_compat.http import caller, envelope, paginated
from evidence_gateway.rest_compat.serializers import import_batch_json, workspace_detail_json, workspace_json


async def list_workspaces(request: Request) -> Response:
    """GET /v2/workspaces: the caller's workspaces, newest first."""
    ctx = await caller(request)
    params = page_params(request.query_params.get("page"), request.query_params.get("per_page"))
    return paginated(await workspaces.list_workspaces(ctx, params), workspace_json)


async def create_workspace(request: Request) -> Response:
    """POST /v2/workspaces: 201 with the new draft workspace."""
    ctx = await caller(request)
    body = await read_json_object(request, ctx.settings.max_body_bytes)
    return envelope(workspace_json(await workspaces.create_workspace(ctx, body)), status=201)


async def get_workspace(request: Request) -> Response:
    """GET /v2/workspaces/{id}: detail with the latest run, pack and assessment."""
    ctx = await caller(request)
    detail = await workspaces.get_workspace_detail(ctx, request.path_params["id"])
    return envelope(workspace_detail_json(detail, ctx.settings))


async def register_import(request: Request) -> Response:
    """POST /v2/workspaces/{id}/imports: imports carry rows, so their body limit is larger."""
    ctx = await caller(request)
    body = await read_json_object(request, ctx.settings.max_import_bytes)
    batch = await imports.register_import(ctx, request.path_params["id"], body)
    return envelope(import_batch_json(batch), status=201)


routes = [
    Route("/v2/workspaces", list_workspaces, methods=["GET"]),
    Route("/v2/workspaces", create_workspace, methods=["POST"]),
    Route("/v2/workspaces/{id}", get_workspace, methods=["GET"]),
    Route("/v2/workspaces/{id}/imports", register_import, methods=["POST"]),
]
