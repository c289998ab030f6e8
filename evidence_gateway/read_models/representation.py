"""The event log's data renderers, by the names the resolvers import them under.

The event log stores "the resource as REST renders it" (DESIGN.md §13), so each of these is its
read model's ``render`` (evidence_gateway/read_models/): one declaration for REST bodies and event
data alike. New code uses the read models directly.
"""

from __future__ import annotations

from typing import Any

from evidence_gateway.read_models import (
    CalculationRun,
    DataQualityAssessment,
    Event,
    EvidenceItem,
    ImportBatch,
    LegacyReportRecord,
    ReportPack,
    WebhookEndpoint,
    Workspace,
    render_optional,
)
from evidence_gateway.settings import Settings

workspace_json = Workspace.render
import_batch_json = ImportBatch.render
evidence_item_json = EvidenceItem.render
legacy_report_json = LegacyReportRecord.render
event_json = Event.render
webhook_endpoint_json = WebhookEndpoint.render


def run_json(run: Any) -> dict[str, Any] | None:
    return render_optional(CalculationRun, run)


def assessment_json(assessment: Any) -> dict[str, Any] | None:
    return render_optional(DataQualityAssessment, assessment)


def pack_json(pack: Any, artifacts: list[Any], settings: Settings) -> dict[str, Any]:
    return ReportPack.render_linked(pack, artifacts, settings)


__all__ = [
    "assessment_json",
    "event_json",
    "evidence_item_json",
    "import_batch_json",
    "legacy_report_json",
    "pack_json",
    "run_json",
    "webhook_endpoint_json",
    "workspace_json",
]
