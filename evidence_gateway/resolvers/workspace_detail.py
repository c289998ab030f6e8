"""The workspace detail: the workspace with its latest run, assessment and pack (with its
artifacts), in two statements at most (WorkspaceRepository.detail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import NotFound
from evidence_gateway.packs.lookup import PackDetail, in_type_order
from evidence_gateway.resolvers.validation import parse_id
from evidence_gateway.store.record_types import WorkspaceRecord
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository


@dataclass(frozen=True, slots=True)
class WorkspaceDetail:
    """A workspace with its latest run, pack and assessment (None until they exist)."""

    workspace: WorkspaceRecord
    latest_calculation_run: Any = None
    latest_pack: PackDetail | None = None
    latest_quality_assessment: Any = None


async def get_workspace_detail(ctx: Ctx, workspace_id: Any) -> WorkspaceDetail:
    found = await WorkspaceRepository(ctx).detail(parse_id(workspace_id, "workspace"))
    if found is None:
        raise NotFound("workspace not found", resource="workspace", id=str(workspace_id))
    pack = found.latest_pack
    return WorkspaceDetail(
        workspace=found.workspace,
        latest_calculation_run=found.latest_calculation_run,
        latest_pack=PackDetail(pack=pack, artifacts=in_type_order(found.latest_pack_artifacts))
        if pack is not None
        else None,
        latest_quality_assessment=found.latest_quality_assessment,
    )
