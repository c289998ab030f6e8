"""Evidence packs: versioned generation from the workspace state, reading, artifact content.

Generation runs in three steps so no write lock is held while files render:
1. one unit of work locks the workspace, allocates the next version (max + 1; the unique
   constraint is the backstop), stores the pack as ``draft`` with nine ``pending`` artifacts
   and a lease (or queued, for ``Prefer: respond-async``), and records the event sequence the
   audit trail will show;
2. the node holding the lease takes the snapshot, renders each artifact in a worker thread
   (shipment rows streamed from the database) and stores each in its own short transaction,
   renewing the lease meanwhile;
3. one unit of work marks the pack ``generated`` with its ``pack_hash``, archives older
   never-published versions and, if the pack still reflects the workspace's latest run, moves
   the workspace to ``review_needed``.
A failure in 2 or 3 marks the pack and all its artifacts ``failed`` (contents removed), with a
``pack.failed`` event; so does the sweeper when the lease runs out (the node died).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.artifacts import pack_hash, specs
from evidence_gateway.core import checkpoints
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.leases import NODE_ID, expiry, wake_workers
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import UnitOfWork, unit_of_work
from evidence_gateway.errors import Conflict, InvalidInput
from evidence_gateway.models import (
    ArtifactStatus,
    ArtifactType,
    CalculationRun,
    LegacyReport,
    PackArtifact,
    PackStatus,
    ReportPack,
    RunStatus,
    Workspace,
    WorkspaceStatus,
)
from evidence_gateway.packs.lookup import artifacts_of, load_pack
from evidence_gateway.packs.render import render_and_store
from evidence_gateway.packs.snapshot import take_snapshot
from evidence_gateway.read_models.representation import pack_json
from evidence_gateway.resolvers.leased import INTERRUPTED, run_leased
from evidence_gateway.resolvers.pack_failures import fail_pack
from evidence_gateway.resolvers.preconditions import touch
from evidence_gateway.resolvers.validation import StrictInput, UUIDField, parse
from evidence_gateway.resolvers.workspaces import (
    load_workspace,
    load_writable_workspace,
    move_workspace,
    periods_overlap,
)
from evidence_gateway.store.repositories.calculations import AssessmentRepository, CalculationRunRepository
from evidence_gateway.store.repositories.events import EventRepository
from evidence_gateway.store.repositories.legacy import LegacyReportRepository
from evidence_gateway.store.repositories.packs import ReportPackRepository

log = logging.getLogger(__name__)

VERSION_RETRIES = 5
# Workspace states from which a pack may be built: the latest calculation is current.
_BUILDABLE = {
    WorkspaceStatus.calculated.value,
    WorkspaceStatus.review_needed.value,
    WorkspaceStatus.approved.value,
    WorkspaceStatus.published.value,
}
_KEEP_ON_NEW_VERSION = (PackStatus.published.value, PackStatus.archived.value, PackStatus.failed.value)


class GeneratePackInput(StrictInput):
    legacy_report_id: UUIDField | None = None


@dataclass(slots=True)
class GeneratedPack:
    pack: ReportPack
    artifacts: list[PackArtifact]
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class QueuedPack:
    """Prefer: respond-async: the version is allocated and queued; any node's worker renders it."""

    pack: ReportPack
    artifacts: list[PackArtifact]


# ---- generation -------------------------------------------------------------------------------


async def generate_pack(ctx: Ctx, workspace_id: Any, data: Any) -> GeneratedPack | QueuedPack:
    """POST /workspaces/{id}/packs: next version, nine rendered artifacts, workspace -> review_needed."""
    payload = parse(GeneratePackInput, data if data is not None else {})
    pack = await _allocate_with_retry(ctx, workspace_id, payload)
    if ctx.respond_async:
        wake_workers()
        return QueuedPack(pack, [])
    return await execute_pack(ctx, pack.id)


