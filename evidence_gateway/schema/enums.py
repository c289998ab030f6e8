"""GraphQL enums over the model enums: SCREAMING_SNAKE_CASE names, a description per value.

The model enums keep their lowercase values, which are REST's wire values and what the
database stores; GraphQL clients (and their code generators) expect SCREAMING_SNAKE_CASE
values. Strawberry's name converter renames every enum value in one place, so there is no
second Python enum per type to keep in step, and the resolvers still receive the model enum.

``strawberry.enum`` marks the model enum itself, so GraphQL types annotate their fields with
the model enums (type checkers see real classes). They import them from here rather than from
``models``: importing this module is what describes them to Strawberry.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TypeVar

import strawberry
from strawberry.schema.name_converter import NameConverter
from strawberry.types.enum import EnumValue, StrawberryEnumDefinition, has_enum_definition

from evidence_gateway.models import (
    ApprovalActionType,
    ArtifactStatus,
    ArtifactType,
    AttachmentScope,
    DistanceSource,
    DistanceType,
    EvidenceType,
    FuelType,
    HubType,
    IntensityBasis,
    IntensityCategory,
    IntensityDistanceBasis,
    PackStatus,
    RunStatus,
    TemperatureControl,
    TransportMode,
    VerificationStatus,
    WorkspaceStatus,
)

E = TypeVar("E", bound=enum.Enum)

__all__ = [
    "ApprovalActionType",
    "ArtifactStatus",
    "ArtifactType",
    "AttachmentScope",
    "DistanceSource",
    "DistanceType",
    "EvidenceNameConverter",
    "EvidenceType",
    "FuelType",
    "HubType",
    "IntensityBasis",
    "IntensityCategory",
    "IntensityDistanceBasis",
    "PackStatus",
    "RunStatus",
    "TemperatureControl",
    "TransportMode",
    "VerificationStatus",
    "WorkspaceStatus",
]


class EvidenceNameConverter(NameConverter):
    """Enum values as GraphQL conventions have them: ``data_imported`` -> ``DATA_IMPORTED``."""

    def __init__(self, auto_camel_case: bool = True) -> None:
        super().__init__(auto_camel_case)
        self._applied: dict[str, str] = {}

    def apply_naming_config(self, name: str) -> str:
        """Strawberry's, remembered per name: it converts every argument's name again on every
        request (``convert_arguments``), and the schema's names are a fixed set."""
        found = self._applied.get(name)
        if found is None:
            found = self._applied[name] = super().apply_naming_config(name)
        return found

    def from_enum_value(self, enum: StrawberryEnumDefinition, enum_value: EnumValue) -> str:
        return enum_value.name.upper()


def graphql_enum(cls: type[E], name: str, description: str, values: Mapping[E, str]) -> None:
    """Expose a model enum under ``name``; every value must be described (checked at import)."""
    missing = [member.name for member in cls if member not in values]
    if missing:
        raise ValueError(f"{name}: describe {', '.join(missing)}")
    wrapped = strawberry.enum(cls, name=name, description=description)
    assert has_enum_definition(wrapped)
    for value in wrapped.__strawberry_definition__.values:
        value.description = values[cls(value.value)]


