"""The snapshot a pack's files show: taken inside the generation transaction, as plain data.

Everything except the shipment rows (streamed later by pack_render). Audit trail rules:
docs/packs.md "Audit trail".
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

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
from evidence_gateway.models import (
    ApiKey,
    ApprovalAction,
    CalculationRun,
    DataQualityAssessment,
    EmissionFactor,
    EvidenceItem,
    FactorVersion,
    ImportBatch,
    LegacyReport,
    MethodologyProfile,
    ReportPack,
    Shipment,
    Workspace,
)
from evidence_gateway.resolvers.context import Ctx


async def take_snapshot(
    session: AsyncSession,
    ctx: Ctx,
    workspace: Workspace,
    run: CalculationRun,
    assessment: DataQualityAssessment | None,
    legacy: LegacyReport | None,
    *,
    pack_id: uuid.UUID,
) -> tuple[list[ImportBatch], PackData]:
    """The workspace's imports (in import order) and the data of the pack being generated."""
    imports = list(
        (
            await session.execute(
                select(ImportBatch)
                .where(col(ImportBatch.workspace_id) == workspace.id, col(ImportBatch.org_id) == ctx.org_id)
                .order_by(col(ImportBatch.created_at).asc(), col(ImportBatch.id).asc())
            )
        ).scalars()
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
        evidence=await _evidence(session, ctx, workspace.id),
        audit=await _audit(session, ctx, workspace.id, run, imports, exclude_pack=pack_id),
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
    profile = await session.get(MethodologyProfile, run.methodology_profile_id)
    if profile is None:
        return None
    version_id = run.factor_version_id or profile.factor_version_id
    version = await session.get(FactorVersion, version_id)
    factors = (
        await session.execute(
            select(EmissionFactor)
            .where(col(EmissionFactor.factor_version_id) == version_id)
            .order_by(col(EmissionFactor.kind), col(EmissionFactor.key))
        )
    ).scalars()
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
        factors=[FactorInfo(f.kind, f.key, f.unit, f.wtw_value, f.ttw_value, f.source, f.note) for f in factors],
    )


async def _evidence(session: AsyncSession, ctx: Ctx, workspace_id: uuid.UUID) -> list[EvidenceInfo]:
    """Items attached to the workspace, to one of its shipments, or to one of its packs."""
    packs = select(ReportPack.id).where(
        col(ReportPack.workspace_id) == workspace_id, col(ReportPack.org_id) == ctx.org_id
    )
    shipments = select(Shipment.id).where(
        col(Shipment.workspace_id) == workspace_id, col(Shipment.org_id) == ctx.org_id
    )
    rows = await session.execute(
        select(EvidenceItem)
        .where(
            col(EvidenceItem.org_id) == ctx.org_id,
            or_(
                col(EvidenceItem.workspace_id) == workspace_id,
                col(EvidenceItem.report_pack_id).in_(packs),
                col(EvidenceItem.shipment_id).in_(shipments),
            ),
        )
        .order_by(col(EvidenceItem.uploaded_at).asc(), col(EvidenceItem.id).asc())
    )
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
        for e in rows.scalars()
    ]


async def _audit(
    session: AsyncSession,
    ctx: Ctx,
    workspace_id: uuid.UUID,
    run: CalculationRun,
    imports: list[ImportBatch],
    *,
    exclude_pack: uuid.UUID,
) -> list[AuditEvent]:
    """docs/packs.md "Audit trail": imports, runs up to the pack's run, reviewed packs, approvals.

    A pack's own generation is not in its trail (its time would make the bytes differ), and an
    earlier pack appears only once someone acted on it: regenerating unchanged inputs with no
    review in between gives the same trail, hence the same pack_hash.
    """
    runs = list(
        (
            await session.execute(
                select(CalculationRun)
                .where(
                    col(CalculationRun.workspace_id) == workspace_id,
                    col(CalculationRun.org_id) == ctx.org_id,
                    col(CalculationRun.created_at) <= run.created_at,
                )
                .order_by(col(CalculationRun.created_at).asc(), col(CalculationRun.id).asc())
            )
        ).scalars()
    )
    actions = list(
        (
            await session.execute(
                select(ApprovalAction)
                .where(col(ApprovalAction.workspace_id) == workspace_id, col(ApprovalAction.org_id) == ctx.org_id)
                .order_by(col(ApprovalAction.created_at).asc(), col(ApprovalAction.id).asc())
            )
        ).scalars()
    )
    acted_on = {a.report_pack_id for a in actions} - {exclude_pack}
    packs = (
        list((await session.execute(select(ReportPack).where(col(ReportPack.id).in_(acted_on)))).scalars())
        if acted_on
        else []
    )
    versions = {p.id: p.version_number for p in packs}
    key_ids = {k for k in [*(b.api_key_id for b in imports), *(r.api_key_id for r in runs),
                           *(a.api_key_id for a in actions), *(p.api_key_id for p in packs)] if k}  # fmt: skip
    prefixes: dict[uuid.UUID, str] = {}
    if key_ids:
        found = await session.execute(select(ApiKey.id, ApiKey.display_prefix).where(col(ApiKey.id).in_(key_ids)))
        prefixes = {row.id: row.display_prefix for row in found}

    def event(at: Any, name: str, key: uuid.UUID | None, kind: str, subject: uuid.UUID, text: str) -> AuditEvent:
        return AuditEvent(at, name, key, prefixes.get(key) if key else None, kind, subject, text)

    events = [
        event(
            b.created_at,
            "import_registered",
            b.api_key_id,
            "import_batch",
            b.id,
            f"{b.source_filename or 'unnamed source'} ({b.source_file_type or 'type not given'}, "
            f"system {b.source_system or 'not given'}): {b.source_row_count} rows declared, "
            f"{b.shipment_count} shipment rows stored",
        )
        for b in imports
    ]
    for r in runs:
        total = "n/a" if r.total_co2e_kg is None else f"{r.total_co2e_kg!r} kg CO2e"
        events.append(
            event(
                r.created_at,
                f"calculation_{r.status}",
                r.api_key_id,
                "calculation_run",
                r.id,
                f"completed_at {r.completed_at.isoformat() if r.completed_at else 'n/a'}; "
                f"rerun_hash {r.rerun_hash or 'n/a'}; {total}; {r.shipment_count} shipments"
                + (f"; error: {r.error_message}" if r.error_message else ""),
            )
        )
    for p in packs:
        events.append(
            event(
                p.created_at,
                "pack_generated",
                p.api_key_id,
                "report_pack",
                p.id,
                f"version {p.version_number}; pack_hash {p.pack_hash or 'n/a'}; calculation run {p.calculation_run_id}",
            )
        )
    for a in actions:
        version = versions.get(a.report_pack_id)
        events.append(
            event(
                a.created_at,
                f"approval_{a.action_type}",
                a.api_key_id,
                "report_pack",
                a.report_pack_id,
                f"pack version {version if version is not None else '?'}: {a.status_before} -> {a.status_after}"
                + (f"; comment: {a.comment}" if a.comment else ""),
            )
        )
    events.sort(key=lambda e: (e.occurred_at, e.event, str(e.subject_id)))
    return events
