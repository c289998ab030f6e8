"""GraphQL for calculation runs, quality assessments, methodology profiles and legacy reports (issue 3)."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated, Any

import strawberry
from sqlalchemy import Row
from strawberry.scalars import JSON
from strawberry.types import Info

from evidence_gateway.core.timeutil import as_aware
from evidence_gateway.models import CalculationRun, DataQualityAssessment, LegacyReportStatus
from evidence_gateway.resolvers import calculation_reads, calculations, connections, legacy, methodology
from evidence_gateway.schema.common import (
    LOOKUP_RULE,
    PaginationMeta,
    deprecated_since,
    or_null,
)
from evidence_gateway.schema.context import GraphQLContext, relation
from evidence_gateway.schema.convert import from_model, input_to_dict
from evidence_gateway.schema.enums import RunStatus, WorkspaceStatus
from evidence_gateway.schema.hub_outputs import HubOperations, hub_operations
from evidence_gateway.schema.list_inputs import (
    FILTER_HELP,
    ORDER_HELP,
    CalculationRunFilter,
    CalculationRunOrder,
    filters_of,
    order_of,
)
from evidence_gateway.schema.outputs import (
    EmissionBoundary,
    Iso14083Summary,
    MetadataEntry,
    ModeTotals,
    QualityRule,
    iso14083_summary,
    json_deprecation,
    metadata_entries,
    mode_totals,
    quality_rules,
)
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
from evidence_gateway.store.record_types import CalculationRunRecord, DataQualityAssessmentRecord

GqlInfo = Info[GraphQLContext, None]
# The day /api/v1 announces in its Deprecation header (rest_compat/legacy.py).
LEGACY_DEPRECATION = deprecated_since(
    "2026-01-01", "legacy v1 report; use workspaces, calculation runs and packs instead."
)


@strawberry.type(name="DataQualityAssessment", description="Data quality of a calculation run's inputs.")
class DataQualityAssessmentType:
    id: uuid.UUID = strawberry.field(description="Assessment id.")
    workspace_id: uuid.UUID = strawberry.field(description="Workspace assessed.")
    calculation_run_id: uuid.UUID = strawberry.field(description="Run this assessment belongs to.")
    report_pack_id: uuid.UUID | None = strawberry.field(description="Pack that carries it, if any.")
    coverage_score: float = strawberry.field(description="Usable rows over declared source rows, 0-100.")
    primary_data_percent: float = strawberry.field(description="Share of usable rows with fuel/energy data.")
    secondary_data_percent: float = strawberry.field(description="Share with a carrier-specific intensity.")
    default_data_percent: float = strawberry.field(description="Share calculated with mode defaults.")
    modelled_data_percent: float = strawberry.field(description="Share with a modelled distance.")
    missing_required_fields_count: int = strawberry.field(description="Rows excluded for missing fields.")
    flagged_shipments_count: int = strawberry.field(description="Rows with implausible values.")
    rules_triggered_json: JSON = strawberry.field(
        description="Rules that fired: id, severity, count, message.",
        deprecation_reason=json_deprecation("rulesTriggered"),
    )
    summary_text: str | None = strawberry.field(description="One-paragraph summary.")
    assessed_at: datetime = strawberry.field(description="When the assessment was made.")
    primary_data_share_percent: float | None = strawberry.field(
        description="ISO 14083 primary data share by WTW emissions (iLEAP/PACT primaryDataShare)."
    )
    primary_data_rows_percent: float | None = strawberry.field(description="Primary data share by usable rows.")
    coverage_tonne_km_percent: float | None = strawberry.field(
        description="Included tonne-km over included plus the estimated tonne-km of excluded rows."
    )
    excluded_co2e_kg: float | None = strawberry.field(
        description="Excluded rows estimated with default factors, headline boundary, kg (not in the totals)."
    )

    @strawberry.field(description="Rules that fired, with their severity and the rows they fired on.")
    def rules_triggered(self) -> list[QualityRule]:
        return quality_rules(self.rules_triggered_json)


@strawberry.type(name="CalculationRun", description="One calculation of a workspace's emissions.")
class CalculationRunType(Node):
    id: uuid.UUID = strawberry.field(description="Run id.")
    workspace_id: uuid.UUID = strawberry.field(description="Workspace calculated.")
    org_id: uuid.UUID = strawberry.field(description="Owning organisation.")
    methodology_profile_id: uuid.UUID | None = strawberry.field(description="Methodology profile used.")
    factor_version_id: uuid.UUID | None = strawberry.field(description="Emission factor version used.")
    legacy_report_id: uuid.UUID | None = strawberry.field(description="Legacy report used, if any.")
    export_template_id: uuid.UUID | None = strawberry.field(description="Template bundle for pack generation.")
    status: RunStatus = strawberry.field(description="running, completed or failed.")
    rerun_hash: str | None = strawberry.field(description="SHA-256 of the canonical JSON of every input.")
    assumptions_snapshot_json: JSON = strawberry.field(
        description="Assumptions given with the request.", deprecation_reason=json_deprecation("assumptionsSnapshot")
    )
    total_co2e_kg: float | None = strawberry.field(description="Total kg CO2e of usable rows (headline boundary).")
    total_tonne_km: float | None = strawberry.field(description="Total tonne-km of usable rows.")
    shipment_count: int = strawberry.field(description="Shipments counted in the totals.")
    totals_by_mode_json: JSON = strawberry.field(
        description="Per mode: co2e_kg (headline), co2e_ttw_kg, co2e_wtt_kg, co2e_wtw_kg, tonne_km, "
        "shipment_count, intensity_ttw_g_per_tkm, intensity_wtw_g_per_tkm.",
        deprecation_reason=json_deprecation("totalsByMode"),
    )
    total_co2e_wtw_kg: float | None = strawberry.field(description="Well-to-wheel total of usable rows, kg.")
    total_co2e_ttw_kg: float | None = strawberry.field(description="Tank-to-wheel total of usable rows, kg.")
    excluded_co2e_kg: float | None = strawberry.field(
        description="Excluded rows estimated with default factors (headline boundary, kg), not in the totals."
    )
    iso14083_json: JSON | None = strawberry.field(
        description="ISO 14083 summary: data categories, distance types, primary data share, coverage, exclusions.",
        deprecation_reason=json_deprecation("iso14083"),
    )
    hubs_json: JSON | None = strawberry.field(
        description="Hub operations (ISO 14083 HOCs): rows, throughput tonnes, WTW/TTW kg and each hub; "
        "null without hub rows.",
        deprecation_reason=json_deprecation("hubs"),
    )
    error_message: str | None = strawberry.field(description="Why a failed run failed.")
    created_at: datetime = strawberry.field(description="When the run started.")
    completed_at: datetime | None = strawberry.field(description="When it completed or failed.")
    data_version: int | None = strawberry.field(description="The workspace's data version the run read.")
    superseded: bool = strawberry.field(
        description="Completed after newer data or a newer run: kept for the record, never the workspace's latest."
    )

    @strawberry.field(description="Per transport mode: emissions on each boundary, tonne-km, shipments.")
    def totals_by_mode(self) -> list[ModeTotals]:
        return mode_totals(self.totals_by_mode_json)

    @strawberry.field(description="ISO 14083 summary (null for runs that did not complete).")
    def iso14083(self) -> Iso14083Summary | None:
        return iso14083_summary(self.iso14083_json)

    @strawberry.field(description="Hub operations (ISO 14083 HOCs), typed; null without hub rows.")
    def hubs(self) -> HubOperations | None:
        return hub_operations(self.hubs_json)

    @strawberry.field(description="Assumptions given with the request, key by key (their shape is the caller's).")
    def assumptions_snapshot(self) -> list[MetadataEntry]:
        return metadata_entries(self.assumptions_snapshot_json)

    @strawberry.field(description="The run's quality assessment (none for failed runs).")
    async def quality_assessment(self, info: GqlInfo) -> DataQualityAssessmentType | None:
        found = await info.context.loader(calculation_reads.assessments_by_run_ids).load(self.id)
        return _assessment(found)


@strawberry.type(name="MethodologyProfile", description="A seeded calculation methodology.")
class MethodologyProfileType:
    id: uuid.UUID = strawberry.field(description="Profile id (use as default_methodology_profile_id).")
    code: str = strawberry.field(description="Stable code, e.g. iso14083-wtw.")
    name: str = strawberry.field(description="Display name.")
    description: str = strawberry.field(description="What the profile counts.")
    boundary: str = strawberry.field(
        description="WTW (well-to-wheel) or TTW (tank-to-wheel).",
        deprecation_reason=json_deprecation("emissionBoundary"),
    )
    factor_version_id: uuid.UUID = strawberry.field(description="Emission factor version it uses.")
    is_default: bool = strawberry.field(description="Used when a workspace names no profile.")
    created_at: datetime = strawberry.field(description="When it was seeded.")

    @strawberry.field(description="The headline boundary its runs report (the one the calculation uses).")
    def emission_boundary(self) -> EmissionBoundary:
        return EmissionBoundary(methodology.headline_boundary(self.boundary))


@strawberry.type(name="LegacyReport", description=f"Legacy v1 report. {LEGACY_DEPRECATION}")
class LegacyReportType:
    id: uuid.UUID = strawberry.field(description="Report id (as the integrator imported it).")
    org_id: uuid.UUID = strawberry.field(description="Owning organisation.")
    title: str = strawberry.field(description="Report title.")
    reporting_period_start: date | None = strawberry.field(description="Period start.")
    reporting_period_end: date | None = strawberry.field(description="Period end.")
    status: str = strawberry.field(description="draft or final.", deprecation_reason=json_deprecation("reportStatus"))
    total_co2e_kg: float = strawberry.field(description="Reported total kg CO2e.")
    shipment_count: int = strawberry.field(description="Reported number of shipments.")
    created_at: datetime = strawberry.field(description="Creation time.")
    updated_at: datetime = strawberry.field(description="Last change (re-import).")
    successor_workspace_id: uuid.UUID | None = strawberry.field(description="Newest workspace that used it.")
    successor_report_pack_id: uuid.UUID | None = strawberry.field(description="Newest pack that used it.")

    @strawberry.field(description="Draft or final.")
    def report_status(self) -> LegacyReportStatus:
        return LegacyReportStatus(self.status)


@strawberry.type(description="DEPRECATED. One page of legacy reports.")
class LegacyReportPage:
    items: list[LegacyReportType] = strawberry.field(description="Reports on this page, newest first.")
    pagination: PaginationMeta = strawberry.field(description="Page position and total.")


@strawberry.input(description="Options of a calculation; all optional.")
class CalculateWorkspaceInput:
    legacy_report_id: uuid.UUID | None = strawberry.field(default=None, description="Legacy report to use.")
    export_template_id: uuid.UUID | None = strawberry.field(default=None, description="Template bundle id.")
    assumptions_snapshot: JSON | None = strawberry.field(default=None, description="Free-form assumptions object.")


@strawberry.type(description="Result of calculateWorkspace.")
class CalculateWorkspacePayload:
    workspace_id: uuid.UUID = strawberry.field(description="Workspace calculated.")
    status: WorkspaceStatus = strawberry.field(description="Workspace status after the run (CALCULATED).")
    calculation_run: CalculationRunType = strawberry.field(description="The completed run.")
    quality_assessment: DataQualityAssessmentType = strawberry.field(description="Its quality assessment.")


def _run(run: CalculationRun | CalculationRunRecord | Row[Any] | None) -> CalculationRunType | None:
    return None if run is None else from_model(CalculationRunType, run)


def _assessment(
    a: DataQualityAssessment | DataQualityAssessmentRecord | Row[Any] | None,
) -> DataQualityAssessmentType | None:
    return None if a is None else from_model(DataQualityAssessmentType, a)


def legacy_report_type(view: legacy.LegacyReportView) -> LegacyReportType:
    r = view.report
    return LegacyReportType(
        id=r.id,
        org_id=r.org_id,
        title=r.title,
        reporting_period_start=r.reporting_period_start,
        reporting_period_end=r.reporting_period_end,
        status=r.status,
        total_co2e_kg=r.total_co2e_kg,
        shipment_count=r.shipment_count,
        created_at=as_aware(r.created_at) or r.created_at,
        updated_at=as_aware(r.updated_at) or r.updated_at,
        successor_workspace_id=view.successor_workspace_id,
        successor_report_pack_id=view.successor_report_pack_id,
    )


@strawberry.type
class WorkspaceCalculationFields:
    """Fields this domain adds to `Workspace` (WorkspaceType inherits them)."""

    @strawberry.field(description="The workspace's most recent completed calculation run.")
    @relation(calculation_reads.runs_by_ids, "latest_calculation_run_id", _run)
    def latest_calculation_run(self, info: GqlInfo) -> CalculationRunType | None: ...

    @strawberry.field(description="Quality assessment of the latest calculation run.")
    @relation(calculation_reads.assessments_by_run_ids, "latest_calculation_run_id", _assessment)
    def latest_quality_assessment(self, info: GqlInfo) -> DataQualityAssessmentType | None: ...

    @strawberry.field(description="The workspace's calculation runs, newest first, by cursor.")
    async def calculation_runs_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[CalculationRunFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[CalculationRunOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[CalculationRunType]:
        workspace_id: Any = getattr(self, "id")  # noqa: B009 - mixin: the attribute lives on Workspace
        convert = lambda r: from_model(CalculationRunType, r)  # noqa: E731
        return await nested_connection(
            info,
            "workspace.calculation_runs",
            workspace_id,
            convert,
            first,
            after,
            last,
            before,
            filters_of(filter),
            order_of(order_by),
        )

    @strawberry.field(
        description="Every calculation run of the workspace (completed and failed), newest first.",
        deprecation_reason=deprecated_for("calculationRunsConnection"),
    )
    async def calculation_runs(self, info: GqlInfo) -> list[CalculationRunType]:
        workspace_id: Any = getattr(self, "id")  # noqa: B009 - mixin: the attribute lives on Workspace
        runs = await info.context.loader(calculation_reads.runs_by_workspace_ids, default=[]).load(workspace_id)
        return [from_model(CalculationRunType, r) for r in runs]


@strawberry.type
class Query:
    @strawberry.field(
        description="Every calculation run of the caller's workspaces, newest first (or in orderBy's order), "
        "narrowed by filter, by cursor."
    )
    async def calculation_runs_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[CalculationRunFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[CalculationRunOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[CalculationRunType]:
        found = await connections.calculation_runs(
            info.context.ctx,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, lambda r: from_model(CalculationRunType, r))

    @strawberry.field(description=f"Latest quality assessment of a workspace: {LOOKUP_RULE}, and before its first run.")
    async def quality_assessment(
        self,
        info: GqlInfo,
        workspace_id: Annotated[
            uuid.UUID, strawberry.argument(description="Workspace whose latest assessment to read.")
        ],
    ) -> DataQualityAssessmentType | None:
        return _assessment(await or_null(calculation_reads.get_quality(info.context.ctx, workspace_id)))

    @strawberry.field(description="Seeded methodology profiles, default first.")
    async def methodology_profiles(self, info: GqlInfo) -> list[MethodologyProfileType]:
        profiles = await methodology.list_profiles(info.context.ctx)
        return [from_model(MethodologyProfileType, p) for p in profiles]


@strawberry.type
class Mutation:
    @strawberry.mutation(
        description="Calculate a workspace: a run plus its quality assessment (CONFLICT when no data)."
    )
    async def calculate_workspace(
        self,
        info: GqlInfo,
        workspace_id: Annotated[uuid.UUID, strawberry.argument(description="Workspace to calculate.")],
        input: Annotated[
            CalculateWorkspaceInput | None, strawberry.argument(description="Options; all optional.")
        ] = None,
    ) -> CalculateWorkspacePayload:
        data = input_to_dict(input) if input is not None else {}
        outcome = await calculations.calculate_workspace(info.context.ctx, workspace_id, data)
        assert isinstance(outcome, calculations.CalculationOutcome)  # GraphQL never asks for respond-async
        return CalculateWorkspacePayload(
            workspace_id=outcome.workspace.id,
            status=WorkspaceStatus(outcome.workspace.status),
            calculation_run=from_model(CalculationRunType, outcome.run),
            quality_assessment=from_model(DataQualityAssessmentType, outcome.assessment),
        )
