"""Contract field lists: what each resource looks like on the wire (snake_case)."""

from __future__ import annotations

from typing import Any

from evidence_gateway.models import ImportBatch, Workspace
from evidence_gateway.resolvers.workspaces import WorkspaceDetail
from evidence_gateway.rest_compat.calculations import assessment_json, run_json
from evidence_gateway.rest_compat.http import pick

WORKSPACE_FIELDS = (
    "id",
    "org_id",
    "name",
    "external_reference",
    "reporting_period_start",
    "reporting_period_end",
    "status",
    "default_methodology_profile_id",
    "latest_calculation_run_id",
    "latest_report_pack_id",
    "archived_at",
    "created_at",
    "updated_at",
)

IMPORT_BATCH_FIELDS = (
    "id",
    "workspace_id",
    "org_id",
    "source_filename",
    "source_file_type",
    "source_row_count",
    "mapping_profile_name",
    "source_system",
    "created_at",
)


def workspace_json(workspace: Workspace) -> dict[str, Any]:
    return pick(workspace, WORKSPACE_FIELDS)


def import_batch_json(batch: ImportBatch) -> dict[str, Any]:
    # shipment_count is an extension: how many rows the batch carried.
    return {**pick(batch, IMPORT_BATCH_FIELDS), "shipment_count": batch.shipment_count}


def workspace_detail_json(detail: WorkspaceDetail, settings: Any = None) -> dict[str, Any]:
    from evidence_gateway.rest_compat.packs import pack_json  # cycle: packs imports calculations

    latest = detail.latest_pack
    return {
        **workspace_json(detail.workspace),
        "latest_calculation_run": run_json(detail.latest_calculation_run),
        "latest_pack": pack_json(latest.pack, latest.artifacts, settings) if latest and settings else None,
        "latest_quality_assessment": assessment_json(detail.latest_quality_assessment),
    }
