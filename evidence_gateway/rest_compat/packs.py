"""/api/v2 packs, artifacts, approvals and downloads: parse -> resolver -> envelope; serializers."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from evidence_gateway import signing
from evidence_gateway.http_body import read_json_object
from evidence_gateway.models import ArtifactStatus, ArtifactType, PackArtifact, ReportPack
from evidence_gateway.resolvers import approvals, packs
from evidence_gateway.resolvers.packs import CONTENT_CHUNK, PackDetail
from evidence_gateway.rest_compat.calculations import assessment_json, run_json
from evidence_gateway.rest_compat.http import caller, envelope, pick
from evidence_gateway.settings import Settings

PACK_FIELDS = (
    "id",
    "workspace_id",
    "org_id",
    "legacy_report_id",
    "version_number",
    "title",
    "audience_label",
    "status",
    "methodology_profile_id",
    "calculation_run_id",
    "data_quality_assessment_id",
    "export_template_id",
    "pack_hash",
    "rerun_hash",
)
PACK_TIME_FIELDS = ("created_at", "approved_at", "published_at")
# Extension: the version this one replaced when it was generated.
PACK_EXTENSION_FIELDS = ("superseded_pack_id",)
URL_FIELDS = tuple(f"{t.value}_url" for t in ArtifactType)
ARTIFACT_FIELDS = (
    "id",
    "report_pack_id",
    "workspace_id",
    "artifact_type",
    "status",
    "file_name",
    "content_type",
    "created_at",
    "generated_at",
)
# Extensions: what an auditor needs to check the bytes and re-derive pack_hash.
ARTIFACT_EXTENSION_FIELDS = ("content_sha256", "size_bytes")


def artifact_json(artifact: PackArtifact, settings: Settings) -> dict[str, Any]:
    ready = artifact.status == ArtifactStatus.generated.value
    return {
        **pick(artifact, ARTIFACT_FIELDS),
        "file_url": signing.file_url(settings, artifact.id) if ready else None,
        "signed_download_url": signing.signed_download_url(settings, artifact.id) if ready else None,
        **pick(artifact, ARTIFACT_EXTENSION_FIELDS),
    }


def pack_json(pack: ReportPack, artifacts: list[PackArtifact], settings: Settings) -> dict[str, Any]:
    by_type = {a.artifact_type: a for a in artifacts}
    urls = {}
    for kind in ArtifactType:
        artifact = by_type.get(kind.value)
        ready = artifact is not None and artifact.status == ArtifactStatus.generated.value
        urls[f"{kind.value}_url"] = signing.file_url(settings, artifact.id) if ready and artifact else None
    return {**pick(pack, PACK_FIELDS), **urls, **pick(pack, PACK_TIME_FIELDS), **pick(pack, PACK_EXTENSION_FIELDS)}


def pack_detail_json(detail: PackDetail, settings: Settings) -> dict[str, Any]:
    return {
        **pack_json(detail.pack, detail.artifacts, settings),
        "calculation_run": run_json(detail.calculation_run),
        "quality_assessment": assessment_json(detail.quality_assessment),
        "artifacts": [artifact_json(a, settings) for a in detail.artifacts],
    }


async def generate_pack(request: Request) -> Response:
    """POST /v2/workspaces/{id}/packs: 201 with the new version; meta says what it was built from."""
    ctx = await caller(request)
    body = await read_json_object(request, ctx.settings.max_body_bytes, required=False)
    result = await packs.generate_pack(ctx, request.path_params["id"], body)
    return envelope(pack_json(result.pack, result.artifacts, ctx.settings), status=201, meta=result.meta)


async def get_pack(request: Request) -> Response:
    """GET /v2/packs/{id}: pack + calculation_run, quality_assessment, artifacts."""
    ctx = await caller(request)
    detail = await packs.get_pack_detail(ctx, request.path_params["id"])
    return envelope(pack_detail_json(detail, ctx.settings))


async def list_artifacts(request: Request) -> Response:
    """GET /v2/packs/{id}/artifacts: each with a fresh signed download URL."""
    ctx = await caller(request)
    artifacts = await packs.list_artifacts(ctx, request.path_params["id"])
    return envelope([artifact_json(a, ctx.settings) for a in artifacts])


async def record_approval(request: Request) -> Response:
    """POST /v2/packs/{id}/approvals: 201 {reportPackId, workspaceId, statusBefore, statusAfter}."""
    ctx = await caller(request)
    body = await read_json_object(request, ctx.settings.max_body_bytes)
    result = await approvals.record_approval(ctx, request.path_params["id"], body)
    return envelope(
        {
            "reportPackId": result.report_pack_id,
            "workspaceId": result.workspace_id,
            "statusBefore": result.status_before,
            "statusAfter": result.status_after,
        },
        status=201,
    )


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    candidates = {c.strip().removeprefix("W/") for c in header.split(",")}
    return "*" in candidates or etag in candidates


async def download_artifact(request: Request) -> Response:
    """GET /v2/artifacts/{id}/download: a valid signature needs no key; without one, the Bearer key."""
    state = request.app.state
    artifact_id = request.path_params["id"]
    query = request.query_params
    if "signature" in query or "expires" in query:
        signing.verify(state.settings, request.method, artifact_id, query.get("expires"), query.get("signature"))
        artifact = await packs.artifact_for_download(None, state.db, artifact_id)
    else:
        ctx = await caller(request)
        artifact = await packs.artifact_for_download(ctx, state.db, artifact_id)
    etag = f'"{artifact.content_sha256}"'
    headers = {"ETag": etag, "Cache-Control": "private, no-cache", "X-Content-Type-Options": "nosniff"}
    if _etag_matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    headers["Content-Disposition"] = f'attachment; filename="{artifact.file_name}"'
    size = artifact.size_bytes or 0
    media_type = artifact.content_type or "application/octet-stream"
    if size <= CONTENT_CHUNK:
        content = await packs.read_content(state.db, artifact, 0, max(size, 1)) if size else b""
        return Response(content, media_type=media_type, headers=headers)
    # Large files stream from the database a megabyte at a time: memory stays flat.
    headers["Content-Length"] = str(size)
    return StreamingResponse(packs.content_chunks(state.db, artifact)(), media_type=media_type, headers=headers)


routes = [
    Route("/v2/workspaces/{id}/packs", generate_pack, methods=["POST"]),
    Route("/v2/packs/{id}", get_pack, methods=["GET"]),
    Route("/v2/packs/{id}/artifacts", list_artifacts, methods=["GET"]),
    Route("/v2/packs/{id}/approvals", record_approval, methods=["POST"]),
    Route("/v2/artifacts/{id}/download", download_artifact, methods=["GET"]),
]
