"""Reference data (methodology profiles, versioned emission factors) and calculation results."""

from __future__ import annotations

import enum
import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint, false
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, json_field, org_fk


class RunStatus(enum.StrEnum):
    draft = "draft"
    running = "running"
    completed = "completed"
    failed = "failed"


class DataTier(enum.StrEnum):
    """Best data available for a shipment, best first (ISO 14083 / GLEC data hierarchy)."""

    primary = "primary"  # fuel or energy actually used
    secondary = "secondary"  # carrier-specific intensity
    default = "default"  # mode default intensity, measured distance
    modelled = "modelled"  # mode default intensity, modelled distance


class FactorVersion(SQLModel, table=True):
    """A published set of factors; a run names the version it used."""

    __tablename__ = "factor_version"

    id: uuid.UUID = id_field()
    code: str = Field(max_length=64, unique=True, nullable=False)
    name: str = Field(max_length=200, nullable=False)
    source: str = Field(max_length=500, nullable=False)
    published_on: date | None = None
    created_at: datetime = created_field()


class EmissionFactor(SQLModel, table=True):
    """kind=mode: g CO2e per tonne-km; kind=fuel: kg CO2e per litre / kg / kWh."""

    __tablename__ = "emission_factor"
    __table_args__ = (UniqueConstraint("factor_version_id", "kind", "key", name="uq_emission_factor_key"),)

    id: uuid.UUID = id_field()
    factor_version_id: uuid.UUID = Field(foreign_key="factor_version.id", nullable=False)
    kind: str = Field(max_length=16, nullable=False)
    key: str = Field(max_length=64, nullable=False)
    unit: str = Field(max_length=32, nullable=False)
    wtw_value: float = Field(nullable=False)
    ttw_value: float = Field(nullable=False)
    source: str = Field(max_length=500, nullable=False)
    note: str | None = Field(default=None, max_length=500)
    # Which published rows the values are (NULL for factors seeded before issue 12).
    dataset: str | None = Field(default=None, max_length=200)
    dataset_version: str | None = Field(default=None, max_length=64)
    source_row_id: str | None = Field(default=None, max_length=500)


class MethodologyProfile(SQLModel, table=True):
    __tablename__ = "methodology_profile"

    id: uuid.UUID = id_field()
    code: str = Field(max_length=64, unique=True, nullable=False)
    name: str = Field(max_length=200, nullable=False)
    description: str = Field(max_length=2000, nullable=False)
    # "WTW" (well-to-wheel) or "TTW" (tank-to-wheel)
    boundary: str = Field(max_length=8, nullable=False)
    factor_version_id: uuid.UUID = Field(foreign_key="factor_version.id", nullable=False)
    is_default: bool = Field(default=False, nullable=False)
    created_at: datetime = created_field()


class CalculationRun(SQLModel, table=True):
    __tablename__ = "calculation_run"
    __table_args__ = (
        # id last: a workspace's runs by cursor (resolvers/connections.py); 0007_keyset_indexes.
        Index("ix_calculation_run_workspace_created_id", "workspace_id", "created_at", "id"),
        Index("ix_calculation_run_status_lease", "status", "lease_expires_at"),
        # The organisation's runs by cursor, and by status (list_queries.CALCULATION_RUNS); 0017_list_indexes.
        Index("ix_calculation_run_org_created", "org_id", "created_at", "id"),
        Index("ix_calculation_run_org_status_created", "org_id", "status", "created_at", "id"),
    )

    id: uuid.UUID = id_field()
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    org_id: uuid.UUID = org_fk()
    methodology_profile_id: uuid.UUID | None = None
    factor_version_id: uuid.UUID | None = None
    legacy_report_id: uuid.UUID | None = None
    export_template_id: uuid.UUID | None = None
    status: str = Field(default=RunStatus.running.value, max_length=16, nullable=False)
    rerun_hash: str | None = Field(default=None, max_length=64)
    assumptions_snapshot_json: dict[str, Any] = json_field()
    # Extensions beyond the contract: what the run produced.
    total_co2e_kg: float | None = None
    total_tonne_km: float | None = None
    shipment_count: int = Field(default=0, nullable=False)
    totals_by_mode_json: dict[str, Any] = json_field()
    # Both boundaries, whatever the headline; the ISO 14083 summary (categories, distances,
    # exclusions, shares). NULL/{} for runs made before issue 12.
    total_co2e_wtw_kg: float | None = None
    total_co2e_ttw_kg: float | None = None
    excluded_co2e_kg: float | None = None
    iso14083_json: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    error_message: str | None = Field(default=None, max_length=2000)
    # The acting key, for the audit trail.
    api_key_id: uuid.UUID | None = Field(default=None, foreign_key="api_key.id")
    created_at: datetime = created_field()
    completed_at: datetime | None = None
    # The workspace's data_version the run read; a run that finished after newer data or a
    # newer run is kept, completed, with superseded = true.
    data_version: int | None = None
    superseded: bool = Field(default=False, nullable=False, sa_column_kwargs={"server_default": false()})
    # While running: which node computes it and until when (renewed); NULL owner = queued.
    lease_owner: str | None = Field(default=None, max_length=100)
    lease_expires_at: datetime | None = None
    # Hub operations of the run (calculation/hubs.py); NULL without hub rows.
    hubs_json: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))


