"""GraphQL workspaces and import batches: thin fields over resolvers/workspaces & imports."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import date, datetime
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from evidence_gateway.resolvers import calculation_reads, connections, imports, pack_reads, workspaces
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.schema.calculations import WorkspaceCalculationFields
from evidence_gateway.schema.common import LOOKUP_RULE, PageArg, PaginationMeta, PerPageArg, or_null, selected_in
from evidence_gateway.schema.context import BatchFn, GraphQLContext
from evidence_gateway.schema.convert import from_model, input_to_dict
from evidence_gateway.schema.enums import (
    DistanceSource,
    DistanceType,
    FuelType,
    HubType,
    IntensityBasis,
    IntensityCategory,
    IntensityDistanceBasis,
    TemperatureControl,
    TransportMode,
    WorkspaceStatus,
)
from evidence_gateway.schema.evidence import WorkspaceEvidenceFields
from evidence_gateway.schema.list_inputs import (
    FILTER_HELP,
    ORDER_HELP,
    ImportBatchFilter,
    ImportBatchOrder,
    WorkspaceFilter,
    WorkspaceOrder,
    filters_of,
    order_of,
)
from evidence_gateway.schema.packs import WorkspacePackFields
from evidence_gateway.schema.relay import (
    After,
    Before,
    Connection,
    First,
    Last,
    Node,
    connection,
    deprecated_for,
    nested_connection,
)

GqlInfo = Info[GraphQLContext, None]


@strawberry.type(name="ImportBatch", description="A batch of data registered from a source system.")
class ImportBatchType:
    id: uuid.UUID = strawberry.field(description="Import batch id.")
    workspace_id: uuid.UUID = strawberry.field(description="Workspace the batch belongs to.")
    org_id: uuid.UUID = strawberry.field(description="Owning organisation.")
    source_filename: str | None = strawberry.field(description="Name of the source file.")
    source_file_type: str | None = strawberry.field(description="Type of the source file (csv, xlsx, …).")
    source_row_count: int = strawberry.field(description="Rows declared by the source.")
    mapping_profile_name: str | None = strawberry.field(description="Column mapping profile used.")
    source_system: str | None = strawberry.field(description="System the data came from.")
    shipment_count: int = strawberry.field(description="Shipment rows stored with this batch.")
    created_at: datetime = strawberry.field(description="When the batch was registered.")


@strawberry.type(name="Workspace", description="A reporting workspace: the container of imports, runs and packs.")
class WorkspaceType(Node, WorkspaceCalculationFields, WorkspacePackFields, WorkspaceEvidenceFields):
    id: uuid.UUID = strawberry.field(description="Workspace id.")
    org_id: uuid.UUID = strawberry.field(description="Owning organisation.")
    name: str = strawberry.field(description="Display name.")
    external_reference: str | None = strawberry.field(description="Caller's own reference.")
    reporting_period_start: date | None = strawberry.field(description="First day of the reporting period.")
    reporting_period_end: date | None = strawberry.field(description="Last day of the reporting period.")
    status: WorkspaceStatus = strawberry.field(description="Lifecycle state.")
    default_methodology_profile_id: uuid.UUID | None = strawberry.field(
        description="Methodology profile used when a calculation names none."
    )
    latest_calculation_run_id: uuid.UUID | None = strawberry.field(description="Most recent calculation run.")
    latest_report_pack_id: uuid.UUID | None = strawberry.field(description="Most recent evidence pack.")
    archived_at: datetime | None = strawberry.field(description="When the workspace was archived.")
    created_at: datetime = strawberry.field(description="Creation time.")
    updated_at: datetime = strawberry.field(description="Last change.")
    data_version: int = strawberry.field(description="Raised by every import; a calculation records the one it read.")

    @strawberry.field(
        description="Import batches of this workspace, newest first (or in orderBy's order), narrowed by filter, "
        "by cursor."
    )
    async def imports_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[ImportBatchFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[ImportBatchOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[ImportBatchType]:
        convert = lambda b: from_model(ImportBatchType, b)  # noqa: E731
        return await nested_connection(
            info,
            "workspace.imports",
            self.id,
            convert,
            first,
            after,
            last,
            before,
            filters_of(filter),
            order_of(order_by),
        )

    @strawberry.field(
        description="Import batches of this workspace, newest first.",
        deprecation_reason=deprecated_for("importsConnection"),
    )
    async def imports(self, info: GqlInfo) -> list[ImportBatchType]:
        batches = await info.context.loader(imports.imports_by_workspace_ids, default=[]).load(self.id)
        return [from_model(ImportBatchType, b) for b in batches]


@strawberry.type(description="One page of workspaces.")
class WorkspacePage:
    items: list[WorkspaceType] = strawberry.field(description="Workspaces on this page, newest first.")
    pagination: PaginationMeta = strawberry.field(description="Page position and total.")


@strawberry.input(description="A new workspace.")
class CreateWorkspaceInput:
    name: str = strawberry.field(description="Display name (required, 1–200 characters).")
    external_reference: str | None = strawberry.field(default=None, description="Caller's own reference.")
    reporting_period_start: date | None = strawberry.field(default=None, description="Period start.")
    reporting_period_end: date | None = strawberry.field(default=None, description="Period end (not before start).")
    default_methodology_profile_id: uuid.UUID | None = strawberry.field(
        default=None, description="A methodology profile id (see methodologyProfiles)."
    )


@strawberry.input(description="One shipment row of an import; missing measures are counted, not refused.")
class ShipmentRowInput:
    external_id: str | None = strawberry.field(default=None, description="Caller's shipment id.")
    mode: TransportMode | None = strawberry.field(default=None, description="Transport mode.")
    distance_km: float | None = strawberry.field(default=None, description="Distance in km (>= 0).")
    mass_tonnes: float | None = strawberry.field(default=None, description="Payload mass in tonnes (>= 0).")
    origin: str | None = strawberry.field(default=None, description="Origin location.")
    destination: str | None = strawberry.field(default=None, description="Destination location.")
    fuel_type: FuelType | None = strawberry.field(default=None, description="Fuel actually used.")
    fuel_amount: float | None = strawberry.field(default=None, description="Fuel used (litres, kg or kWh; > 0).")
    carrier_intensity_g_per_tkm: float | None = strawberry.field(
        default=None, description="Carrier-specific intensity, g CO2e per tonne-km (> 0)."
    )
    distance_source: DistanceSource | None = strawberry.field(
        default=None, description="Measured (default) or modelled distance."
    )
    carrier_intensity_basis: IntensityBasis | None = strawberry.field(
        default=None, description="Boundary of carrierIntensityGPerTkm (required with it): wtw or ttw."
    )
    vehicle_payload_tonnes: float | None = strawberry.field(
        default=None, description="With fuel: the vehicle's total payload on the trip (t, > 0); share = mass / payload."
    )
    fuel_allocation_share: float | None = strawberry.field(
        default=None, description="With fuel: the carrier's allocation share of the fuel (0 < share <= 1)."
    )
    distance_type: DistanceType | None = strawberry.field(
        default=None, description="actual, sfd or gcd (default: gcd for air; sfd if modelled; else actual)."
    )
    shipment_date: date | None = strawberry.field(default=None, description="Date of the shipment (period check).")
    teu: float | None = strawberry.field(
        default=None, description="Twenty-foot equivalent units of the consignment (> 0); iLEAP TOC per TEU-km."
    )
    carrier_intensity_distance_basis: IntensityDistanceBasis | None = strawberry.field(
        default=None,
        description="Distance carrierIntensityGPerTkm is per tonne-km of: SFD (default; air: the GCD) or ACTUAL.",
    )
    carrier_intensity_category: IntensityCategory | None = strawberry.field(
        default=None,
        description="ISO 14083 data category of carrierIntensityGPerTkm: MEASURED (primary) or REPORTED (default).",
    )
    loaded_distance_km: float | None = strawberry.field(
        default=None, description="With fuel: the vehicle's loaded km on the trip (default: this row's actual km)."
    )
    empty_distance_km: float | None = strawberry.field(
        default=None, description="With fuel: km run empty for this trip; their fuel is added (empty running)."
    )
    empty_running_share: float | None = strawberry.field(
        default=None, description="With fuel: share of the trip's km run empty (0 <= share < 1)."
    )
    electricity_country: str | None = strawberry.field(
        default=None,
        description="With fuelType ELECTRICITY (required): ISO 3166-1 alpha-2 country of the grid (location-based).",
    )


@strawberry.input(description="A hub operation the freight passed through (ISO 14083 hub).")
class HubRowInput:
    hub_type: HubType = strawberry.field(description="GLEC logistics-site category.")
    throughput_tonnes: float = strawberry.field(description="Tonnes of this workspace's freight handled (> 0).")
    external_id: str | None = strawberry.field(default=None, description="Shipment whose chain passes the hub.")
    name: str | None = strawberry.field(default=None, description="Hub name.")
    temperature_control: TemperatureControl | None = strawberry.field(
        default=None, description="ambient (default), mixed or refrigerated."
    )
    fuel_type: FuelType | None = strawberry.field(default=None, description="Fuel the hub used (measured).")
    fuel_amount: float | None = strawberry.field(default=None, description="Fuel used, in the unit of fuelType.")
    electricity_kwh: float | None = strawberry.field(default=None, description="Electricity used, kWh (measured).")
    hub_total_throughput_tonnes: float | None = strawberry.field(
        default=None, description="With energy for the whole hub: its total throughput (allocation by tonnes)."
    )
    electricity_country: str | None = strawberry.field(
        default=None,
        description="With electricity (required): ISO 3166-1 alpha-2 country of the grid (location-based).",
    )


@strawberry.input(description="An import batch to register.")
class RegisterImportInput:
    source_row_count: int = strawberry.field(description="Rows declared by the source (>= 0).")
    source_filename: str | None = strawberry.field(default=None, description="Source file name.")
    source_file_type: str | None = strawberry.field(default=None, description="Source file type.")
    mapping_profile_name: str | None = strawberry.field(default=None, description="Mapping profile name.")
    source_system: str | None = strawberry.field(default=None, description="Source system.")
    shipments: list[ShipmentRowInput] | None = strawberry.field(default=None, description="Optional shipment rows.")
    hubs: list[HubRowInput] | None = strawberry.field(default=None, description="Optional hub rows.")


# Relations a page of workspaces reads for all its items at once when the document selects them
# (GraphQL name -> DataLoader batch and the workspace column holding the key).
_PAGE_RELATIONS: dict[str, tuple[BatchFn[Any, Any], str]] = {
    "latestCalculationRun": (calculation_reads.runs_by_ids, "latest_calculation_run_id"),
    "latestQualityAssessment": (calculation_reads.assessments_by_run_ids, "latest_calculation_run_id"),
    "latestPack": (pack_reads.packs_by_ids, "latest_report_pack_id"),
}


async def _prefetch_relations(info: GqlInfo, items: Sequence[Any]) -> None:
    """Each selected relation in one batch for the page, before the items resolve: their fields
    then answer without awaiting (GraphQLContext.related)."""
    if not items:
        return
    for name in selected_in(info, "items") & _PAGE_RELATIONS.keys():
        batch, column = _PAGE_RELATIONS[name]
        await info.context.prefetch(batch, [getattr(item, column) for item in items])


@strawberry.type
class Query:
    @strawberry.field(
        description="The caller's workspaces, newest first.",
        deprecation_reason=deprecated_for("workspacesConnection"),
    )
    async def workspaces(self, info: GqlInfo, page: PageArg = 1, per_page: PerPageArg = 20) -> WorkspacePage:
        ctx = info.context.ctx
        result = await workspaces.list_workspaces(ctx, page_params(page, per_page))
        await _prefetch_relations(info, result.items)
        return WorkspacePage(
            items=[from_model(WorkspaceType, w) for w in result.items], pagination=PaginationMeta.of(result)
        )

    @strawberry.field(
        description="The caller's workspaces, newest first (or in orderBy's order), narrowed by filter, by "
        "cursor: page 5,000 costs what page 1 costs."
    )
    async def workspaces_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[WorkspaceFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[WorkspaceOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[WorkspaceType]:
        found = await connections.workspaces(
            info.context.ctx,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, lambda w: from_model(WorkspaceType, w))

    @strawberry.field(description=f"One workspace; {LOOKUP_RULE}.")
    async def workspace(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Workspace id.")]
    ) -> WorkspaceType | None:
        found = await or_null(workspaces.get_workspace(info.context.ctx, id))
        return None if found is None else from_model(WorkspaceType, found)


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Create a workspace (status draft).")
    async def create_workspace(
        self,
        info: GqlInfo,
        input: Annotated[CreateWorkspaceInput, strawberry.argument(description="The workspace to create.")],
    ) -> WorkspaceType:
        workspace = await workspaces.create_workspace(info.context.ctx, input_to_dict(input))
        return from_model(WorkspaceType, workspace)

    @strawberry.mutation(description="Register an import batch; the workspace moves to data_imported.")
    async def register_import(
        self,
        info: GqlInfo,
        workspace_id: Annotated[uuid.UUID, strawberry.argument(description="Workspace to import into.")],
        input: Annotated[
            RegisterImportInput, strawberry.argument(description="The batch and its optional shipment rows.")
        ],
    ) -> ImportBatchType:
        batch = await imports.register_import(info.context.ctx, workspace_id, input_to_dict(input))
        return from_model(ImportBatchType, batch)
