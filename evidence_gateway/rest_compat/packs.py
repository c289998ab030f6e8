"""/api/v2 packs, artifacts, approvals and downloads: parse -> resolver -> envelope."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import Forbidden
from evidence_gateway.packs.download import SignedLink
from evidence_gateway.read_models import (
    ApprovalAction,
    ApprovalActionResult,
    PackArtifact,
    ReportPack,
    ReportPackDetail,
    listed_artifacts,
)
from evidence_gateway.resolvers import approvals, pack_reads, packs
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.resolvers.preconditions import etag
from evidence_gateway.rest_compat.http import caller, envelope, etag_matches, not_modified, paginated
from evidence_gateway.rest_compat.list_params import list_filters, list_order
from evidence_gateway.rest_compat.writes import location, write
from evidence_gateway.web.ratelimit.middleware import refuse_credential
from evidence_gateway.web.request_id import request_id_of


async def generate_pack(request: Request) -> Response:
    """POST /v2/workspaces/{id}/packs: 201 with the new version; meta says what it was built from.

    With ``Prefer: respond-async``: 202, the version allocated and queued, its Location to follow.
    """

    def render(result: packs.GeneratedPack | packs.QueuedPack, ctx: Ctx) -> Response:
        headers = {"Location": location(ctx, f"/v2/packs/{result.pack.id}"), "ETag": etag(result.pack)}
        body = ReportPack.render_linked(result.pack, result.artifacts, ctx.settings)
        if isinstance(result, packs.QueuedPack):
            return envelope(body, status=202, headers={**headers, "Preference-Applied": "respond-async"})
        return envelope(body, status=201, meta=result.meta, headers=headers)

    workspace_id = request.path_params["id"]
    return await write(
        request, lambda ctx, body: packs.generate_pack(ctx, workspace_id, body), render, body_required=False
    )


async def list_packs(request: Request) -> Response:
    """GET /v2/packs (extension): every pack of the organisation, newest first; ``filter[...]`` and
    ``sort`` (list_params.py): ``filter[status]=in_review`` are the packs awaiting approval."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await pack_reads.list_packs(ctx, params, list_filters(query), list_order(query))

    def render(item: pack_reads.ListedPack) -> dict[str, Any]:
        return ReportPack.render_linked(item.pack, item.artifacts, ctx.settings)

    return paginated(page, render, request=request)


async def get_pack(request: Request) -> Response:
    """GET /v2/packs/{id}: pack + calculation_run, quality_assessment, artifacts; ETag for If-Match,
    304 for an If-None-Match naming it."""
    ctx = await caller(request)
    detail = await pack_reads.get_pack_detail(ctx, request.path_params["id"])
    tag = etag(detail.pack)
    return not_modified(request, tag) or envelope(
        ReportPackDetail.render_detail(detail, ctx.settings), headers={"ETag": tag}
    )


async def list_artifacts(request: Request) -> Response:
    """GET /v2/packs/{id}/artifacts: the contract's eight types, each with a fresh signed download URL
    (the iLEAP file is the pack's ``ileap_shipment_footprints_url``)."""
    ctx = await caller(request)
    artifacts = await pack_reads.list_artifacts(ctx, request.path_params["id"])
    return envelope([PackArtifact.render_linked(a, ctx.settings) for a in listed_artifacts(artifacts)])


async def record_approval(request: Request) -> Response:
    """POST /v2/packs/{id}/approvals: 201 {reportPackId, workspaceId, statusBefore, statusAfter}."""

    def render(result: approvals.ApprovalResult, ctx: Ctx) -> Response:
        return envelope(
            ApprovalActionResult.render(result),
            status=201,
            headers={"Location": location(ctx, f"/v2/approvals/{result.action.id}")},
        )

    pack_id = request.path_params["id"]
    return await write(request, lambda ctx, body: approvals.record_approval(ctx, pack_id, body), render)


async def get_approval(request: Request) -> Response:
    """GET /v2/approvals/{id} (extension): one recorded approval action."""
    ctx = await caller(request)
    return envelope(ApprovalAction.render(await approvals.get_approval(ctx, request.path_params["id"])))


async def download_caller(request: Request) -> Ctx | SignedLink:
    """A valid signature needs no key; signature parameters, when present, decide (a wrong one is
    403 even with a key). Without them, the Bearer key."""
    query = request.query_params
    if "signature" not in query and "expires" not in query:
        return await caller(request)
    state = request.app.state
    try:
        return SignedLink.verify(
            state.db,
            state.settings,
            request.method,
            request.path_params["id"],
            query.get("expires"),
            query.get("signature"),
            request_id_of(request.scope),
        )
    except Forbidden:
        refuse_credential(request.scope)  # counted against the address like a wrong key
        raise


async def download_artifact(request: Request) -> Response:
    """GET /v2/artifacts/{id}/download: the bytes, over a signed link or with the Bearer key."""
    download = await pack_reads.open_download(await download_caller(request), request.path_params["id"])
    artifact = download.artifact
    etag = f'"{artifact.content_sha256}"'
    # Cache-Control: no-store and nosniff come with every credentialed answer (response_headers.py).
    headers = {"ETag": etag}
    if etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    headers["Content-Disposition"] = f'attachment; filename="{artifact.file_name}"'
    media_type = artifact.content_type or "application/octet-stream"
    if download.small:
        return Response(await download.whole(), media_type=media_type, headers=headers)
    # Large files stream from the database a slice at a time: memory stays flat.
    headers["Content-Length"] = str(artifact.size_bytes)
    return StreamingResponse(download.slices(), media_type=media_type, headers=headers)


routes = [
    Route("/v2/workspaces/{id}/packs", generate_pack, methods=["POST"]),
    Route("/v2/packs", list_packs, methods=["GET"]),
    Route("/v2/packs/{id}", get_pack, methods=["GET"]),
    Route("/v2/packs/{id}/artifacts", list_artifacts, methods=["GET"]),
    Route("/v2/packs/{id}/approvals", record_approval, methods=["POST"]),
    Route("/v2/approvals/{id}", get_approval, methods=["GET"]),
    Route("/v2/artifacts/{id}/download", download_artifact, methods=["GET"]),
]