async def execute_pack(ctx: Ctx, pack_id: uuid.UUID) -> GeneratedPack:
    """Render and store a pack this node holds the lease of, renewing it meanwhile."""

    async def work() -> GeneratedPack:
        await checkpoints.reached(checkpoints.PACK_ALLOCATED, ctx.settings.pause_at)
        async with ctx.db.snapshot() as session:
            pack = await load_pack(session, ctx, pack_id)
            artifacts = (await artifacts_of(session, [pack.id]))[pack.id]
            imports, data = await take_snapshot(session, ctx, pack)
        by_type = {a.artifact_type: a for a in artifacts}
        hashes = await render_and_store(ctx, data, [b.id for b in imports], by_type)
        rows, evidence = data.run.shipment_count, len(data.evidence)
        return await _finalize(ctx, pack, hashes, shipment_rows=rows, evidence=evidence)

    renew = partial(renew_pack_lease, ctx, pack_id)
    return await run_leased(
        ctx,
        pack_id,
        what="pack generation",
        masked=("pack rendering failed", "pack_id"),
        renew=renew,
        work=work,
        fail=fail_pack,
    )


async def renew_pack_lease(ctx: Ctx, pack_id: uuid.UUID) -> None:
    await ReportPackRepository(ctx).renew_lease(pack_id, NODE_ID, expiry(ctx.settings.lease_seconds))


async def _allocate_with_retry(ctx: Ctx, workspace_id: Any, payload: GeneratePackInput) -> ReportPack:
    for attempt in range(VERSION_RETRIES):
        try:
            return await _allocate(ctx, workspace_id, payload)
        except IntegrityError:
            # Only reachable if two writers got past the workspace lock; take the next number.
            if attempt == VERSION_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


async def _allocate(ctx: Ctx, workspace_id: Any, payload: GeneratePackInput) -> ReportPack:
    async with unit_of_work(ctx) as uow:
        session = uow.session
        workspace = await load_writable_workspace(session, ctx, workspace_id)
        run = await _current_run(session, ctx, workspace)
        legacy = await _legacy_for_pack(session, ctx, workspace, payload.legacy_report_id or run.legacy_report_id)
        assessment = await AssessmentRepository(ctx).load_of_run(session, run.id)
        last = await ReportPackRepository(ctx).highest_version(session, workspace.id)
        # Every event committed so far (a gapless prefix, see events.py): the audit trail's end.
        audit_sequence = await EventRepository(ctx).last_sequence(session)
        version = last + 1
        now = utcnow()
        queued = ctx.respond_async
        pack = ReportPack(
            workspace_id=workspace.id,
            org_id=ctx.org_id,
            legacy_report_id=legacy.id if legacy else None,
            version_number=version,
            title=f"{workspace.name}: evidence pack v{version}"[:300],
            status=PackStatus.draft.value,
            methodology_profile_id=run.methodology_profile_id,
            calculation_run_id=run.id,
            data_quality_assessment_id=assessment.id if assessment else None,
            export_template_id=run.export_template_id,
            rerun_hash=run.rerun_hash,
            superseded_pack_id=workspace.latest_report_pack_id,
            api_key_id=ctx.actor,
            created_at=now,
            audit_sequence=audit_sequence,
            lease_owner=None if queued else NODE_ID,
            lease_expires_at=None if queued else expiry(ctx.settings.lease_seconds),
        )
        session.add(pack)
        await session.flush()  # the unique (workspace_id, version_number) constraint speaks here
        artifacts = [
            PackArtifact(
                report_pack_id=pack.id,
                workspace_id=workspace.id,
                org_id=ctx.org_id,
                artifact_type=spec.artifact_type.value,
                status=ArtifactStatus.pending.value,
                file_name=spec.file_name(workspace.name, version),
                content_type=spec.content_type,
                created_at=now,
            )
            for spec in specs().values()
        ]
        session.add_all(artifacts)
        if queued:
            uow.respond(QueuedPack(pack, artifacts))
    return pack


async def _current_run(session: AsyncSession, ctx: Ctx, workspace: Workspace) -> CalculationRun:
    run = None
    if workspace.latest_calculation_run_id is not None:
        run = await CalculationRunRepository(ctx).load(session, workspace.latest_calculation_run_id)
    if run is None or run.status != RunStatus.completed.value:
        raise Conflict(
            "a completed calculation is required before generating a pack: POST /v2/workspaces/{id}/calculate",
            reason="no_completed_calculation",
            workspace_status=workspace.status,
        )
    if workspace.status not in _BUILDABLE:
        raise Conflict(
            "the workspace has data newer than its latest calculation: calculate again before generating a pack",
            reason="calculation_outdated",
            workspace_status=workspace.status,
        )
    return run


