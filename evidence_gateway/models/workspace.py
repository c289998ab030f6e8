"""Workspaces, their import batches and the shipment rows an import carries."""

from __future__ import annotations

import enum
import uuid
from datetime import date, datetime

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import counter_field, created_field, id_field, org_fk


class WorkspaceStatus(enum.StrEnum):
    draft = "draft"
    data_imported = "data_imported"
    calculated = "calculated"
    review_needed = "review_needed"
    approved = "approved"
    published = "published"
    archived = "archived"


class TransportMode(enum.StrEnum):
    road = "road"
    rail = "rail"
    sea = "sea"
    air = "air"
    inland_waterway = "inland_waterway"


class FuelType(enum.StrEnum):
    """Fuels with a factor in the seeded table. Unit: litres, kg or kWh (see docs)."""

    diesel = "diesel"
    petrol = "petrol"
    hvo = "hvo"
    cng = "cng"
    lng = "lng"
    hfo = "hfo"
    mgo = "mgo"
    jet_kerosene = "jet_kerosene"
    electricity = "electricity"


class DistanceSource(enum.StrEnum):
    measured = "measured"
    modelled = "modelled"


class DistanceType(enum.StrEnum):
    """GLEC / iLEAP distance types: actual route, shortest feasible distance, great circle distance."""

    actual = "actual"
    sfd = "sfd"
    gcd = "gcd"


class IntensityBasis(enum.StrEnum):
    """The boundary a carrier-specific intensity is reported on."""

    wtw = "wtw"
    ttw = "ttw"


class IntensityDistanceBasis(enum.StrEnum):
    """The distance a carrier-specific intensity is per tonne-km of (issue 26)."""

    sfd = "sfd"
    actual = "actual"


class IntensityCategory(enum.StrEnum):
    """ISO 14083 data category of a carrier-specific intensity (issue 26)."""

    measured = "measured"
    reported = "reported"


class Workspace(SQLModel, table=True):
    __table_args__ = (
        Index("ix_workspace_org_created", "org_id", "created_at", "id"),
        # The list's other orderings and its status filter (resolvers/list_queries.py); 0017_list_indexes.
        Index("ix_workspace_org_updated", "org_id", "updated_at", "id"),
        Index("ix_workspace_org_name", "org_id", "name", "id"),
        Index("ix_workspace_org_status_created", "org_id", "status", "created_at", "id"),
    )

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    name: str = Field(max_length=200, nullable=False)
    external_reference: str | None = Field(default=None, max_length=200)
    reporting_period_start: date | None = None
    reporting_period_end: date | None = None
    status: str = Field(default=WorkspaceStatus.draft.value, max_length=32, nullable=False)
    default_methodology_profile_id: uuid.UUID | None = None
    latest_calculation_run_id: uuid.UUID | None = None
    latest_report_pack_id: uuid.UUID | None = None
    archived_at: datetime | None = None
    created_at: datetime = created_field()
    updated_at: datetime = created_field()
    # Raised by every import: a calculation becomes the latest run only if it is unchanged.
    data_version: int = counter_field()
    # Raised by every change of the workspace or of its latest pack: the ETag.
    row_version: int = counter_field(1)


class ImportBatch(SQLModel, table=True):
    __tablename__ = "import_batch"
    __table_args__ = (Index("ix_import_batch_workspace_created", "workspace_id", "created_at"),)

    id: uuid.UUID = id_field()
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    org_id: uuid.UUID = org_fk()
    source_filename: str | None = Field(default=None, max_length=500)
    source_file_type: str | None = Field(default=None, max_length=100)
    source_row_count: int = Field(nullable=False)
    mapping_profile_name: str | None = Field(default=None, max_length=200)
    source_system: str | None = Field(default=None, max_length=200)
    shipment_count: int = Field(default=0, nullable=False)
    # The acting key, for the audit trail.
    api_key_id: uuid.UUID | None = Field(default=None, foreign_key="api_key.id")
    created_at: datetime = created_field()


class Shipment(SQLModel, table=True):
    """One row of an import. Nullable measures are counted as missing by the calculation."""

    __table_args__ = (Index("ix_shipment_workspace_batch", "workspace_id", "import_batch_id", "row_index"),)

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    import_batch_id: uuid.UUID = Field(foreign_key="import_batch.id", nullable=False)
    row_index: int = Field(nullable=False)
    external_id: str | None = Field(default=None, max_length=200)
    mode: str | None = Field(default=None, max_length=32)
    distance_km: float | None = None
    mass_tonnes: float | None = None
    origin: str | None = Field(default=None, max_length=200)
    destination: str | None = Field(default=None, max_length=200)
    fuel_type: str | None = Field(default=None, max_length=32)
    fuel_amount: float | None = None
    carrier_intensity_g_per_tkm: float | None = None
    distance_source: str = Field(default=DistanceSource.measured.value, max_length=16, nullable=False)
    # Method inputs (issue 12); all optional, so rows imported before them still read.
    carrier_intensity_basis: str | None = Field(default=None, max_length=8)
    vehicle_payload_tonnes: float | None = None
    fuel_allocation_share: float | None = None
    distance_type: str | None = Field(default=None, max_length=8)
    shipment_date: date | None = None
    # Twenty-foot equivalent units of the consignment (iLEAP TOCs per TEU-km where given).
    teu: float | None = None
    # Issue 26 (ISO 14083 activity basis, empty running, data categories, grid by country).
    carrier_intensity_distance_basis: str | None = Field(default=None, max_length=8)
    carrier_intensity_category: str | None = Field(default=None, max_length=8)
    loaded_distance_km: float | None = None
    empty_distance_km: float | None = None
    empty_running_share: float | None = None
    electricity_country: str | None = Field(default=None, max_length=2)
