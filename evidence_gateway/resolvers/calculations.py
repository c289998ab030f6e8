"""Calculation runs and quality assessments: read inputs, run the pure engine, store the results.

A run is stored ``running`` first (its own unit of work) with a lease, computed outside any
write transaction, then the results and the run's completion are written in one unit of work.
The run becomes the workspace's latest only if the workspace's ``data_version`` is still the one
it read and no newer run has completed (compare-and-set, DESIGN.md §14); otherwise it is kept
``completed`` with ``superseded = true`` and the workspace stays where it is. Any failure marks
the run ``failed`` (with a ``calculation.failed`` event) and the workspace stays as it was.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.calculation import ENGINE_VERSION, calculate, rerun_hash
from evidence_gateway.calculation import quality as q
from evidence_gateway.calculation.hubs import HubInput, calculate_hubs
from evidence_gateway.core import checkpoints
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.leases import NODE_ID, expiry, wake_workers
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import unit_of_work
from evidence_gateway.errors import Conflict, InternalError
from evidence_gateway.models import (
    CalculationRun,
    DataQualityAssessment,
    ImportBatch,
    LegacyReport,
    RunStatus,
    Workspace,
    WorkspaceStatus,
)
from evidence_gateway.read_models.representation import assessment_json, run_json
from evidence_gateway.resolvers import legacy, methodology
from evidence_gateway.resolvers.calculation_failures import fail_run
from evidence_gateway.resolvers.leased import INTERRUPTED, run_leased
from evidence_gateway.resolvers.validation import StrictInput, UUIDField, parse
from evidence_gateway.resolvers.workspaces import (
    load_workspace,
    load_writable_workspace,
    move_workspace,
    periods_overlap,
)
from evidence_gateway.store import shipment_results
from evidence_gateway.store.repositories import methodology as profiles
from evidence_gateway.store.repositories.calculations import CalculationRunRepository
from evidence_gateway.store.repositories.imports import ImportBatchRepository

log = logging.getLogger(__name__)

NO_LEGACY = "no compatible legacy report available"
_IMPORT_META = (
    "source_row_count",
    "source_filename",
    "source_file_type",
    "mapping_profile_name",
    "source_system",
    "shipment_count",
)


class CalculateInput(StrictInput):
    legacy_report_id: UUIDField | None = None
    export_template_id: UUIDField | None = None
    assumptions_snapshot: dict[str, Any] | None = None
    """Assumptions recorded with the run."""


@dataclass(frozen=True, slots=True)
class CalculationOutcome:
    workspace: Workspace
    run: CalculationRun
    assessment: DataQualityAssessment


@dataclass(frozen=True, slots=True)
class QueuedRun:
    """Prefer: respond-async: the run is stored and queued; any node's worker computes it."""

    run: CalculationRun


async def calculate_workspace(ctx: Ctx, workspace_id: Any, data: Any) -> CalculationOutcome | QueuedRun:
    """POST /workspaces/{id}/calculate: a completed run and its assessment, or a clear error."""
    payload = parse(CalculateInput, data if data is not None else {})
    run = await _start_run(ctx, workspace_id, payload)
    if ctx.respond_async:
        wake_workers()
        return QueuedRun(run)
    return await execute_run(ctx, run.id)


async def _start_run(ctx: Ctx, workspace_id: Any, payload: CalculateInput) -> CalculationRun:
    async with unit_of_work(ctx) as uow:
        session = uow.session
        workspace = await load_writable_workspace(session, ctx, workspace_id)
        imports = await _imports(session, ctx, workspace.id)
        chosen = await _legacy_for(session, ctx, workspace, payload.legacy_report_id, has_imports=bool(imports))
        profile = await methodology.resolve_profile(session, workspace.default_methodology_profile_id)
        queued = ctx.respond_async
        run = CalculationRun(
            workspace_id=workspace.id,
            org_id=ctx.org_id,
            methodology_profile_id=profile.id,
            factor_version_id=profile.factor_version_id,
            legacy_report_id=chosen.id if chosen else None,
            export_template_id=payload.export_template_id,
            status=RunStatus.running.value,
            assumptions_snapshot_json=payload.assumptions_snapshot or {},
            api_key_id=ctx.actor,
            created_at=utcnow(),
            # Queued work has no owner yet; a worker claims it (work_queue).
            lease_owner=None if queued else NODE_ID,
            lease_expires_at=None if queued else expiry(ctx.settings.lease_seconds),
        )
        session.add(run)
        if queued:
            uow.respond(QueuedRun(run))
    return run


