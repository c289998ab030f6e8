"""Reaching a pack and its artifacts within the caller's organisation.

Apart from the pack operations so that workspace reads (the latest pack of a workspace) and
approvals use the same lookups without importing the generation pipeline.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.errors import NotFound
from evidence_gateway.models import (
    ArtifactType,
    CalculationRun,
    DataQualityAssessment,
    PackArtifact,
    ReportPack,
    Workspace,
)
from evidence_gateway.resolvers.context import Ctx
from evidence_gateway.resolvers.validation import parse_id

_TYPE_ORDER = {t.value: i for i, t in enumerate(ArtifactType)}


@dataclass(frozen=True, slots=True)
class PackDetail:
    pack: ReportPack
    artifacts: list[PackArtifact]
    calculation_run: CalculationRun | None = None
    quality_assessment: DataQualityAssessment | None = None


async def load_pack(session: AsyncSession, ctx: Ctx, pack_id: Any, *, for_write: bool = False) -> ReportPack:
    """The only way to reach a pack: another organisation's id is simply not found."""
    pid = parse_id(pack_id, "pack")
    stmt = select(ReportPack).where(col(ReportPack.id) == pid, col(ReportPack.org_id) == ctx.org_id)
    if for_write:
        # Re-read under the lock even if this session already holds the row.
        stmt = stmt.with_for_update().execution_options(populate_existing=True)
    pack = (await session.execute(stmt)).scalar_one_or_none()
    if pack is None:
        raise NotFound("pack not found", resource="report_pack", id=str(pack_id))
    return pack


async def artifacts_of(session: AsyncSession, pack_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[PackArtifact]]:
    """Artifacts of each pack, in pack_hash (type) order."""
    out: dict[uuid.UUID, list[PackArtifact]] = {i: [] for i in pack_ids}
    if not pack_ids:
        return out
    rows = await session.execute(select(PackArtifact).where(col(PackArtifact.report_pack_id).in_(pack_ids)))
    for a in rows.scalars():
        out[a.report_pack_id].append(a)
    for items in out.values():
        items.sort(key=lambda a: _TYPE_ORDER.get(a.artifact_type, 99))
    return out


async def latest_pack(session: AsyncSession, ctx: Ctx, workspace: Workspace) -> PackDetail | None:
    """For workspace detail: the latest pack with its artifacts (for the *_url fields)."""
    if workspace.latest_report_pack_id is None:
        return None
    pack = (
        await session.execute(
            select(ReportPack).where(
                col(ReportPack.id) == workspace.latest_report_pack_id, col(ReportPack.org_id) == ctx.org_id
            )
        )
    ).scalar_one_or_none()
    if pack is None:
        return None
    return PackDetail(pack=pack, artifacts=(await artifacts_of(session, [pack.id]))[pack.id])
