"""Reading packs, their artifacts and approvals: what both transports and the DataLoaders ask,
through the repositories; and opening an artifact's download."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import Any

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import Conflict, NotFound
from evidence_gateway.models import (
    ArtifactStatus,
)
from evidence_gateway.packs.download import Download, SignedLink
from evidence_gateway.packs.lookup import PackDetail, in_type_order
from evidence_gateway.resolvers.list_queries import PACKS, parse_list_query
from evidence_gateway.resolvers.pagination import Page, PageParams
from evidence_gateway.resolvers.validation import parse_id
from evidence_gateway.store.record_types import ApprovalActionRecord, PackArtifactRecord, ReportPackRecord
from evidence_gateway.store.repositories.packs import ApprovalRepository, PackArtifactRepository, ReportPackRepository

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ListedPack:
    """A pack of a list with its artifacts (its file URLs are read from them)."""

    pack: ReportPackRecord
    artifacts: list[PackArtifactRecord]


async def list_packs(ctx: Ctx, params: PageParams, filters: Any = None, order: Any = None) -> Page[ListedPack]:
    """Every pack of the caller's workspaces, newest first (or in ``order``), narrowed by
    ``filters`` (list_queries.PACKS); the page's artifacts in one more read."""
    found = await ReportPackRepository(ctx).page(params, parse_list_query(PACKS, filters, order))
    artifacts = await PackArtifactRepository(ctx).of_packs([p.id for p in found.items])
    items = [ListedPack(p, in_type_order(artifacts.get(p.id, []))) for p in found.items]
    return Page(items=items, page=found.page, per_page=found.per_page, total=found.total)


async def get_pack_detail(ctx: Ctx, pack_id: Any) -> PackDetail:
    """GET /packs/{id}: the pack with its run, assessment and artifacts (two reads at once)."""
    found = await ReportPackRepository(ctx).detail(parse_id(pack_id, "pack"))
    if found is None:
        raise NotFound("pack not found", resource="report_pack", id=str(pack_id))
    return PackDetail(
        pack=found.pack,
        artifacts=in_type_order(found.artifacts),
        calculation_run=found.calculation_run,
        quality_assessment=found.quality_assessment,
    )


async def get_pack(ctx: Ctx, pack_id: Any) -> ReportPackRecord:
    """The caller's pack as a record."""
    found = await ReportPackRepository(ctx).get(parse_id(pack_id, "pack"))
    if found is None:
        raise NotFound("pack not found", resource="report_pack", id=str(pack_id))
    return found


async def list_artifacts(ctx: Ctx, pack_id: Any) -> list[PackArtifactRecord]:
    """GET /packs/{id}/artifacts: all nine, in pack_hash order."""
    found = await ReportPackRepository(ctx).artifacts(parse_id(pack_id, "pack"))
    if found is None:
        raise NotFound("pack not found", resource="report_pack", id=str(pack_id))
    return in_type_order(found)


# ---- downloads ----------------------------------------------------------------------------------


async def open_download(caller: Ctx | SignedLink, artifact_id: Any) -> Download:
    """GET /artifacts/{id}/download: a key reads its organisation's artifacts, a signed link the
    one it was signed for; only a generated artifact has bytes (409 otherwise)."""
    aid = parse_id(artifact_id, "artifact")
    if isinstance(caller, SignedLink):
        if parse_id(caller.artifact_id, "artifact") != aid:
            raise NotFound("artifact not found", resource="pack_artifact", id=str(artifact_id))
        artifact = await PackArtifactRepository.entity_for_link(caller.db, aid)
    else:
        artifact = await PackArtifactRepository(caller).entity(aid)
    if artifact is None:
        raise NotFound("artifact not found", resource="pack_artifact", id=str(artifact_id))
    if artifact.status != ArtifactStatus.generated.value:
        raise Conflict("artifact has no content", reason=f"artifact is {artifact.status}", status=artifact.status)
    return Download(artifact, caller.db)


# ---- DataLoader batch functions -----------------------------------------------------------------


async def packs_by_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, ReportPackRecord]:
    return await ReportPackRepository(ctx).get_many(ids)


async def packs_by_workspace_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ReportPackRecord]]:
    """Every pack of each workspace, newest version first."""
    return await ReportPackRepository(ctx).of_workspaces(ids)


async def artifacts_by_pack_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[PackArtifactRecord]]:
    found = await PackArtifactRepository(ctx).of_packs(ids)
    return {pack_id: in_type_order(items) for pack_id, items in found.items()}


async def approvals_by_pack_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ApprovalActionRecord]]:
    """Every approval action of each pack, oldest first."""
    return await ApprovalRepository(ctx).of_packs(ids)
