"""Plain data the renderers read: a snapshot of the workspace taken when a pack is generated.

Nothing here knows about the database. Every value is a stored value (no wall-clock), so
rendering the same snapshot twice gives the same bytes.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, NamedTuple


class ShipmentLine(NamedTuple):
    """One shipment row with its computed emissions (CSV, XLSX and JSON list these)."""

    import_batch_id: uuid.UUID
    row_index: int
    shipment_id: uuid.UUID
    external_id: str | None
    mode: str | None
    origin: str | None
    destination: str | None
    distance_km: float | None
    distance_source: str | None
    mass_tonnes: float | None
    fuel_type: str | None
    fuel_amount: float | None
    carrier_intensity_g_per_tkm: float | None
    included: bool
    data_tier: str | None
    tonne_km: float | None
    co2e_kg: float | None
    intensity_g_per_tkm: float | None
    flags: str | None


SHIPMENT_COLUMNS: tuple[str, ...] = ShipmentLine._fields


@dataclass(frozen=True, slots=True)
class WorkspaceInfo:
    id: uuid.UUID
    name: str
    external_reference: str | None
    reporting_period_start: date | None
    reporting_period_end: date | None


@dataclass(frozen=True, slots=True)
class RunInfo:
    id: uuid.UUID
    status: str
    methodology_profile_id: uuid.UUID | None
    factor_version_id: uuid.UUID | None
    legacy_report_id: uuid.UUID | None
    rerun_hash: str | None
    assumptions_snapshot: dict[str, Any]
    created_at: datetime
    completed_at: datetime | None
    total_co2e_kg: float | None
    total_tonne_km: float | None
    shipment_count: int
    totals_by_mode: dict[str, Any]
    api_key_id: uuid.UUID | None


@dataclass(frozen=True, slots=True)
class QualityInfo:
    id: uuid.UUID
    coverage_score: float
    primary_data_percent: float
    secondary_data_percent: float
    default_data_percent: float
    modelled_data_percent: float
    missing_required_fields_count: int
    flagged_shipments_count: int
    rules_triggered: list[dict[str, Any]]
    summary_text: str | None
    assessed_at: datetime


@dataclass(frozen=True, slots=True)
class FactorInfo:
    kind: str
    key: str
    unit: str
    wtw_value: float
    ttw_value: float
    source: str
    note: str | None


@dataclass(frozen=True, slots=True)
class MethodologyInfo:
    profile_id: uuid.UUID
    code: str
    name: str
    description: str
    boundary: str
    factor_version_id: uuid.UUID
    factor_version_code: str
    factor_version_name: str
    factor_version_source: str
    factor_version_published_on: date | None
    factors: list[FactorInfo] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class LegacyInfo:
    id: uuid.UUID
    title: str
    reporting_period_start: date | None
    reporting_period_end: date | None
    status: str
    total_co2e_kg: float
    shipment_count: int


@dataclass(frozen=True, slots=True)
class EvidenceInfo:
    id: uuid.UUID
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
    workspace_id: uuid.UUID | None
    report_pack_id: uuid.UUID | None
    shipment_id: uuid.UUID | None
    notes: str | None
    uploaded_at: datetime


EVIDENCE_COLUMNS: tuple[str, ...] = tuple(EvidenceInfo.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One line of the audit trail: what happened, when, and which API key did it."""

    occurred_at: datetime
    event: str
    actor_api_key_id: uuid.UUID | None
    actor_key_prefix: str | None
    subject_type: str
    subject_id: uuid.UUID
    description: str


AUDIT_COLUMNS: tuple[str, ...] = tuple(AuditEvent.__dataclass_fields__)


@dataclass(frozen=True, slots=True)
class PackData:
    """Everything a pack's artifacts show, except the shipment rows (streamed separately)."""

    workspace: WorkspaceInfo
    run: RunInfo
    quality: QualityInfo | None
    methodology: MethodologyInfo | None
    legacy_report: LegacyInfo | None
    evidence: list[EvidenceInfo]
    audit: list[AuditEvent]


Rows = Iterable[ShipmentLine]
