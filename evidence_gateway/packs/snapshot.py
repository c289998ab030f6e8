"""The snapshot a pack's files show: taken inside the generation transaction, as plain data.

Everything except the shipment rows (streamed later by rows.py and render.py). Audit trail rules:
docs/packs.md "Audit trail".
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.artifacts.data import (
    AuditEvent,
    EvidenceInfo,
    FactorInfo,
    LegacyInfo,
    MethodologyInfo,
    PackData,
    QualityInfo,
    RunInfo,
    WorkspaceInfo,
)
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.errors import InternalError
from evidence_gateway.models import (
    CalculationRun,
    DataQualityAssessment,
    ImportBatch,
    LegacyReport,
    ReportPack,
)
from evidence_gateway.store.repositories import methodology as profiles
from evidence_gateway.store.repositories.calculations import AssessmentRepository, CalculationRunRepository
from evidence_gateway.store.repositories.events import EventRepository
from evidence_gateway.store.repositories.evidence import EvidenceItemRepository
from evidence_gateway.store.repositories.imports import ImportBatchRepository
from evidence_gateway.store.repositories.legacy import LegacyReportRepository
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository


async def take_snapshot(session: AsyncSession, ctx: Ctx, pack: ReportPack) -> tuple[list[ImportBatch], PackData]:
    """The workspace's imports (in import order) and the data the pack's files show.

    Everything is read by what the pack recorded at allocation (its run, assessment, legacy
    report, creation time and event sequence), so rendering now or later from a queue gives
    the same files.
    """
    workspace = await WorkspaceRepository(ctx).load(session, pack.workspace_id)
    if workspace is None:  # a pack's workspace is never deleted
        raise InternalError("the workspace of the pack is gone", pack_id=str(pack.id))
    run = (
        await CalculationRunRepository(ctx).load(session, pack.calculation_run_id) if pack.calculation_run_id else None
    )
    if run is None:  # a generated pack always names its run
        raise InternalError("the calculation run of the pack is gone", pack_id=str(pack.id))
    assessment = (
        await AssessmentRepository(ctx).load(session, pack.data_quality_assessment_id)
        if pack.data_quality_assessment_id
        else None
    )
    legacy = await LegacyReportRepository(ctx).load(session, pack.legacy_report_id) if pack.legacy_report_id else None
    # The run's imports: any later one would have superseded it (data_version).
    imports = await ImportBatchRepository(ctx).in_import_order(
        session, workspace.id, until=run.completed_at or run.created_at
    )
    snapshot = PackData(
        workspace=WorkspaceInfo(
            workspace.id,
            workspace.name,
            workspace.external_reference,
            workspace.reporting_period_start,
            workspace.reporting_period_end,
        ),
        run=_run_info(run),
        quality=_quality_info(assessment),
        methodology=await _methodology_info(session, run),
        legacy_report=_legacy_info(legacy),
        evidence=await _evidence(session, ctx, workspace.id, pack),
        audit=await audit_trail(session, ctx, workspace.id, pack.audit_sequence or 0, exclude_pack=pack.id),
    )
    return imports, snapshot


def _run_info(run: CalculationRun) -> RunInfo:
    return RunInfo(
        id=run.id,
        status=run.status,
        methodology_profile_id=run.methodology_profile_id,
        factor_version_id=run.factor_version_id,
        legacy_report_id=run.legacy_report_id,
        rerun_hash=run.rerun_hash,
        assumptions_snapshot=dict(run.assumptions_snapshot_json or {}),
        created_at=run.created_at,
        completed_at=run.completed_at,
        total_co2e_kg=run.total_co2e_kg,
        total_tonne_km=run.total_tonne_km,
        shipment_count=run.shipment_count,
        totals_by_mode=dict(run.totals_by_mode_json or {}),
        api_key_id=run.api_key_id,
        total_co2e_wtw_kg=run.total_co2e_wtw_kg,
        total_co2e_ttw_kg=run.total_co2e_ttw_kg,
        excluded_co2e_kg=run.excluded_co2e_kg,
        iso14083=dict(run.iso14083_json or {}),
        hubs=dict(run.hubs_json or {}),
    )


def _quality_info(a: DataQualityAssessment | None) -> QualityInfo | None:
    if a is None:
        return None
    return QualityInfo(
        id=a.id,
        coverage_score=a.coverage_score,
        primary_data_percent=a.primary_data_percent,
        secondary_data_percent=a.secondary_data_percent,
        default_data_percent=a.default_data_percent,
        modelled_data_percent=a.modelled_data_percent,
        missing_required_fields_count=a.missing_required_fields_count,
        flagged_shipments_count=a.flagged_shipments_count,
        rules_triggered=list(a.rules_triggered_json or []),
        summary_text=a.summary_text,
        assessed_at=a.assessed_at,
        primary_data_share_percent=a.primary_data_share_percent,
        primary_data_rows_percent=a.primary_data_rows_percent,
        coverage_tonne_km_percent=a.coverage_tonne_km_percent,
        excluded_co2e_kg=a.excluded_co2e_kg,
    )


def _legacy_info(r: LegacyReport | None) -> LegacyInfo | None:
    if r is None:
        return None
    return LegacyInfo(
        r.id, r.title, r.reporting_period_start, r.reporting_period_end, r.status, r.total_co2e_kg, r.shipment_count
    )


async def _methodology_info(session: AsyncSession, run: CalculationRun) -> MethodologyInfo | None:
    if run.methodology_profile_id is None:
        return None
    profile = await profiles.get(session, run.methodology_profile_id)
    if profile is None:
        return None
    version_id = run.factor_version_id or profile.factor_version_id
    version = await profiles.factor_version(session, version_id)
    factors = await profiles.factors_of(session, version_id)
    return MethodologyInfo(
        profile_id=profile.id,
        code=profile.code,
        name=profile.name,
        description=profile.description,
        boundary=profile.boundary,
        factor_version_id=version_id,
        factor_version_code=version.code if version else "",
        factor_version_name=version.name if version else "",
        factor_version_source=version.source if version else "",
        factor_version_published_on=version.published_on if version else None,
        factors=[
            FactorInfo(
                f.kind,
                f.key,
                f.unit,
                f.wtw_value,
                f.ttw_value,
                f.source,
                f.note,
                f.id,
                f.dataset,
                f.dataset_version,
                f.source_row_id,
            )
            for f in factors
        ],  # fmt: skip
    )


async def _evidence(session: AsyncSession, ctx: Ctx, workspace_id: uuid.UUID, pack: ReportPack) -> list[EvidenceInfo]:
    """Items attached to the workspace, to one of its shipments, or to one of its packs, up to the
    pack's allocation."""
    items = await EvidenceItemRepository(ctx).for_pack(session, workspace_id, pack.created_at)
    return [
        EvidenceInfo(
            id=e.id,
            evidence_type=e.evidence_type,
            title=e.title,
            file_name=e.file_name,
            file_url=e.file_url,
            file_sha256=e.file_sha256,
            mime_type=e.mime_type,
            issue_date=e.issue_date,
            valid_from=e.valid_from,
            valid_to=e.valid_to,
            source_system=e.source_system,
            verification_status=e.verification_status,
            attachment_scope=e.attachment_scope,
            workspace_id=e.workspace_id,
            report_pack_id=e.report_pack_id,
            shipment_id=e.shipment_id,
            notes=e.notes,
            uploaded_at=e.uploaded_at,
        )
        for e in items
    ]


