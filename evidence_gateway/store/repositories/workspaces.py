"""Workspaces: every read and write of a workspace row passes here."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, bindparam, select

from evidence_gateway.core.scoping import owned, table_of
from evidence_gateway.core.uow import UnitOfWork
from evidence_gateway.models import CalculationRun, DataQualityAssessment, PackArtifact, ReportPack, Workspace
from evidence_gateway.store.joined import Joined
from evidence_gateway.store.record_types import WorkspaceRecord
from evidence_gateway.store.repository import Repository
from evidence_gateway.store.scoped import point_rows

_WS: Table = table_of(Workspace)
_RUN: Table = table_of(CalculationRun)
_ASSESSMENT: Table = table_of(DataQualityAssessment)
_PACK: Table = table_of(ReportPack)
_ARTIFACT: Table = table_of(PackArtifact)

# The detail view: the workspace joined to its latest run, assessment and pack in one statement,
# then the pack's artifacts when there is a pack (two statements at most).
_DETAIL = Joined(
    _WS,
    (_RUN, _RUN.c.id == _WS.c.latest_calculation_run_id),
    (_ASSESSMENT, _ASSESSMENT.c.calculation_run_id == _WS.c.latest_calculation_run_id),
    (_PACK, _PACK.c.id == _WS.c.latest_report_pack_id),
    where=_WS.c.id == bindparam("workspace_id"),
)
_ARTIFACTS = select(*_ARTIFACT.c).where(_ARTIFACT.c.report_pack_id == bindparam("pack_id"), owned(_ARTIFACT))


@dataclass(frozen=True, slots=True)
class WorkspaceRows:
    """A workspace and the rows its detail shows (None until they exist)."""

    workspace: WorkspaceRecord
    latest_calculation_run: Any
    latest_quality_assessment: Any
    latest_pack: Any
    latest_pack_artifacts: Sequence[Any]


class WorkspaceRepository(Repository[Workspace, WorkspaceRecord]):
    model = Workspace
    record = WorkspaceRecord
    kind = "workspace"

    def add(self, uow: UnitOfWork, **values: Any) -> WorkspaceRecord:
        """The new workspace, written with the change's events (one statement on PostgreSQL)."""
        created: WorkspaceRecord = uow.insert(Workspace, org_id=self.ctx.org_id, **values)
        return created

    async def detail(self, workspace_id: uuid.UUID) -> WorkspaceRows | None:
        found = await point_rows(self.ctx, _DETAIL.statement, workspace_id=workspace_id)
        if not found:
            return None
        workspace, run, assessment, pack = _DETAIL.split(found[0])
        artifacts = await point_rows(self.ctx, _ARTIFACTS, pack_id=pack.id) if pack is not None else []
        return WorkspaceRows(workspace, run, assessment, pack, artifacts)
