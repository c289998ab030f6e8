"""/api/v2/workspaces and imports: parse -> resolver -> envelope."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.core.context import Ctx
from evidence_gateway.models import ImportBatch, Workspace
from evidence_gateway.read_models import ImportBatch as ImportBatchOut
from evidence_gateway.read_models import Workspace as WorkspaceOut
from evidence_gateway.read_models import WorkspaceDetail
from evidence_gateway.resolvers import imports, workspace_detail, workspaces
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.resolvers.preconditions import etag
from evidence_gateway.rest_compat.http import caller, envelope, not_modified, paginated
from evidence_gateway.rest_compat.list_params import list_filters, list_order
from evidence_gateway.rest_compat.writes import location, write


async def list_workspaces(request: Request) -> Response:
    """GET /v2/workspaces: the caller's workspaces, newest first (``filter[...]`` and ``sort``:
    extensions, list_params.py)."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await workspaces.list_workspaces(ctx, params, list_filters(query), list_order(query))
    return paginated(page, WorkspaceOut.render, request=request)


async def create_workspace(request: Request) -> Response:
    """POST /v2/workspaces: 201 with the new draft workspace, its Location and ETag."""

    def render(workspace: Workspace, ctx: Ctx) -> Response:
        headers = {"Location": location(ctx, f"/v2/workspaces/{workspace.id}"), "ETag": etag(workspace)}
        return envelope(WorkspaceOut.render(workspace), status=201, headers=headers)

    return await write(request, workspaces.create_workspace, render)


async def get_workspace(request: Request) -> Response:
    """GET /v2/workspaces/{id}: detail with the latest run, pack and assessment; ETag for If-Match,
    304 for an If-None-Match naming it."""
    ctx = await caller(request)
    detail = await workspace_detail.get_workspace_detail(ctx, request.path_params["id"])
    tag = etag(detail.workspace)
    return not_modified(request, tag) or envelope(
        WorkspaceDetail.render_detail(detail, ctx.settings), headers={"ETag": tag}
    )


async def register_import(request: Request) -> Response:
    """POST /v2/workspaces/{id}/imports: imports carry rows, so their body limit is larger."""

    def render(batch: ImportBatch, ctx: Ctx) -> Response:
        return envelope(
            ImportBatchOut.render(batch), status=201, headers={"Location": location(ctx, f"/v2/imports/{batch.id}")}
        )

    workspace_id = request.path_params["id"]
    return await write(
        request, lambda ctx, body: imports.register_import(ctx, workspace_id, body), render, import_body=True
    )


async def get_import(request: Request) -> Response:
    """GET /v2/imports/{id} (extension): one registered import batch."""
    ctx = await caller(request)
    return envelope(ImportBatchOut.render(await imports.get_import(ctx, request.path_params["id"])))


routes = [
    Route("/v2/workspaces", list_workspaces, methods=["GET"]),
    Route("/v2/workspaces", create_workspace, methods=["POST"]),
    Route("/v2/workspaces/{id}", get_workspace, methods=["GET"]),
    Route("/v2/workspaces/{id}/imports", register_import, methods=["POST"]),
    Route("/v2/imports/{id}", get_import, methods=["GET"]),
]
