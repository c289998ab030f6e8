"""The workspace detail: the workspace with its latest run, assessment and pack (with its
artifacts), in two statements at most: the workspace joined to its latest run, assessment and
pack (store/joined.py), then the pack's artifacts when there is a pack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, bindparam, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned, rows, table_of
from evidence_gateway.errors import NotFound
from evidence_gateway.models import CalculationRun, DataQualityAssessment, PackArtifact, ReportPack, Workspace
from evidence_gateway.packs.lookup import PackDetail, in_type_order
from evidence_gateway.resolvers.validation import parse_id
from evidence_gateway.store.joined import Joined

_WS: Table = table_of(Workspace)
_RUN: Table = table_of(CalculationRun)
_ASSESSMENT: Table = table_of(DataQualityAssessment)
_PACK: Table = table_of(ReportPack)
_ARTIFACT: Table = table_of(PackArtifact)

_DETAIL = Joined(
    _WS,
    (_RUN, _RUN.c.id == _WS.c.latest_calculation_run_id),
    (_ASSESSMENT, _ASSESSMENT.c.calculation_run_id == _WS.c.latest_calculation_run_id),
    (_PACK, _PACK.c.id == _WS.c.latest_report_pack_id),
    where=_WS.c.id == bindparam("workspace_id"),
)
_ARTIFACTS = select(*_ARTIFACT.c).where(_ARTIFACT.c.report_pack_id == bindparam("pack_id"), owned(_ARTIFACT))


@dataclass(frozen=True, slots=True)
class WorkspaceDetail:
    """A workspace with its latest run, pack and assessment (None until they exist)."""

    workspace: Any
    latest_calculation_run: Any = None
    latest_pack: PackDetail | None = None
    latest_quality_assessment: Any = None


async def get_workspace_detail(ctx: Ctx, workspace_id: Any) -> WorkspaceDetail:
    found = await rows(ctx, _DETAIL.statement, workspace_id=parse_id(workspace_id, "workspace"))
    if not found:
        raise NotFound("workspace not found", resource="workspace", id=str(workspace_id))
    workspace, run, assessment, pack = _DETAIL.split(found[0])
    artifacts = await rows(ctx, _ARTIFACTS, pack_id=pack.id) if pack is not None else []
    return WorkspaceDetail(
        workspace=workspace,
        latest_calculation_run=run,
        latest_pack=PackDetail(pack=pack, artifacts=in_type_order(artifacts)) if pack is not None else None,
        latest_quality_assessment=assessment,
    )