# The log's types that enter an audit trail, and their names in the CSV (docs/packs.md).
_AUDITED = (
    EventType.import_registered,
    EventType.calculation_completed,
    EventType.calculation_failed,
    EventType.pack_generated,
    EventType.pack_status_changed,
)


async def audit_trail(
    session: AsyncSession, ctx: Ctx, workspace_id: uuid.UUID, upto_sequence: int, *, exclude_pack: uuid.UUID
) -> list[AuditEvent]:
    """docs/packs.md "Audit trail", read from the event log in one ordered query.

    Imports, runs, approvals, and earlier packs someone acted on, up to the pack's allocation.
    A pack's own generation is not in its trail (its time would make the bytes differ), and an
    earlier pack appears only once someone acted on it: regenerating unchanged inputs with no
    review in between gives the same trail, hence the same pack_hash.
    """
    rows = await EventRepository(ctx).audit_rows(session, workspace_id, upto_sequence, [t.value for t in _AUDITED])
    reviewed = {r.subject_id for r in rows if r.type == EventType.pack_status_changed and r.data.get("action_type")}
    reviewed.discard(exclude_pack)
    trail = []
    for r in rows:
        entry = _audit_entry(r.type, r.data, reviewed, r.subject_id)
        if entry is not None:
            name, text = entry
            trail.append(AuditEvent(r.occurred_at, name, r.actor, r.display_prefix, r.subject_type, r.subject_id, text))
    return trail


def _audit_entry(type_: str, d: dict[str, Any], reviewed: set[uuid.UUID], subject: uuid.UUID) -> tuple[str, str] | None:
    if type_ == EventType.import_registered:
        return "import_registered", (
            f"{d.get('source_filename') or 'unnamed source'} ({d.get('source_file_type') or 'type not given'}, "
            f"system {d.get('source_system') or 'not given'}): {d.get('source_row_count')} rows declared, "
            f"{d.get('shipment_count')} shipment rows stored"
        )
    if type_ in (EventType.calculation_completed, EventType.calculation_failed):
        total = "n/a" if d.get("total_co2e_kg") is None else f"{d['total_co2e_kg']!r} kg CO2e"
        return f"calculation_{d.get('status')}", (
            f"completed_at {d.get('completed_at') or 'n/a'}; rerun_hash {d.get('rerun_hash') or 'n/a'}; "
            f"{total}; {d.get('shipment_count')} shipments"
            + ("; superseded by newer data or a newer run" if d.get("superseded") else "")
            + (f"; error: {d['error_message']}" if d.get("error_message") else "")
        )
    if type_ == EventType.pack_generated:
        if subject not in reviewed:
            return None
        return "pack_generated", (
            f"version {d.get('version_number')}; pack_hash {d.get('pack_hash') or 'n/a'}; "
            f"calculation run {d.get('calculation_run_id')}"
        )
    action = d.get("action_type")
    if type_ == EventType.pack_status_changed and action:
        comment = d.get("comment")
        return f"approval_{action}", (
            f"pack version {d.get('version_number')}: {d.get('status_before')} -> {d.get('status_after')}"
            + (f"; comment: {comment}" if comment else "")
        )
    return None