class DataQualityAssessment(SQLModel, table=True):
    __tablename__ = "data_quality_assessment"
    __table_args__ = (Index("ix_dqa_workspace_assessed", "workspace_id", "assessed_at"),)

    id: uuid.UUID = id_field()
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    org_id: uuid.UUID = org_fk()
    calculation_run_id: uuid.UUID = Field(foreign_key="calculation_run.id", nullable=False)
    report_pack_id: uuid.UUID | None = None
    coverage_score: float = Field(nullable=False)
    primary_data_percent: float = Field(nullable=False)
    secondary_data_percent: float = Field(nullable=False)
    default_data_percent: float = Field(nullable=False)
    modelled_data_percent: float = Field(nullable=False)
    missing_required_fields_count: int = Field(nullable=False)
    flagged_shipments_count: int = Field(nullable=False)
    rules_triggered_json: list[dict[str, Any]] = json_field(default_factory=list)
    summary_text: str | None = Field(default=None, max_length=4000)
    assessed_at: datetime = created_field()
    # ISO 14083 figures (NULL before issue 12): primary data share by emissions (iLEAP/PACT
    # primaryDataShare) and by rows, coverage by tonne-km, and the estimate of excluded rows.
    primary_data_share_percent: float | None = None
    primary_data_rows_percent: float | None = None
    coverage_tonne_km_percent: float | None = None
    excluded_co2e_kg: float | None = None


class ShipmentEmission(SQLModel, table=True):
    """Per-shipment result of a run: what the CSV/XLSX artifacts list row by row."""

    __tablename__ = "shipment_emission"
    __table_args__ = (Index("ix_shipment_emission_run_row", "calculation_run_id", "row_index"),)

    id: uuid.UUID = id_field()
    calculation_run_id: uuid.UUID = Field(foreign_key="calculation_run.id", nullable=False)
    shipment_id: uuid.UUID = Field(foreign_key="shipment.id", nullable=False)
    org_id: uuid.UUID = org_fk()
    row_index: int = Field(nullable=False)
    included: bool = Field(nullable=False)
    data_tier: str | None = Field(default=None, max_length=16)
    tonne_km: float | None = None
    co2e_kg: float | None = None
    intensity_g_per_tkm: float | None = None
    flags: str | None = Field(default=None, max_length=500)
    # Issue 12: both boundaries, the ISO 14083 data category, the distance basis, the allocation
    # and the factor used; excluded rows carry an estimate instead of co2e.
    co2e_ttw_kg: float | None = None
    co2e_wtt_kg: float | None = None
    co2e_wtw_kg: float | None = None
    data_category: str | None = Field(default=None, max_length=24)
    distance_type: str | None = Field(default=None, max_length=8)
    activity_distance_km: float | None = None
    allocation_share: float | None = None
    factor_id: uuid.UUID | None = None
    estimated_co2e_ttw_kg: float | None = None
    estimated_co2e_wtw_kg: float | None = None
    method_notes: str | None = Field(default=None, max_length=500)
    # Issue 26: tonne_km and activity_distance_km are on the ISO 14083 basis (SFD, air GCD); the
    # actual distance where the row gave it, and the distance/tonne-km the emissions were computed on.
    actual_distance_km: float | None = None
    emission_distance_km: float | None = None
    emission_tonne_km: float | None = None
    distance_adjustment_factor: float | None = None
    trip_fuel_amount: float | None = None
