"""Import batches: metadata plus optional shipment rows, stored in one transaction."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from evidence_gateway.calculation.factors import GRID_COUNTRIES
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import unit_of_work
from evidence_gateway.errors import NotFound
from evidence_gateway.models import (
    DistanceSource,
    DistanceType,
    FuelType,
    HubType,
    ImportBatch,
    IntensityBasis,
    IntensityCategory,
    IntensityDistanceBasis,
    TemperatureControl,
    TransportMode,
    WorkspaceStatus,
)
from evidence_gateway.read_models.base import EXTENSION
from evidence_gateway.read_models.representation import import_batch_json
from evidence_gateway.resolvers.validation import IsoDate, OneOf, ShortText, StrictInput, WholeNumber, parse, parse_id
from evidence_gateway.resolvers.workspaces import get_workspace, load_writable_workspace, move_workspace
from evidence_gateway.store.record_types import ImportBatchRecord
from evidence_gateway.store.repositories.imports import ImportBatchRepository

ModeName = Annotated[str, OneOf(TransportMode)]
FuelName = Annotated[str, OneOf(FuelType)]
DistanceSourceName = Annotated[str, OneOf(DistanceSource)]
DistanceTypeName = Annotated[str, OneOf(DistanceType)]
BasisName = Annotated[str, OneOf(IntensityBasis)]
DistanceBasisName = Annotated[str, OneOf(IntensityDistanceBasis)]
CategoryName = Annotated[str, OneOf(IntensityCategory)]
# Upper bounds keep every product finite and catch unit mistakes (metres for km, kg for t):
# no leg is longer than 50,000 km, no consignment heavier than 1,000,000 t.
DistanceKm = Annotated[float, Field(ge=0, le=50_000, allow_inf_nan=False)]
MassTonnes = Annotated[float, Field(ge=0, le=1_000_000, allow_inf_nan=False)]
FuelAmount = Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)]
Intensity = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]
Label = Annotated[str, Field(max_length=200)]
PayloadTonnes = Annotated[float, Field(gt=0, le=1_000_000, allow_inf_nan=False)]
Share = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]
Teu = Annotated[float, Field(gt=0, le=100_000, allow_inf_nan=False)]
LoadedKm = Annotated[float, Field(gt=0, le=50_000, allow_inf_nan=False)]
EmptyShare = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]

INSERT_CHUNK = 5_000


def grid_country(value: str | None, electric: bool | None, what: str) -> str | None:
    """One rule for every row that may use electricity: its grid's country is required with it,
    refused without it, and must have a location-based factor (never the UK grid by default).
    ``electric`` None: unknown (the fuel was refused), so only the country itself is checked."""
    if value is None:
        if electric:
            raise ValueError(f"required with {what}: the ISO 3166-1 alpha-2 country of the grid")
        return None
    if electric is False:
        raise ValueError(f"only allowed with {what}")
    if value not in GRID_COUNTRIES:
        known = ", ".join(sorted(GRID_COUNTRIES))
        raise ValueError(f"no location-based grid factor for {value!r}; known countries: {known}")
    return value


class ShipmentRow(StrictInput):
    """A shipment row; absent measures are stored and counted as missing by the calculation."""

    # Present measures must be sane (the bounds above); a REST extension of the contract.
    model_config = ConfigDict(json_schema_extra=EXTENSION)

    external_id: Label | None = None
    mode: ModeName | None = None
    distance_km: DistanceKm | None = None
    mass_tonnes: MassTonnes | None = None
    origin: Label | None = None
    destination: Label | None = None
    fuel_type: FuelName | None = None
    """litres: diesel, petrol, hvo; kg: cng … jet_kerosene; kWh"""
    fuel_amount: FuelAmount | None = None
    """Fuel or energy used, in the unit of fuel_type."""
    carrier_intensity_g_per_tkm: Intensity | None = None
    distance_source: DistanceSourceName = DistanceSource.measured.value
    # Issue 12 (docs/methodology.md). Declared after the fields they depend on: a field
    # validator sees the fields before it, and the error names the field itself.
    carrier_intensity_basis: BasisName | None = Field(default=None, validate_default=True)
    """Boundary of carrier_intensity_g_per_tkm; required with it."""
    vehicle_payload_tonnes: PayloadTonnes | None = Field(default=None, validate_default=True)
    """With fuel: the vehicle's total payload on the trip; share = mass / payload."""
    fuel_allocation_share: Share | None = Field(default=None, validate_default=True)
    """With fuel: the carrier's allocation share."""
    distance_type: DistanceTypeName | None = None
    """actual, sfd or gcd (GLEC distance types)."""
    shipment_date: IsoDate | None = None
    teu: Teu | None = None
    """Twenty-foot equivalent units of the consignment (> 0); the iLEAP TOC is then per TEU-km."""
    # Issue 26 (docs/methodology.md).
    carrier_intensity_distance_basis: DistanceBasisName | None = Field(default=None, validate_default=True)
    """The distance carrier_intensity_g_per_tkm is per tonne-km of: sfd (default; air: the GCD) or actual."""
    carrier_intensity_category: CategoryName | None = Field(default=None, validate_default=True)
    """ISO 14083 data category of carrier_intensity_g_per_tkm: measured (primary) or reported (secondary, default)."""
    loaded_distance_km: LoadedKm | None = Field(default=None, validate_default=True)
    """With fuel: the vehicle's loaded km on the trip the fuel is for (default: this row's actual km)."""
    empty_distance_km: DistanceKm | None = Field(default=None, validate_default=True)
    """With fuel: the km the vehicle ran empty for this trip; their fuel is added (empty running)."""
    empty_running_share: EmptyShare | None = Field(default=None, validate_default=True)
    """With fuel: the share of the trip's km run empty (0 <= share < 1), instead of empty_distance_km."""
    electricity_country: Annotated[str, Field(max_length=2)] | None = Field(default=None, validate_default=True)
    """With fuel_type electricity (required): ISO 3166-1 alpha-2 country of the grid (location-based)."""

    @field_validator("carrier_intensity_basis")
    @classmethod
    def _basis_with_intensity(cls, value: str | None, info: ValidationInfo) -> str | None:
        has_intensity = info.data.get("carrier_intensity_g_per_tkm") is not None
        if has_intensity and value is None:
            raise ValueError("required with carrier_intensity_g_per_tkm: wtw or ttw")
        if value is not None and not has_intensity and "carrier_intensity_g_per_tkm" in info.data:
            raise ValueError("only allowed with carrier_intensity_g_per_tkm")
        return value

    @field_validator("carrier_intensity_distance_basis", "carrier_intensity_category")
    @classmethod
    def _defaults_with_intensity(cls, value: str | None, info: ValidationInfo) -> str | None:
        if "carrier_intensity_g_per_tkm" not in info.data:
            return value
        if info.data.get("carrier_intensity_g_per_tkm") is None:
            if value is not None:
                raise ValueError("only allowed with carrier_intensity_g_per_tkm")
            return None
        # ISO 14083 intensities are per tonne-km of the shortest feasible distance; a carrier's
        # figure is secondary data unless declared measured on the same operations.
        if info.field_name == "carrier_intensity_category":
            return value or IntensityCategory.reported.value
        return value or IntensityDistanceBasis.sfd.value

    @field_validator("electricity_country")
    @classmethod
    def _grid_country(cls, value: str | None, info: ValidationInfo) -> str | None:
        # fuel_type refused already: nothing to say about the country beyond its own validity.
        electric = info.data.get("fuel_type") == "electricity" if "fuel_type" in info.data else None
        return grid_country(value, electric, "fuel_type electricity")

    @field_validator("loaded_distance_km", "empty_distance_km", "empty_running_share")
    @classmethod
    def _trip_with_fuel(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is None:
            return value
        if "fuel_amount" in info.data and (info.data.get("fuel_amount") is None or info.data.get("fuel_type") is None):
            raise ValueError("only allowed with fuel_type and fuel_amount (it describes that fuel's trip)")
        if info.field_name == "empty_running_share" and info.data.get("empty_distance_km") is not None:
            raise ValueError("give empty_distance_km or empty_running_share, not both")
        return value

    @field_validator("vehicle_payload_tonnes", "fuel_allocation_share")
    @classmethod
    def _allocation_with_fuel(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is None:
            return value
        if "fuel_amount" in info.data and (info.data.get("fuel_amount") is None or info.data.get("fuel_type") is None):
            raise ValueError("only allowed with fuel_type and fuel_amount (it allocates that fuel)")
        if info.field_name == "fuel_allocation_share" and info.data.get("vehicle_payload_tonnes") is not None:
            raise ValueError("give vehicle_payload_tonnes or fuel_allocation_share, not both")
        return value


class HubRowIn(StrictInput):
    """A hub operation the freight passed through (ISO 14083 hub; docs/methodology.md "Hubs")."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    external_id: Label | None = None
    """The shipment (external_id of its rows) whose chain passes the hub, if one."""
    name: Label | None = None
    hub_type: Annotated[str, OneOf(HubType)]
    temperature_control: Annotated[str, OneOf(TemperatureControl)] = TemperatureControl.ambient.value
    throughput_tonnes: PayloadTonnes
    """Tonnes of this workspace's freight the hub handled."""
    fuel_type: FuelName | None = None
    fuel_amount: FuelAmount | None = Field(default=None, validate_default=True)
    """Fuel or energy the hub used, in the unit of fuel_type (measured)."""
    electricity_kwh: FuelAmount | None = None
    """Electricity the hub used, kWh (measured)."""
    hub_total_throughput_tonnes: PayloadTonnes | None = Field(default=None, validate_default=True)
    """With measured energy for the whole hub: its total throughput, to allocate by tonnes."""
    electricity_country: Annotated[str, Field(max_length=2)] | None = Field(default=None, validate_default=True)
    """With electricity (electricity_kwh or fuel_type electricity; then required): ISO 3166-1 alpha-2
    country of the grid (location-based)."""

    @field_validator("electricity_country")
    @classmethod
    def _hub_grid_country(cls, value: str | None, info: ValidationInfo) -> str | None:
        electric = info.data.get("electricity_kwh") is not None or info.data.get("fuel_type") == "electricity"
        return grid_country(value, electric, "electricity (electricity_kwh or fuel_type electricity)")

    @field_validator("fuel_amount")
    @classmethod
    def _amount_with_fuel(cls, value: float | None, info: ValidationInfo) -> float | None:
        if (value is None) != (info.data.get("fuel_type") is None) and "fuel_type" in info.data:
            raise ValueError("fuel_type and fuel_amount go together")
        return value

    @field_validator("hub_total_throughput_tonnes")
    @classmethod
    def _total_with_energy(cls, value: float | None, info: ValidationInfo) -> float | None:
        if value is None:
            return value
        if info.data.get("fuel_amount") is None and info.data.get("electricity_kwh") is None:
            raise ValueError("only allowed with measured energy (fuel_amount or electricity_kwh)")
        throughput = info.data.get("throughput_tonnes")
        if throughput is not None and value < throughput:
            raise ValueError("must not be below throughput_tonnes")
        return value


class ImportCreate(StrictInput):
    source_row_count: Annotated[WholeNumber, Field(ge=0, le=2**31 - 1)]
    source_filename: ShortText | None = None
    source_file_type: ShortText | None = None
    mapping_profile_name: ShortText | None = None
    source_system: ShortText | None = None
    shipments: list[ShipmentRow] | None = Field(
        default=None, description="Optional shipment rows (extension).", json_schema_extra=EXTENSION
    )
    hubs: list[HubRowIn] | None = Field(
        default=None,
        description="Optional hub rows: hub operations the freight passed through (extension).",
        json_schema_extra=EXTENSION,
        max_length=10_000,
    )


async def register_import(ctx: Ctx, workspace_id: Any, data: Any) -> ImportBatch:
    """Stores the batch and its rows; the workspace's data_version rises and it moves (back) to data_imported."""
    payload = parse(ImportCreate, data)
    rows = payload.shipments or []
    async with unit_of_work(ctx) as uow:
        session = uow.session
        workspace = await load_writable_workspace(session, ctx, workspace_id)
        batch = ImportBatch(
            workspace_id=workspace.id,
            org_id=ctx.org_id,
            shipment_count=len(rows),
            api_key_id=ctx.actor,
            created_at=utcnow(),
            **payload.model_dump(exclude={"shipments", "hubs"}),
        )
        session.add(batch)
        await session.flush()
        for start in range(0, len(rows), INSERT_CHUNK):
            chunk = rows[start : start + INSERT_CHUNK]
            await ImportBatchRepository(ctx).add_shipments(
                session,
                [
                    {
                        "id": uuid.uuid4(),
                        "workspace_id": workspace.id,
                        "import_batch_id": batch.id,
                        "row_index": start + i,
                        **row.model_dump(),
                    }
                    for i, row in enumerate(chunk)
                ],
            )
        await ImportBatchRepository(ctx).add_hubs(
            session,
            [
                {"id": uuid.uuid4(), "workspace_id": workspace.id, "import_batch_id": batch.id, "row_index": i,
                 **hub.model_dump()}
                for i, hub in enumerate(payload.hubs or [])
            ],
        )  # fmt: skip
        # A calculation that read an older version can no longer become the latest run.
        workspace.data_version += 1
        uow.emit(
            EventType.import_registered,
            "import_batch",
            batch.id,
            {**import_batch_json(batch), "data_version": workspace.data_version},
            workspace_id=workspace.id,
        )
        move_workspace(uow, workspace, WorkspaceStatus.data_imported)
        uow.respond(batch)
    return batch


async def get_import(ctx: Ctx, import_id: Any) -> ImportBatchRecord:
    """One import batch of the caller's organisation (the Location of a registered import)."""
    found = await ImportBatchRepository(ctx).get(parse_id(import_id, "import batch"))
    if found is None:
        raise NotFound("import batch not found", resource="import_batch", id=str(import_id))
    return found


async def list_imports(ctx: Ctx, workspace_id: Any) -> list[ImportBatchRecord]:
    """The workspace's imports, newest first."""
    wid = (await get_workspace(ctx, workspace_id)).id
    return (await ImportBatchRepository(ctx).of_workspaces([wid]))[wid]


async def imports_by_workspace_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ImportBatchRecord]]:
    """Every import of each workspace, newest first."""
    return await ImportBatchRepository(ctx).of_workspaces(ids)
