"""The workspace detail body: the workspace with its latest run, pack and assessment inlined."""

from __future__ import annotations

from typing import Any

from evidence_gateway.representation import assessment_json, pack_json, run_json, workspace_json
from evidence_gateway.resolvers.workspace_detail import WorkspaceDetail
from evidence_gateway.settings import Settings


def workspace_detail_json(detail: WorkspaceDetail, settings: Settings) -> dict[str, Any]:
    latest = detail.latest_pack
    return {
        **workspace_json(detail.workspace),
        "latest_calculation_run": run_json(detail.latest_calculation_run),
        "latest_pack": pack_json(latest.pack, latest.artifacts, settings) if latest else None,
        "latest_quality_assessment": assessment_json(detail.latest_quality_assessment),
    }
