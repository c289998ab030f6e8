"""Workspaces, their detail view and import batches."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from evidence_gateway.models import WorkspaceStatus
from evidence_gateway.read_models.base import ReadModel, ext, render_optional
from evidence_gateway.read_models.calculations import CalculationRun, DataQualityAssessment
from evidence_gateway.read_models.packs import ReportPack
from evidence_gateway.settings import Settings


class Workspace(ReadModel):
    """A reporting workspace: the container of imports, runs and packs."""

    internal = frozenset({"row_version"})

    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    external_reference: str | None
    reporting_period_start: date | None
    reporting_period_end: date | None
    status: WorkspaceStatus
    default_methodology_profile_id: uuid.UUID | None
    latest_calculation_run_id: uuid.UUID | None
    latest_report_pack_id: uuid.UUID | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
    data_version: int = ext("Raised by every import; a calculation records the one it read.", ge=0)


class WorkspaceDetail(Workspace):
    """A workspace with its latest run, pack and quality assessment inlined (null until they exist)."""

    latest_calculation_run: CalculationRun | None
    latest_pack: ReportPack | None
    latest_quality_assessment: DataQualityAssessment | None

    @classmethod
    def render_detail(cls, detail: Any, settings: Settings) -> dict[str, Any]:
        latest = detail.latest_pack
        return {
            **Workspace.render(detail.workspace),
            "latest_calculation_run": render_optional(CalculationRun, detail.latest_calculation_run),
            "latest_pack": ReportPack.render_linked(latest.pack, latest.artifacts, settings) if latest else None,
            "latest_quality_assessment": render_optional(DataQualityAssessment, detail.latest_quality_assessment),
        }


class ImportBatch(ReadModel):
    """A batch of data registered from a source system."""

    internal = frozenset({"api_key_id"})

    id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    source_filename: str | None
    source_file_type: str | None
    source_row_count: int
    mapping_profile_name: str | None
    source_system: str | None
    created_at: datetime
    shipment_count: int = ext("Shipment rows stored with this batch.", ge=0)
