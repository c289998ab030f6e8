"""Calculation runs, their data-quality assessments and the seeded methodology profiles."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from evidence_gateway.models import RunStatus, WorkspaceStatus
from evidence_gateway.read_models.base import EXTENSION, ReadModel, ext, render_optional


class CalculationRun(ReadModel):
    """One calculation of a workspace's emissions."""

    internal = frozenset({"api_key_id", "lease_owner", "lease_expires_at"})

    id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    methodology_profile_id: uuid.UUID | None
    factor_version_id: uuid.UUID | None
    legacy_report_id: uuid.UUID | None
    status: RunStatus
    rerun_hash: str | None
    assumptions_snapshot_json: dict[str, Any]
    created_at: datetime
    completed_at: datetime | None
    export_template_id: uuid.UUID | None = ext("Template bundle named when the run was started.")
    total_co2e_kg: float | None = ext("CO2e of the included shipments on the profile's boundary, kg.")
    total_tonne_km: float | None = ext("Tonne-kilometres of the included shipments.")
    shipment_count: int = ext("Shipment rows the run read.", ge=0)
    totals_by_mode_json: dict[str, Any] = ext("Totals per transport mode.")
    error_message: str | None = ext("Why a failed run failed.")
    data_version: int | None = ext("The workspace's data version the run read.", ge=0)
    superseded: bool = ext("Completed after newer data or a newer run: on record, never the workspace's latest.")
    total_co2e_wtw_kg: float | None = ext("Well-to-wheel total of the included shipments, kg.")
    total_co2e_ttw_kg: float | None = ext("Tank-to-wheel total of the included shipments, kg.")
    excluded_co2e_kg: float | None = ext("Excluded rows estimated with default factors (headline boundary), kg.")
    iso14083_json: dict[str, Any] | None = ext(
        "ISO 14083 summary: data categories, distance types, primary data share, coverage, exclusions "
        "(docs/methodology.md)."
    )
    hubs_json: dict[str, Any] | None = ext(
        "Hub operations (ISO 14083 HOCs): rows, throughput tonnes, WTW/TTW kg and each hub; null without hub rows "
        '(docs/methodology.md "Hubs").'
    )


class DataQualityAssessment(ReadModel):
    """Data quality of a calculation run's inputs."""

    internal = frozenset({"org_id"})

    id: uuid.UUID
    workspace_id: uuid.UUID
    calculation_run_id: uuid.UUID
    report_pack_id: uuid.UUID | None
    coverage_score: float
    primary_data_percent: float
    secondary_data_percent: float
    default_data_percent: float
    modelled_data_percent: float
    missing_required_fields_count: int
    flagged_shipments_count: int
    rules_triggered_json: list[dict[str, Any]]
    summary_text: str | None
    assessed_at: datetime
    primary_data_share_percent: float | None = ext("ISO 14083 primary data share by WTW emissions.")
    primary_data_rows_percent: float | None = ext("Primary data share by usable rows.")
    coverage_tonne_km_percent: float | None = ext("Coverage by tonne-km (excluded rows estimated).")
    excluded_co2e_kg: float | None = ext("Excluded rows estimated with default factors, kg.")


class CalculationRunDetail(CalculationRun):
    """A run with its assessment once completed (GET /v2/calculation-runs/{id})."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    quality_assessment: DataQualityAssessment | None

    @classmethod
    def render_detail(cls, run: Any, assessment: Any) -> dict[str, Any]:
        return {**CalculationRun.render(run), "quality_assessment": render_optional(DataQualityAssessment, assessment)}


class CalculationResult(ReadModel):
    """The answer to a calculation: the run, its assessment and where the workspace now stands."""

    workspace_id: uuid.UUID
    status: WorkspaceStatus = Field(description="Workspace status after the run.")
    calculation_run: CalculationRun
    quality_assessment: DataQualityAssessment | None

    @classmethod
    def render_outcome(cls, outcome: Any) -> dict[str, Any]:
        return {
            "workspace_id": outcome.workspace.id,
            "status": outcome.workspace.status,
            "calculation_run": CalculationRun.render(outcome.run),
            "quality_assessment": render_optional(DataQualityAssessment, outcome.assessment),
        }


class MethodologyProfile(ReadModel):
    """A seeded methodology profile (DESIGN.md §6)."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    id: uuid.UUID
    code: str
    name: str
    description: str
    boundary: Literal["WTW", "TTW"] = Field(description="Well-to-wheel or tank-to-wheel.")
    factor_version_id: uuid.UUID
    is_default: bool
    created_at: datetime
