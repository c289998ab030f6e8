"""The workspace detail: the workspace with its latest run, assessment and pack (with its
artifacts), read in one go.

Every statement is keyed by the workspace id and scoped to the caller's organisation, and the
latest run and pack are reached through the workspace row inside the statement, so the five
reads are independent of one another: on SQLite they cost one hop to the reader thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, bindparam, select

from evidence_gateway.errors import NotFound
from evidence_gateway.models import CalculationRun, DataQualityAssessment, PackArtifact, ReportPack, Workspace
from evidence_gateway.resolvers.context import Ctx
from evidence_gateway.resolvers.packs import PackDetail, in_type_order
from evidence_gateway.resolvers.scoping import owned, rows_many
from evidence_gateway.resolvers.validation import parse_id

_WS = Workspace.__table__
_RUN = CalculationRun.__table__
_ASSESSMENT = DataQualityAssessment.__table__
_PACK = ReportPack.__table__
_ARTIFACT = PackArtifact.__table__


def _latest(column: Any) -> Any:
    return select(column).where(_WS.c.id == bindparam("workspace_id"), owned(_WS)).scalar_subquery()


_LATEST_RUN = _latest(_WS.c.latest_calculation_run_id)
_LATEST_PACK = _latest(_WS.c.latest_report_pack_id)
_STATEMENTS = (
    select(*_WS.c).where(_WS.c.id == bindparam("workspace_id"), owned(_WS)),
    select(*_RUN.c).where(_RUN.c.id == _LATEST_RUN, owned(_RUN)),
    select(*_ASSESSMENT.c).where(_ASSESSMENT.c.calculation_run_id == _LATEST_RUN, owned(_ASSESSMENT)),
    select(*_PACK.c).where(_PACK.c.id == _LATEST_PACK, owned(_PACK)),
    select(*_ARTIFACT.c).where(_ARTIFACT.c.report_pack_id == _LATEST_PACK, owned(_ARTIFACT)),
)


@dataclass(frozen=True, slots=True)
class WorkspaceDetail:
    """A workspace with its latest run, pack and assessment (None until they exist)."""

    workspace: Row[Any]
    latest_calculation_run: Row[Any] | None = None
    latest_pack: PackDetail | None = None
    latest_quality_assessment: Row[Any] | None = None


async def get_workspace_detail(ctx: Ctx, workspace_id: Any) -> WorkspaceDetail:
    params = {"workspace_id": parse_id(workspace_id, "workspace")}
    workspace, run, assessment, pack, artifacts = await rows_many(ctx, *((stmt, params) for stmt in _STATEMENTS))
    if not workspace:
        raise NotFound("workspace not found", resource="workspace", id=str(workspace_id))
    return WorkspaceDetail(
        workspace=workspace[0],
        latest_calculation_run=run[0] if run else None,
        latest_pack=PackDetail(pack=pack[0], artifacts=in_type_order(artifacts)) if pack else None,
        latest_quality_assessment=assessment[0] if assessment else None,
    )
