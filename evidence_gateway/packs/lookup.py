"""Reaching a pack and its artifacts within the caller's organisation.

Apart from the pack operations so that the workspace detail and approvals share them without
importing the generation pipeline.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import NotFound
from evidence_gateway.models import (
    ArtifactType,
    CalculationRun,
    DataQualityAssessment,
    PackArtifact,
    ReportPack,
)
from evidence_gateway.store.record_types import (
    CalculationRunRecord,
    DataQualityAssessmentRecord,
    PackArtifactRecord,
    ReportPackRecord,
)
from evidence_gateway.store.repositories.packs import PackArtifactRepository, ReportPackRepository

_TYPE_ORDER = {t.value: i for i, t in enumerate(ArtifactType)}


@dataclass(frozen=True, slots=True)
class PackDetail:
    pack: ReportPack | ReportPackRecord
    artifacts: list[PackArtifact] | list[PackArtifactRecord]
    calculation_run: CalculationRun | CalculationRunRecord | None = None
    quality_assessment: DataQualityAssessment | DataQualityAssessmentRecord | None = None


async def load_pack(session: AsyncSession, ctx: Ctx, pack_id: uuid.UUID, *, for_write: bool = False) -> ReportPack:
    """The only way to reach a pack: another organisation's id is simply not found. The id is
    parsed by the resolver that received it (resolvers/validation.parse_id)."""
    pack = await ReportPackRepository(ctx).load(session, pack_id, for_update=for_write)
    if pack is None:
        raise NotFound("pack not found", resource="report_pack", id=str(pack_id))
    return pack


async def artifacts_of(session: AsyncSession, pack_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[PackArtifact]]:
    """Artifacts of each pack, in pack_hash (type) order."""
    out: dict[uuid.UUID, list[PackArtifact]] = {i: [] for i in pack_ids}
    if not pack_ids:
        return out
    for a in await PackArtifactRepository.entities_of_packs(session, pack_ids):
        out[a.report_pack_id].append(a)
    return {pack_id: in_type_order(items) for pack_id, items in out.items()}


def in_type_order(artifacts: Sequence[Any]) -> list[Any]:
    """Artifacts in pack_hash (type) order: the order every listing shows them in."""
    return sorted(artifacts, key=lambda a: _TYPE_ORDER.get(a.artifact_type, 99))
