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
    """One shipment row (as imported) with its computed emissions (CSV, XLSX and JSON list these)."""

    import_batch_id: uuid.UUID
    row_index: int
    shipment_id: uuid.UUID
    external_id: str | None
    mode: str | None
    origin: str | None
    destination: str | None
    shipment_date: date | None
    distance_km: float | None
    distance_source: str | None
    distance_type: str | None
    mass_tonnes: float | None
    fuel_type: str | None
    fuel_amount: float | None
    vehicle_payload_tonnes: float | None
    fuel_allocation_share: float | None
    carrier_intensity_g_per_tkm: float | None
    carrier_intensity_basis: str | None
    carrier_intensity_distance_basis: str | None
    carrier_intensity_category: str | None
    loaded_distance_km: float | None
    empty_distance_km: float | None
    empty_running_share: float | None
    electricity_country: str | None
    # computed
    included: bool
    data_tier: str | None
    data_category: str | None
    distance_type_used: str | None
    activity_distance_km: float | None
    tonne_km: float | None
    allocation_share: float | None
    co2e_ttw_kg: float | None
    co2e_wtt_kg: float | None
    co2e_wtw_kg: float | None
    co2e_kg: float | None
    intensity_g_per_tkm: float | None
    factor_id: uuid.UUID | None
    estimated_co2e_ttw_kg: float | None
    estimated_co2e_wtw_kg: float | None
    flags: str | None
    method_notes: str | None
    actual_distance_km: float | None
    emission_distance_km: float | None
    emission_tonne_km: float | None
    distance_adjustment_factor: float | None
    trip_fuel_amount: float | None
    factor_ref: str | None = None
    # Input read after the results (added later; rows imported before it have none).
    teu: float | None = None


SHIPMENT_COLUMNS: tuple[str, ...] = ShipmentLine._fields
# Results of the calculation, written with fixed 6 decimals (exact; the engine rounds to them).
COMPUTED_NUMBERS: frozenset[str] = frozenset(
    {
        "activity_distance_km", "tonne_km", "allocation_share", "co2e_ttw_kg", "co2e_wtt_kg", "co2e_wtw_kg",
        "co2e_kg", "intensity_g_per_tkm", "estimated_co2e_ttw_kg", "estimated_co2e_wtw_kg",
        "actual_distance_km", "emission_distance_km", "emission_tonne_km", "trip_fuel_amount",
    }
)  # fmt: skip
# Free text a user typed: neutralised in CSV, always a string cell in XLSX.
USER_TEXT: frozenset[str] = frozenset({"external_id", "origin", "destination"})


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
    total_co2e_wtw_kg: float | None = None
    total_co2e_ttw_kg: float | None = None
    excluded_co2e_kg: float | None = None
    iso14083: dict[str, Any] = field(default_factory=dict)
    hubs: dict[str, Any] = field(default_factory=dict)  # calculation/hubs.py; empty without hub rows


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
    primary_data_share_percent: float | None = None
    primary_data_rows_percent: float | None = None
    coverage_tonne_km_percent: float | None = None
    excluded_co2e_kg: float | None = None


@dataclass(frozen=True, slots=True)
class FactorInfo:
    kind: str
    key: str
    unit: str
    wtw_value: float
    ttw_value: float
    source: str
    note: str | None
    id: uuid.UUID | None = None
    dataset: str | None = None
    dataset_version: str | None = None
    source_row_id: str | None = None

    def ref(self, version_code: str) -> str:
        """Short, stable name of the factor a shipment result used (version:kind:key)."""
        return f"{version_code}:{self.kind}:{self.key}"


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

    def factor_refs(self) -> dict[uuid.UUID, str]:
        m = self.methodology
        if m is None:
            return {}
        return {f.id: f.ref(m.factor_version_code) for f in m.factors if f.id is not None}


Rows = Iterable[ShipmentLine]