async def _legacy_for_pack(
    session: AsyncSession, ctx: Ctx, workspace: Workspace, legacy_id: uuid.UUID | None
) -> LegacyReport | None:
    if legacy_id is None:
        return None
    report = await LegacyReportRepository(ctx).load(session, legacy_id)
    if report is None:
        raise InvalidInput(fields={"legacy_report_id": "unknown legacy report"})
    if not periods_overlap(
        workspace.reporting_period_start,
        workspace.reporting_period_end,
        report.reporting_period_start,
        report.reporting_period_end,
    ):
        raise Conflict(
            "no compatible legacy report available",
            reason="reporting periods do not overlap",
            legacy_report_id=str(legacy_id),
        )
    return report


async def _finalize(
    ctx: Ctx, allocated: ReportPack, hashes: dict[str, str], *, shipment_rows: int, evidence: int
) -> GeneratedPack:
    digest = pack_hash(hashes[t.value] for t in ArtifactType)
    async with unit_of_work(ctx) as uow:
        session = uow.session
        workspace = await load_workspace(session, ctx, allocated.workspace_id, for_write=True)
        current = await ReportPackRepository(ctx).load(session, allocated.id, for_update=True)
        if current is None or current.lease_owner != NODE_ID:
            raise Conflict(
                "the pack generation was interrupted before it completed; generate again",
                reason=INTERRUPTED,
                pack_id=str(allocated.id),
            )
        current.pack_hash = digest
        current.lease_owner = None
        current.lease_expires_at = None
        touch(current)
        if current.status == PackStatus.draft.value:
            current.status = PackStatus.generated.value
        # else: a newer version finished first and archived this one; it stays archived.
        artifacts = (await artifacts_of(session, [current.id]))[current.id]
        uow.emit(
            EventType.pack_generated,
            "report_pack",
            current.id,
            {**pack_json(current, artifacts, ctx.settings), "artifact_count": len(artifacts)},
            workspace_id=workspace.id,
        )
        # Only a pack of the workspace's current run becomes its latest: an import or a newer
        # run that landed during rendering leaves the workspace where it is.
        is_latest = (
            current.status == PackStatus.generated.value
            and workspace.latest_calculation_run_id == current.calculation_run_id
            and workspace.status in _BUILDABLE
        )
        superseded: list[uuid.UUID] = []
        if is_latest:
            superseded = await _archive_older(uow, workspace, current)
            workspace.latest_report_pack_id = current.id
            move_workspace(uow, workspace, WorkspaceStatus.review_needed)
            if current.data_quality_assessment_id is not None:
                await AssessmentRepository(ctx).attach_to_pack(session, current.data_quality_assessment_id, current.id)
        meta = {
            "calculation_run_id": current.calculation_run_id,
            "data_quality_assessment_id": current.data_quality_assessment_id,
            "rerun_hash": current.rerun_hash,
            "legacy_report_id": current.legacy_report_id,
            "version_number": current.version_number,
            "pack_hash": digest,
            "artifact_count": len(artifacts),
            "shipment_rows": shipment_rows,
            "evidence_item_count": evidence,
            "supersedes_pack_id": allocated.superseded_pack_id,
            "superseded_pack_ids": sorted(superseded, key=str),
            "superseded": bool(superseded),
        }
        generated = GeneratedPack(pack=current, artifacts=artifacts, meta=meta)
        uow.respond(generated)
    return generated


async def _archive_older(uow: UnitOfWork, workspace: Workspace, current: ReportPack) -> list[uuid.UUID]:
    older = await ReportPackRepository(uow.ctx).older_versions(
        uow.session, workspace.id, current.version_number, except_in=_KEEP_ON_NEW_VERSION
    )
    artifacts = await artifacts_of(uow.session, [p.id for p in older])
    archived = []
    for old in older:
        before = old.status
        old.status = PackStatus.archived.value
        touch(old)
        archived.append(old.id)
        uow.emit(
            EventType.pack_status_changed,
            "report_pack",
            old.id,
            {**pack_json(old, artifacts[old.id], uow.ctx.settings), "status_before": before, "status_after": old.status,
             "reason": "superseded"},
            workspace_id=workspace.id,
        )  # fmt: skip
    return archived
