"""The workspace detail: the workspace with its latest run, assessment and pack (with its
artifacts), in two statements at most.

The workspace and its latest run, assessment and pack come back as one row (outer joins, each
side scoped to the caller's organisation); the pack's artifacts follow only when there is a
pack. On PostgreSQL every statement is a round trip, on SQLite a hop to the reader thread: the
five separate reads this replaced cost five of them.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Row, Table, and_, bindparam, select

from evidence_gateway.errors import NotFound
from evidence_gateway.models import CalculationRun, DataQualityAssessment, PackArtifact, ReportPack, Workspace
from evidence_gateway.packs.lookup import PackDetail, in_type_order
from evidence_gateway.resolvers.context import Ctx
from evidence_gateway.resolvers.scoping import owned, rows
from evidence_gateway.resolvers.validation import parse_id

_WS: Table = Workspace.__table__  # type: ignore[attr-defined]
_RUN: Table = CalculationRun.__table__  # type: ignore[attr-defined]
_ASSESSMENT: Table = DataQualityAssessment.__table__  # type: ignore[attr-defined]
_PACK: Table = ReportPack.__table__  # type: ignore[attr-defined]
_ARTIFACT: Table = PackArtifact.__table__  # type: ignore[attr-defined]
_JOINED = (_WS, _RUN, _ASSESSMENT, _PACK)
# One record type per table, read by attribute like an entity (the serializers and GraphQL types).
_RECORDS = {t.name: namedtuple(f"{t.name}_record", t.c.keys()) for t in _JOINED}  # type: ignore[misc]

_DETAIL = (
    select(*(c.label(f"{t.name}__{c.key}") for t in _JOINED for c in t.c))
    .select_from(
        _WS.outerjoin(_RUN, and_(_RUN.c.id == _WS.c.latest_calculation_run_id, owned(_RUN)))
        .outerjoin(
            _ASSESSMENT,
            and_(_ASSESSMENT.c.calculation_run_id == _WS.c.latest_calculation_run_id, owned(_ASSESSMENT)),
        )
        .outerjoin(_PACK, and_(_PACK.c.id == _WS.c.latest_report_pack_id, owned(_PACK)))
    )
    .where(_WS.c.id == bindparam("workspace_id"), owned(_WS))
)
_ARTIFACTS = select(*_ARTIFACT.c).where(_ARTIFACT.c.report_pack_id == bindparam("pack_id"), owned(_ARTIFACT))


@dataclass(frozen=True, slots=True)
class WorkspaceDetail:
    """A workspace with its latest run, pack and assessment (None until they exist)."""

    workspace: Any
    latest_calculation_run: Any = None
    latest_pack: PackDetail | None = None
    latest_quality_assessment: Any = None


def _split(row: Row[Any]) -> list[Any]:
    """The joined row as one record per table; None for a side the outer join did not find."""
    out, at = [], 0
    for table in _JOINED:
        width = len(table.c)
        values = tuple(row[at : at + width])
        out.append(None if values[0] is None else _RECORDS[table.name]._make(values))  # id is the first column
        at += width
    return out


async def get_workspace_detail(ctx: Ctx, workspace_id: Any) -> WorkspaceDetail:
    found = await rows(ctx, _DETAIL, workspace_id=parse_id(workspace_id, "workspace"))
    if not found:
        raise NotFound("workspace not found", resource="workspace", id=str(workspace_id))
    workspace, run, assessment, pack = _split(found[0])
    artifacts = await rows(ctx, _ARTIFACTS, pack_id=pack.id) if pack is not None else []
    return WorkspaceDetail(
        workspace=workspace,
        latest_calculation_run=run,
        latest_pack=PackDetail(pack=pack, artifacts=in_type_order(artifacts)) if pack is not None else None,
        latest_quality_assessment=assessment,
    )