graphql_enum(
    WorkspaceStatus,
    "WorkspaceStatus",
    "Workspace lifecycle state, in flow order (REST: the lowercase name).",
    {
        WorkspaceStatus.draft: "Created; nothing imported yet.",
        WorkspaceStatus.data_imported: "An import was registered since the last calculation.",
        WorkspaceStatus.calculated: "The latest data has a completed calculation run.",
        WorkspaceStatus.review_needed: "A pack was generated from the latest run and awaits approval.",
        WorkspaceStatus.approved: "The latest pack was approved.",
        WorkspaceStatus.published: "The latest pack was published.",
        WorkspaceStatus.archived: "Read-only: every write is refused with CONFLICT.",
    },
)
graphql_enum(
    TransportMode,
    "TransportMode",
    "Transport mode of a shipment (REST: the lowercase name).",
    {
        TransportMode.road: "Road freight (trucks, vans).",
        TransportMode.rail: "Rail freight.",
        TransportMode.sea: "Sea freight (deep sea and short sea).",
        TransportMode.air: "Air freight; distances default to great circle (GCD).",
        TransportMode.inland_waterway: "Inland waterway barges.",
    },
)
graphql_enum(
    FuelType,
    "FuelType",
    "Fuel of a shipment's primary data; fuelAmount is in the unit named per value (REST: the lowercase name).",
    {
        FuelType.diesel: "Diesel, litres.",
        FuelType.petrol: "Petrol (gasoline), litres.",
        FuelType.hvo: "Hydrotreated vegetable oil, litres.",
        FuelType.cng: "Compressed natural gas, kg.",
        FuelType.lng: "Liquefied natural gas, kg.",
        FuelType.hfo: "Heavy fuel oil, kg.",
        FuelType.mgo: "Marine gas oil, kg.",
        FuelType.jet_kerosene: "Jet kerosene, kg.",
        FuelType.electricity: "Electricity, kWh.",
    },
)
graphql_enum(
    DistanceSource,
    "DistanceSource",
    "Whether a distance was measured or modelled (REST: the lowercase name).",
    {
        DistanceSource.measured: "Measured on the trip (the default).",
        DistanceSource.modelled: "Modelled, e.g. by a routing engine; counted in modelledDataPercent.",
    },
)
graphql_enum(
    DistanceType,
    "DistanceType",
    "GLEC distance type of a shipment's distance (REST: the lowercase name).",
    {
        DistanceType.actual: "Actual distance travelled.",
        DistanceType.sfd: "Shortest feasible distance (default when the distance is modelled).",
        DistanceType.gcd: "Great circle distance (default for air).",
    },
)
graphql_enum(
    IntensityBasis,
    "IntensityBasis",
    "Boundary of a carrier-specific intensity (REST: the lowercase name).",
    {
        IntensityBasis.wtw: "Well-to-wheel: fuel production and use.",
        IntensityBasis.ttw: "Tank-to-wheel: fuel use only.",
    },
)
graphql_enum(
    IntensityDistanceBasis,
    "IntensityDistanceBasis",
    "The distance a carrier-specific intensity is per tonne-km of (REST: the lowercase name).",
    {
        IntensityDistanceBasis.sfd: "Shortest feasible distance; for air the great-circle distance (the default).",
        IntensityDistanceBasis.actual: "Actual distance driven, sailed or flown.",
    },
)
graphql_enum(
    IntensityCategory,
    "IntensityCategory",
    "ISO 14083 data category of a carrier-specific intensity (REST: the lowercase name).",
    {
        IntensityCategory.measured: "Primary: the carrier's own measured data of the same operations.",
        IntensityCategory.reported: "Secondary: a reported or modelled intensity (the default).",
    },
)
graphql_enum(
    RunStatus,
    "RunStatus",
    "Calculation run state (REST: the lowercase name).",
    {
        RunStatus.draft: "In the contract's enum; this server never leaves a run in it.",
        RunStatus.running: "Computing; holds a lease.",
        RunStatus.completed: "Finished with totals and a quality assessment.",
        RunStatus.failed: "Stopped; errorMessage says why (interrupted work too).",
    },
)
graphql_enum(
    PackStatus,
    "PackStatus",
    "Evidence pack state (REST: the lowercase name).",
    {
        PackStatus.draft: "Being generated, or sent back by a rejection.",
        PackStatus.generated: "All artifacts rendered; approval can be requested.",
        PackStatus.in_review: "Approval requested.",
        PackStatus.approved: "Approved; can be published.",
        PackStatus.published: "Published; never archived by a newer version.",
        PackStatus.archived: "Replaced by a newer version before it was published.",
        PackStatus.failed: "Generation failed or was interrupted; its artifacts are unreadable.",
    },
)
graphql_enum(
    ArtifactType,
    "ArtifactType",
    "The nine artifact families of a pack, in packHash order (REST: the lowercase name).",
    {
        ArtifactType.summary_pdf: "Summary report, PDF.",
        ArtifactType.shipment_csv: "Shipment rows with their emissions, CSV.",
        ArtifactType.shipment_xlsx: "The same rows, XLSX.",
        ArtifactType.machine_json: "Machine-readable pack content, JSON (docs/packs.md).",
        ArtifactType.methodology_statement: "Methodology statement: method, boundaries, factors.",
        ArtifactType.evidence_register: "Register of the evidence items behind the pack.",
        ArtifactType.quality_report: "Data quality report of the run.",
        ArtifactType.audit_trail: "Audit trail read from the event log.",
        ArtifactType.ileap_shipment_footprints: "iLEAP ShipmentFootprints of the run, JSON.",
    },
)
graphql_enum(
    ArtifactStatus,
    "ArtifactStatus",
    "Artifact rendering state (REST: the lowercase name).",
    {
        ArtifactStatus.pending: "Not rendered yet.",
        ArtifactStatus.generated: "Rendered; downloadable.",
        ArtifactStatus.failed: "Rendering failed; not downloadable.",
    },
)
graphql_enum(
    ApprovalActionType,
    "ApprovalActionType",
    "Approval action on a pack (REST: the lowercase name); illegal transitions are CONFLICT.",
    {
        ApprovalActionType.requested: "Ask for approval: GENERATED or DRAFT -> IN_REVIEW.",
        ApprovalActionType.approved: "Approve: IN_REVIEW -> APPROVED.",
        ApprovalActionType.rejected: "Reject: IN_REVIEW -> DRAFT.",
        ApprovalActionType.published: "Publish: APPROVED -> PUBLISHED.",
    },
)
graphql_enum(
    EvidenceType,
    "EvidenceType",
    "Kind of supporting document (REST: the lowercase name).",
    {
        EvidenceType.fuel_receipt: "A fuel receipt.",
        EvidenceType.charging_invoice: "An electric charging invoice.",
        EvidenceType.telematics: "A telematics export.",
        EvidenceType.other: "Any other document.",
    },
)
graphql_enum(
    VerificationStatus,
    "VerificationStatus",
    "Verification state of an evidence item (REST: the lowercase name).",
    {
        VerificationStatus.unverified: "Not checked yet (the default).",
        VerificationStatus.verified: "Checked and accepted.",
        VerificationStatus.expired: "No longer valid.",
        VerificationStatus.rejected: "Checked and refused.",
    },
)
graphql_enum(
    AttachmentScope,
    "AttachmentScope",
    "What an evidence item is attached to (REST: the lowercase name).",
    {
        AttachmentScope.organization: "The organisation as a whole (no workspace).",
        AttachmentScope.workspace: "A workspace, or one of its packs.",
        AttachmentScope.shipment: "One shipment row.",
    },
)
graphql_enum(
    HubType,
    "HubType",
    "GLEC Framework v3 logistics-site category of a hub row (REST: the lowercase name).",
    {
        HubType.transshipment: "Transshipment (cross-dock) site.",
        HubType.storage_and_transshipment: "Storage and transshipment site.",
        HubType.warehouse: "Warehouse.",
        HubType.liquid_bulk_terminal: "Liquid bulk terminal.",
        HubType.maritime_container_terminal: "Maritime container terminal.",
        HubType.airport_terminal: "Airport cargo terminal (no published default: give the energy used).",
    },
)
graphql_enum(
    TemperatureControl,
    "TemperatureControl",
    "Temperature control of a hub's freight (REST: the lowercase name).",
    {
        TemperatureControl.ambient: "Ambient freight only.",
        TemperatureControl.mixed: "Ambient and temperature-controlled freight.",
        TemperatureControl.refrigerated: "Temperature-controlled freight only.",
    },
)
