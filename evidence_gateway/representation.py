"""How each resource looks on the wire (snake_case JSON): REST bodies and event-log data alike.

The event log stores "the resource as REST renders it" (DESIGN.md §13), so these renderers live
beside the transports rather than inside one of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evidence_gateway import signing
from evidence_gateway.models import (
    ApprovalAction,
    ArtifactStatus,
    ArtifactType,
    CalculationRun,
    DataQualityAssessment,
    Event,
    EvidenceItem,
    ImportBatch,
    LegacyReport,
    MethodologyProfile,
    PackArtifact,
    ReportPack,
    WebhookDelivery,
    WebhookEndpoint,
    Workspace,
)
from evidence_gateway.resolvers.events import cursor_of
from evidence_gateway.settings import Settings


def pick(obj: Any, fields: Iterable[str]) -> dict[str, Any]:
    return {f: getattr(obj, f) for f in fields}


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
# Extension: raised by every import; a calculation records the version it read.
WORKSPACE_EXTENSION_FIELDS = ("data_version",)
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
# Extensions beyond the contract: what the run produced, and whether it is the workspace's current run.
RUN_EXTENSION_FIELDS = (
    "export_template_id",
    "total_co2e_kg",
    "total_tonne_km",
    "shipment_count",
    "totals_by_mode_json",
    "error_message",
    "data_version",
    "superseded",
    # Issue 12: both boundaries, the excluded-row estimate, the ISO 14083 summary.
    "total_co2e_wtw_kg",
    "total_co2e_ttw_kg",
    "excluded_co2e_kg",
    "iso14083_json",
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
# Extensions (issue 12): ISO 14083 shares, tonne-km coverage, excluded-row estimate.
ASSESSMENT_EXTENSION_FIELDS = (
    "primary_data_share_percent",
    "primary_data_rows_percent",
    "coverage_tonne_km_percent",
    "excluded_co2e_kg",
)
PROFILE_FIELDS = ("id", "code", "name", "description", "boundary", "factor_version_id", "is_default", "created_at")
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
APPROVAL_FIELDS = (
    "id",
    "report_pack_id",
    "workspace_id",
    "action_type",
    "comment",
    "status_before",
    "status_after",
    "api_key_id",
    "created_at",
)
EVIDENCE_ITEM_FIELDS = (
    "id",
    "workspace_id",
    "report_pack_id",
    "shipment_id",
    "org_id",
    "evidence_type",
    "title",
    "file_name",
    "file_url",
    "file_sha256",
    "mime_type",
    "issue_date",
    "valid_from",
    "valid_to",
    "source_system",
    "verification_status",
    "attachment_scope",
    "extracted_metadata_json",
    "notes",
    "uploaded_at",
)
LEGACY_FIELDS = (
    "id",
    "org_id",
    "title",
    "reporting_period_start",
    "reporting_period_end",
    "status",
    "total_co2e_kg",
    "shipment_count",
    "created_at",
    "updated_at",
)


def workspace_json(workspace: Workspace) -> dict[str, Any]:
    return {**pick(workspace, WORKSPACE_FIELDS), **pick(workspace, WORKSPACE_EXTENSION_FIELDS)}


def import_batch_json(batch: ImportBatch) -> dict[str, Any]:
    # shipment_count is an extension: how many rows the batch carried.
    return {**pick(batch, IMPORT_BATCH_FIELDS), "shipment_count": batch.shipment_count}


def run_json(run: CalculationRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return pick(run, RUN_FIELDS + RUN_EXTENSION_FIELDS)


def assessment_json(assessment: DataQualityAssessment | None) -> dict[str, Any] | None:
    if assessment is None:
        return None
    return pick(assessment, ASSESSMENT_FIELDS + ASSESSMENT_EXTENSION_FIELDS)


def profile_json(profile: MethodologyProfile) -> dict[str, Any]:
    return pick(profile, PROFILE_FIELDS)


def artifact_ready(artifact: PackArtifact | None) -> bool:
    """An artifact has links only once its content is stored."""
    return artifact is not None and artifact.status == ArtifactStatus.generated.value


def artifact_json(artifact: PackArtifact, settings: Settings) -> dict[str, Any]:
    ready = artifact_ready(artifact)
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
        urls[f"{kind.value}_url"] = (
            signing.file_url(settings, artifact.id) if artifact and artifact_ready(artifact) else None
        )
    return {**pick(pack, PACK_FIELDS), **urls, **pick(pack, PACK_TIME_FIELDS), **pick(pack, PACK_EXTENSION_FIELDS)}


def approval_json(action: ApprovalAction) -> dict[str, Any]:
    return pick(action, APPROVAL_FIELDS)


def evidence_item_json(item: EvidenceItem) -> dict[str, Any]:
    return pick(item, EVIDENCE_ITEM_FIELDS)


def legacy_report_json(report: LegacyReport) -> dict[str, Any]:
    return pick(report, LEGACY_FIELDS)


EVENT_FIELDS = (
    "id",
    "sequence",
    "type",
    "occurred_at",
    "actor",
    "request_id",
    "subject_type",
    "subject_id",
    "workspace_id",
    "data",
)


def event_json(event: Event) -> dict[str, Any]:
    """An event as the log, webhooks and subscriptions show it, with the cursor to resume after it."""
    return {**pick(event, EVENT_FIELDS), "cursor": cursor_of(event.sequence)}


# Never the secret: it is shown once, when created or rotated.
WEBHOOK_ENDPOINT_FIELDS = (
    "id",
    "url",
    "description",
    "event_types",
    "enabled",
    "status",
    "failing_since",
    "disabled_reason",
    "previous_secret_expires_at",
    "created_at",
    "updated_at",
)
DELIVERY_FIELDS = (
    "id",
    "org_id",
    "webhook_id",
    "target_url",
    "event_type",
    "delivered",
    "http_status",
    "error",
    "response_excerpt",
    "payload",
    "api_key_id",
    "created_at",
)
# Set for deliveries to registered endpoints (null for test deliveries to a bare URL).
DELIVERY_EXTENSION_FIELDS = ("endpoint_id", "event_id", "attempt", "duration_ms")


def endpoint_status(endpoint: WebhookEndpoint) -> str:
    """disabled (by its owner or after days of failures), failing (since its last failed attempt), healthy."""
    if not endpoint.enabled:
        return "disabled"
    return "failing" if endpoint.failing_since is not None else "healthy"


def webhook_endpoint_json(endpoint: WebhookEndpoint) -> dict[str, Any]:
    return {f: endpoint_status(endpoint) if f == "status" else getattr(endpoint, f) for f in WEBHOOK_ENDPOINT_FIELDS}


def delivery_json(delivery: WebhookDelivery) -> dict[str, Any]:
    return pick(delivery, DELIVERY_FIELDS + DELIVERY_EXTENSION_FIELDS)
