"""Typed records: one NamedTuple per table a repository reads, its fields the table's columns in
table order.

Read by attribute at C speed like the anonymous records (records.py), and typed for mypy: a
misspelt field fails type checking. ``records.record_type`` answers with these wherever a row
of their table becomes a record (reads, the unit of work's new rows), so a resource has one
record type whichever path read it. ``tests/test_repositories.py`` ties each to its table.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any, NamedTuple


class WorkspaceRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    external_reference: str | None
    reporting_period_start: date | None
    reporting_period_end: date | None
    status: str
    default_methodology_profile_id: uuid.UUID | None
    latest_calculation_run_id: uuid.UUID | None
    latest_report_pack_id: uuid.UUID | None
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime
    data_version: int
    row_version: int


class CalculationRunRecord(NamedTuple):
    id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    methodology_profile_id: uuid.UUID | None
    factor_version_id: uuid.UUID | None
    legacy_report_id: uuid.UUID | None
    export_template_id: uuid.UUID | None
    status: str
    rerun_hash: str | None
    assumptions_snapshot_json: dict[str, Any]
    total_co2e_kg: float | None
    total_tonne_km: float | None
    shipment_count: int
    totals_by_mode_json: dict[str, Any]
    total_co2e_wtw_kg: float | None
    total_co2e_ttw_kg: float | None
    excluded_co2e_kg: float | None
    iso14083_json: dict[str, Any] | None
    error_message: str | None
    api_key_id: uuid.UUID | None
    created_at: datetime
    completed_at: datetime | None
    data_version: int | None
    superseded: bool
    lease_owner: str | None
    lease_expires_at: datetime | None
    hubs_json: dict[str, Any] | None = None


class ReportPackRecord(NamedTuple):
    id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    legacy_report_id: uuid.UUID | None
    version_number: int
    title: str
    audience_label: str | None
    status: str
    methodology_profile_id: uuid.UUID | None
    calculation_run_id: uuid.UUID | None
    data_quality_assessment_id: uuid.UUID | None
    export_template_id: uuid.UUID | None
    pack_hash: str | None
    rerun_hash: str | None
    superseded_pack_id: uuid.UUID | None
    api_key_id: uuid.UUID | None
    created_at: datetime
    approved_at: datetime | None
    published_at: datetime | None
    row_version: int
    audit_sequence: int | None
    lease_owner: str | None
    lease_expires_at: datetime | None


class ImportBatchRecord(NamedTuple):
    id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    source_filename: str | None
    source_file_type: str | None
    source_row_count: int
    mapping_profile_name: str | None
    source_system: str | None
    shipment_count: int
    api_key_id: uuid.UUID | None
    created_at: datetime


class DataQualityAssessmentRecord(NamedTuple):
    id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
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
    primary_data_share_percent: float | None
    primary_data_rows_percent: float | None
    coverage_tonne_km_percent: float | None
    excluded_co2e_kg: float | None


class EvidenceItemRecord(NamedTuple):
    id: uuid.UUID
    workspace_id: uuid.UUID | None
    report_pack_id: uuid.UUID | None
    shipment_id: uuid.UUID | None
    org_id: uuid.UUID
    evidence_type: str
    title: str
    file_name: str
    file_url: str
    file_sha256: str | None
    mime_type: str | None
    issue_date: date | None
    valid_from: date | None
    valid_to: date | None
    source_system: str | None
    verification_status: str
    attachment_scope: str
    extracted_metadata_json: dict[str, Any]
    notes: str | None
    uploaded_at: datetime


class PackArtifactRecord(NamedTuple):
    id: uuid.UUID
    report_pack_id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    artifact_type: str
    status: str
    file_name: str | None
    content_type: str | None
    content_sha256: str | None
    size_bytes: int | None
    error_message: str | None
    created_at: datetime
    generated_at: datetime | None


class ApprovalActionRecord(NamedTuple):
    id: uuid.UUID
    report_pack_id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    action_type: str
    comment: str | None
    status_before: str
    status_after: str
    api_key_id: uuid.UUID
    created_at: datetime


class WebhookEndpointRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    url: str
    description: str
    event_types: list[str]
    enabled: bool
    secret: str
    previous_secret: str | None
    previous_secret_expires_at: datetime | None
    event_cursor: int
    failing_since: datetime | None
    disabled_reason: str | None
    api_key_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime


class WebhookDeliveryRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    webhook_id: str
    target_url: str
    event_type: str
    delivered: bool
    http_status: int | None
    error: str | None
    response_excerpt: str
    payload: dict[str, Any]
    api_key_id: uuid.UUID | None
    created_at: datetime
    endpoint_id: uuid.UUID | None
    message_id: uuid.UUID | None
    event_id: uuid.UUID | None
    attempt: int | None
    duration_ms: int | None


class LegacyReportRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    title: str
    reporting_period_start: date | None
    reporting_period_end: date | None
    status: str
    total_co2e_kg: float
    shipment_count: int
    created_at: datetime
    updated_at: datetime


class PersistedQueryRecord(NamedTuple):
    sha256: str
    document: str
    created_at: datetime
    org_id: uuid.UUID | None
    last_used_at: datetime


class ApiKeyRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    key_hash: str
    display_prefix: str
    name: str | None
    scope: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None


class OrganizationRecord(NamedTuple):
    id: uuid.UUID
    name: str
    webhook_signing_secret: str
    previous_webhook_signing_secret: str | None
    previous_webhook_signing_secret_expires_at: datetime | None
    created_at: datetime


class EventRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    sequence: int
    type: str
    occurred_at: datetime
    actor: uuid.UUID | None
    request_id: str | None
    subject_type: str
    subject_id: uuid.UUID
    workspace_id: uuid.UUID | None
    data: dict[str, Any]
    leaf_hash: bytes | None


class ShipmentRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    workspace_id: uuid.UUID
    import_batch_id: uuid.UUID
    row_index: int
    external_id: str | None
    mode: str | None
    distance_km: float | None
    mass_tonnes: float | None
    origin: str | None
    destination: str | None
    fuel_type: str | None
    fuel_amount: float | None
    carrier_intensity_g_per_tkm: float | None
    distance_source: str
    carrier_intensity_basis: str | None
    vehicle_payload_tonnes: float | None
    fuel_allocation_share: float | None
    distance_type: str | None
    shipment_date: date | None
    teu: float | None
    carrier_intensity_distance_basis: str | None
    carrier_intensity_category: str | None
    loaded_distance_km: float | None
    empty_distance_km: float | None
    empty_running_share: float | None
    electricity_country: str | None


class DataRecipientRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    name: str
    client_id: str
    secret_hash: str
    created_at: datetime
    revoked_at: datetime | None
    host_url: str | None
    host_client_id: str | None
    host_client_secret: str | None
    host_pact_version: str | None


class PublicationRecord(NamedTuple):
    id: uuid.UUID
    org_id: uuid.UUID
    recipient_id: uuid.UUID
    report_pack_id: uuid.UUID
    created_at: datetime
    withdrawn_at: datetime | None


class TlogCheckpointRecord(NamedTuple):
    org_id: uuid.UUID
    size: int
    root: bytes
    frontier: bytes
    key_id: str
    note: str
    issued_at: datetime


class EvidenceKeyRecord(NamedTuple):
    key_id: str
    name: str
    public_key: bytes
    private_seed: str | None
    created_at: datetime
    retired_at: datetime | None


# By table name: the typed record of each table that has one.
TYPED: dict[str, type[Any]] = {
    "workspace": WorkspaceRecord,
    "calculation_run": CalculationRunRecord,
    "report_pack": ReportPackRecord,
    "import_batch": ImportBatchRecord,
    "data_quality_assessment": DataQualityAssessmentRecord,
    "evidence_item": EvidenceItemRecord,
    "pack_artifact": PackArtifactRecord,
    "approval_action": ApprovalActionRecord,
    "webhook_endpoint": WebhookEndpointRecord,
    "webhook_delivery": WebhookDeliveryRecord,
    "legacy_report": LegacyReportRecord,
    "persisted_query": PersistedQueryRecord,
    "api_key": ApiKeyRecord,
    "organization": OrganizationRecord,
    "event": EventRecord,
    "shipment": ShipmentRecord,
    "data_recipient": DataRecipientRecord,
    "publication": PublicationRecord,
    "tlog_checkpoint": TlogCheckpointRecord,
    "evidence_key": EvidenceKeyRecord,
}
