"""/api/v2 calculation, quality and methodology-profile routes."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.core.context import Ctx
from evidence_gateway.read_models import (
    CalculationResult,
    CalculationRun,
    CalculationRunDetail,
    DataQualityAssessment,
    MethodologyProfile,
)
from evidence_gateway.resolvers import calculation_reads, calculations, methodology
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.rest_compat.http import caller, envelope, paginated
from evidence_gateway.rest_compat.list_params import list_filters, list_order
from evidence_gateway.rest_compat.writes import location, write


async def calculate(request: Request) -> Response:
    """POST /v2/workspaces/{id}/calculate: body optional; 409 when no compatible legacy report.

    With ``Prefer: respond-async``: 202, the run queued, its Location to follow.
    """
    workspace_id = request.path_params["id"]
    return await write(
        request,
        lambda ctx, body: calculations.calculate_workspace(ctx, workspace_id, body),
        _render_calculation,
        body_required=False,
    )


def _render_calculation(result: calculations.CalculationOutcome | calculations.QueuedRun, ctx: Ctx) -> Response:
    if isinstance(result, calculations.QueuedRun):
        headers = {
            "Location": location(ctx, f"/v2/calculation-runs/{result.run.id}"),
            "Preference-Applied": "respond-async",
        }
        return envelope(CalculationRun.render(result.run), status=202, headers=headers)
    return envelope(CalculationResult.render_outcome(result))


async def list_runs(request: Request) -> Response:
    """GET /v2/calculation-runs (extension): every run of the organisation, newest first;
    ``filter[...]`` and ``sort`` (list_params.py)."""
    ctx = await caller(request)
    query = request.query_params
    params = page_params(query.get("page"), query.get("per_page"))
    page = await calculation_reads.list_calculation_runs(ctx, params, list_filters(query), list_order(query))
    return paginated(page, CalculationRun.render, request=request)


async def get_run(request: Request) -> Response:
    """GET /v2/calculation-runs/{id} (extension): a run with its assessment once completed."""
    ctx = await caller(request)
    run = await calculation_reads.get_run(ctx, request.path_params["id"])
    assessment = await calculation_reads.assessment_of_run(ctx, run.id)
    return envelope(CalculationRunDetail.render_detail(run, assessment))


async def quality(request: Request) -> Response:
    """GET /v2/workspaces/{id}/quality: the latest assessment; 404 before the first run."""
    ctx = await caller(request)
    return envelope(DataQualityAssessment.render(await calculation_reads.get_quality(ctx, request.path_params["id"])))


async def list_profiles(request: Request) -> Response:
    """GET /v2/methodology-profiles (extension): the seeded profiles, default first."""
    ctx = await caller(request)
    return envelope([MethodologyProfile.render(p) for p in await methodology.list_profiles(ctx)])


routes = [
    Route("/v2/workspaces/{id}/calculate", calculate, methods=["POST"]),
    Route("/v2/calculation-runs", list_runs, methods=["GET"]),
    Route("/v2/calculation-runs/{id}", get_run, methods=["GET"]),
    Route("/v2/workspaces/{id}/quality", quality, methods=["GET"]),
    Route("/v2/methodology-profiles", list_profiles, methods=["GET"]),
]
