"""/api/v2 calculation, quality and methodology-profile routes, and their serializers."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.http_body import read_json_object
from evidence_gateway.models import CalculationRun, DataQualityAssessment, MethodologyProfile
from evidence_gateway.resolvers import calculations, methodology
from evidence_gateway.rest_compat.http import caller, envelope, pick

RUN_FIELDS = (
    "id",
    "workspace_id",
    "org_id",
    "methodology_profile_id",
    "factor_version_id",
    "legacy_report_id",
    "status",
    "rerun_hash",
    "assumptions_snapshot_json",
    "created_at",
    "completed_at",
)
# Extensions beyond the contract: what the run produced.
RUN_EXTENSION_FIELDS = (
    "export_template_id",
    "total_co2e_kg",
    "total_tonne_km",
    "shipment_count",
    "totals_by_mode_json",
    "error_message",
)
ASSESSMENT_FIELDS = (
    "id",
    "workspace_id",
    "calculation_run_id",
    "report_pack_id",
    "coverage_score",
    "primary_data_percent",
    "secondary_data_percent",
    "default_data_percent",
    "modelled_data_percent",
    "missing_required_fields_count",
    "flagged_shipments_count",
    "rules_triggered_json",
    "summary_text",
    "assessed_at",
)
PROFILE_FIELDS = ("id", "code", "name", "description", "boundary", "factor_version_id", "is_default", "created_at")


def run_json(run: CalculationRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return pick(run, RUN_FIELDS + RUN_EXTENSION_FIELDS)


def assessment_json(assessment: DataQualityAssessment | None) -> dict[str, Any] | None:
    if assessment is None:
        return None
    return pick(assessment, ASSESSMENT_FIELDS)


def profile_json(profile: MethodologyProfile) -> dict[str, Any]:
    return pick(profile, PROFILE_FIELDS)


async def calculate(request: Request) -> Response:
    """POST /v2/workspaces/{id}/calculate: body optional; 409 when no compatible legacy report."""
    ctx = await caller(request)
    body = await read_json_object(request, ctx.settings.max_body_bytes, required=False)
    outcome = await calculations.calculate_workspace(ctx, request.path_params["id"], body)
    return envelope(
        {
            "workspace_id": outcome.workspace.id,
            "status": outcome.workspace.status,
            "calculation_run": run_json(outcome.run),
            "quality_assessment": assessment_json(outcome.assessment),
        }
    )


async def quality(request: Request) -> Response:
    """GET /v2/workspaces/{id}/quality: the latest assessment; 404 before the first run."""
    ctx = await caller(request)
    return envelope(assessment_json(await calculations.get_quality(ctx, request.path_params["id"])))


async def list_profiles(request: Request) -> Response:
    """GET /v2/methodology-profiles (extension): the seeded profiles, default first."""
    ctx = await caller(request)
    return envelope([profile_json(p) for p in await methodology.list_profiles(ctx)])


routes = [
    Route("/v2/workspaces/{id}/calculate", calculate, methods=["POST"]),
    Route("/v2/workspaces/{id}/quality", quality, methods=["GET"]),
    Route("/v2/methodology-profiles", list_profiles, methods=["GET"]),
]