async def execute_run(ctx: Ctx, run_id: uuid.UUID) -> CalculationOutcome:
    """Compute a run this node holds the lease of, renewing it meanwhile."""

    async def work() -> CalculationOutcome:
        await checkpoints.reached(checkpoints.CALCULATION_STARTED, ctx.settings.pause_at)
        return await _compute_and_store(ctx, run_id)

    renew = partial(renew_run_lease, ctx, run_id)
    return await run_leased(
        ctx,
        run_id,
        what="calculation run",
        masked=("calculation failed", "run_id"),
        renew=renew,
        work=work,
        fail=fail_run,
    )


async def renew_run_lease(ctx: Ctx, run_id: uuid.UUID) -> None:
    await CalculationRunRepository(ctx).renew_lease(run_id, NODE_ID, expiry(ctx.settings.lease_seconds))


async def _imports(session: AsyncSession, ctx: Ctx, workspace_id: uuid.UUID) -> list[ImportBatch]:
    return await ImportBatchRepository(ctx).in_import_order(session, workspace_id)


async def _legacy_for(
    session: AsyncSession, ctx: Ctx, workspace: Workspace, legacy_id: uuid.UUID | None, *, has_imports: bool
) -> LegacyReport | None:
    """DESIGN.md §6: a named report must be ours and overlap; no data at all needs one that does."""
    start, end = workspace.reporting_period_start, workspace.reporting_period_end
    if legacy_id is not None:
        report = await legacy.load_legacy_report(session, ctx, legacy_id)
        if report is None:
            raise Conflict(NO_LEGACY, reason="legacy report not found", legacy_report_id=str(legacy_id))
        if not periods_overlap(start, end, report.reporting_period_start, report.reporting_period_end):
            raise Conflict(NO_LEGACY, reason="reporting periods do not overlap", legacy_report_id=str(legacy_id))
        return report
    if has_imports:
        return None
    report = await legacy.find_compatible(session, ctx, start, end)
    if report is None:
        raise Conflict(NO_LEGACY, reason="workspace has no imports and no legacy report matches its period")
    return report


