"""Hub rows of an import: one hub operation (transshipment, storage, terminal) and its throughput."""

from __future__ import annotations

import enum
import uuid

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import id_field, org_fk


class HubType(enum.StrEnum):
    """GLEC Framework v3 logistics-site categories (the iLEAP HubType values), and airport cargo terminals."""

    transshipment = "transshipment"
    storage_and_transshipment = "storage_and_transshipment"
    warehouse = "warehouse"
    liquid_bulk_terminal = "liquid_bulk_terminal"
    maritime_container_terminal = "maritime_container_terminal"
    airport_terminal = "airport_terminal"


class TemperatureControl(enum.StrEnum):
    ambient = "ambient"
    mixed = "mixed"
    refrigerated = "refrigerated"


class HubRow(SQLModel, table=True):
    """A hub the workspace's freight passed through, with measured energy or none (-> default intensity)."""

    __tablename__ = "hub_row"
    __table_args__ = (Index("ix_hub_row_workspace_batch", "workspace_id", "import_batch_id", "row_index"),)

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    import_batch_id: uuid.UUID = Field(foreign_key="import_batch.id", nullable=False)
    row_index: int = Field(nullable=False)
    external_id: str | None = Field(default=None, max_length=200)
    name: str | None = Field(default=None, max_length=200)
    hub_type: str = Field(max_length=32, nullable=False)
    temperature_control: str = Field(default=TemperatureControl.ambient.value, max_length=16, nullable=False)
    throughput_tonnes: float = Field(nullable=False)
    fuel_type: str | None = Field(default=None, max_length=32)
    fuel_amount: float | None = None
    electricity_kwh: float | None = None
    hub_total_throughput_tonnes: float | None = None
    # ISO 3166-1 alpha-2 country of the grid its electricity came from (location-based).
    electricity_country: str | None = Field(default=None, max_length=2)