async def _compute_and_store(ctx: Ctx, run_id: uuid.UUID) -> CalculationOutcome:
    # One snapshot: the data_version recorded is exactly the one the rows were read at.
    async with ctx.db.snapshot() as session:
        run = await CalculationRunRepository(ctx).load(session, run_id)
        if run is None:
            raise InternalError("the calculation run is gone", run_id=str(run_id))
        workspace = await load_workspace(session, ctx, run.workspace_id)
        data_version = workspace.data_version
        profile = await profiles.get(session, run.methodology_profile_id)
        if profile is None:
            raise InternalError("methodology profile of the run is gone", run_id=str(run_id))
        chosen = await legacy.load_legacy_report(session, ctx, run.legacy_report_id) if run.legacy_report_id else None
        factor_set = await methodology.load_factor_set(session, profile)
        imports = await _imports(session, ctx, run.workspace_id)
        rows = await shipment_results.read_shipments(ctx.db, session, ctx.org_id, run.workspace_id)
        hub_rows = await ImportBatchRepository(ctx).hubs_in_import_order(
            session, run.workspace_id, [b.id for b in imports]
        )
    hubs_in = [HubInput(*(getattr(h, f) for f in HubInput._fields)) for h in hub_rows]
    inputs: dict[str, Any] = {
        "engine_version": ENGINE_VERSION,
        "methodology_profile_id": str(profile.id),
        "boundary": factor_set.boundary,
        "factor_version_id": str(profile.factor_version_id),
        "factors": factor_set.canonical(),
        "assumptions_snapshot": run.assumptions_snapshot_json,
        "imports": [{k: getattr(b, k) for k in _IMPORT_META} for b in imports],
        "rows": [list(r[1:]) for r in rows],
        "legacy_report": _legacy_content(chosen),
    }
    if hubs_in:  # only then: runs without hub rows keep their hashes
        inputs["hubs"] = [[str(v) if isinstance(v, uuid.UUID) else v for v in h[1:]] for h in hubs_in]
    results: dict[str, Any] = {"rerun_hash": rerun_hash(inputs), "data_version": data_version}
    now = utcnow()
    result = None
    if imports:
        period = (workspace.reporting_period_start, workspace.reporting_period_end)
        result = calculate(rows, factor_set, period)
        without_rows = [b for b in imports if b.shipment_count == 0]
        assessment_values = q.assess_rows(
            result,
            declared_rows=sum(b.source_row_count for b in imports),
            imports_without_rows=len(without_rows),
            rows_not_loaded=sum(b.source_row_count for b in without_rows),
            boundary=factor_set.boundary,
        )
        results.update(
            total_co2e_kg=result.total_co2e_kg,
            total_tonne_km=result.total_tonne_km,
            shipment_count=result.usable_count,
            totals_by_mode_json=result.totals_by_mode,
            total_co2e_wtw_kg=result.total_co2e_wtw_kg,
            total_co2e_ttw_kg=result.total_co2e_ttw_kg,
            excluded_co2e_kg=result.excluded_co2e_kg,
            iso14083_json=result.iso14083,
            hubs_json=calculate_hubs(hubs_in, factor_set),
        )
    else:
        if chosen is None:
            raise Conflict(NO_LEGACY, reason="the legacy report of the run is gone")
        assessment_values = q.assess_legacy(
            title=chosen.title,
            total_co2e_kg=chosen.total_co2e_kg,
            shipment_count=chosen.shipment_count,
            boundary=factor_set.boundary,
        )
        results.update(
            total_co2e_kg=chosen.total_co2e_kg,
            total_tonne_km=None,
            shipment_count=chosen.shipment_count,
            totals_by_mode_json={},
        )
    assessment = DataQualityAssessment(
        workspace_id=run.workspace_id,
        org_id=ctx.org_id,
        calculation_run_id=run.id,
        coverage_score=assessment_values.coverage_score,
        primary_data_percent=assessment_values.primary_data_percent,
        secondary_data_percent=assessment_values.secondary_data_percent,
        default_data_percent=assessment_values.default_data_percent,
        modelled_data_percent=assessment_values.modelled_data_percent,
        missing_required_fields_count=assessment_values.missing_required_fields_count,
        flagged_shipments_count=assessment_values.flagged_shipments_count,
        rules_triggered_json=assessment_values.rules_triggered_json,
        summary_text=assessment_values.summary_text,
        assessed_at=now,
        primary_data_share_percent=assessment_values.primary_data_share_percent,
        primary_data_rows_percent=assessment_values.primary_data_rows_percent,
        coverage_tonne_km_percent=assessment_values.coverage_tonne_km_percent,
        excluded_co2e_kg=assessment_values.excluded_co2e_kg,
    )
    await checkpoints.reached(checkpoints.CALCULATION_COMPUTED, ctx.settings.pause_at)
    async with unit_of_work(ctx) as uow:
        session = uow.session
        workspace = await load_workspace(session, ctx, run.workspace_id, for_write=True)
        current = await _held_run(session, ctx, run_id)
        if result is not None:
            await shipment_results.insert_results(ctx.db, session, ctx.org_id, run_id, result.rows)
        is_latest = workspace.data_version == data_version and not await _newer_run_completed(
            ctx, session, workspace, current
        )
        for name, value in results.items():
            setattr(current, name, value)
        current.status = RunStatus.completed.value
        current.completed_at = now
        current.superseded = not is_latest
        current.lease_owner = None
        current.lease_expires_at = None
        session.add(assessment)
        # The cause first, then what it moved (as imports, packs and approvals do).
        uow.emit(
            EventType.calculation_completed,
            "calculation_run",
            current.id,
            {**(run_json(current) or {}), "quality_assessment": assessment_json(assessment)},
            workspace_id=workspace.id,
        )
        if is_latest and workspace.status != WorkspaceStatus.archived.value:
            workspace.latest_calculation_run_id = current.id
            move_workspace(uow, workspace, WorkspaceStatus.calculated)
        outcome = CalculationOutcome(workspace=workspace, run=current, assessment=assessment)
        uow.respond(outcome)
    return outcome


async def _held_run(session: AsyncSession, ctx: Ctx, run_id: uuid.UUID) -> CalculationRun:
    """The run, locked, if this node still holds its lease; else the sweeper has failed it."""
    current = await CalculationRunRepository(ctx).load(session, run_id, for_update=True)
    if current is None or current.status != RunStatus.running.value or current.lease_owner != NODE_ID:
        raise Conflict(
            "the calculation run was interrupted before it completed; calculate again",
            reason=INTERRUPTED,
            run_id=str(run_id),
        )
    return current


async def _newer_run_completed(ctx: Ctx, session: AsyncSession, workspace: Workspace, run: CalculationRun) -> bool:
    """Has a run that started after this one already become the workspace's latest?"""
    if workspace.latest_calculation_run_id is None or workspace.latest_calculation_run_id == run.id:
        return False
    latest = await CalculationRunRepository(ctx).load(session, workspace.latest_calculation_run_id)
    if latest is None:
        return False
    return (latest.created_at, str(latest.id)) > (run.created_at, str(run.id))


def _legacy_content(report: LegacyReport | None) -> dict[str, Any] | None:
    if report is None:
        return None
    return {
        "id": str(report.id),
        "title": report.title,
        "reporting_period_start": report.reporting_period_start,
        "reporting_period_end": report.reporting_period_end,
        "status": report.status,
        "total_co2e_kg": report.total_co2e_kg,
        "shipment_count": report.shipment_count,
    }
