"""Legacy v1 reports, and the workspaces and packs that used each (its successors)."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.scoping import owned_by
from evidence_gateway.models import CalculationRun, LegacyReport, ReportPack
from evidence_gateway.models.base import table_of
from evidence_gateway.store.record_types import LegacyReportRecord
from evidence_gateway.store.repository import Repository

_RUN = table_of(CalculationRun)
_PACK = table_of(ReportPack)


class LegacyReportRepository(Repository[LegacyReport, LegacyReportRecord]):
    model = LegacyReport
    record = LegacyReportRecord
    kind = "legacy_report"

    async def all_of_org(self, session: AsyncSession) -> list[LegacyReport]:
        """Every report of the caller's organisation (the candidates of a calculation without data)."""
        return list((await session.execute(self.get_readable_statement())).scalars())

    @staticmethod
    async def any_org_by_ids(session: AsyncSession, ids: list[uuid.UUID]) -> dict[uuid.UUID, LegacyReport]:
        """``{id: report}`` among ``ids``, of any organisation. Not org-scoped on purpose: the
        legacy import refuses a record whose id another organisation already holds, and only a
        read across organisations can see that id is taken."""
        if not ids:
            return {}
        found = await session.execute(select(LegacyReport).where(table_of(LegacyReport).c.id.in_(ids)))
        return {r.id: r for r in found.scalars()}

    async def successors(
        self, session: AsyncSession, ids: list[uuid.UUID]
    ) -> tuple[dict[uuid.UUID, uuid.UUID], dict[uuid.UUID, uuid.UUID]]:
        """For each report: the workspace whose newest run used it, and the newest pack built from it."""
        workspaces: dict[uuid.UUID, uuid.UUID] = {}
        packs: dict[uuid.UUID, uuid.UUID] = {}
        if not ids:
            return workspaces, packs
        runs = await session.execute(
            select(_RUN.c.legacy_report_id, _RUN.c.workspace_id)
            .where(owned_by(self.ctx, _RUN), _RUN.c.legacy_report_id.in_(ids))
            .order_by(_RUN.c.created_at.asc())
        )
        for legacy_id, workspace_id in runs:
            if legacy_id is not None:  # never None (in_ above); the column is nullable
                workspaces[legacy_id] = workspace_id  # newest wins
        found = await session.execute(
            select(_PACK.c.legacy_report_id, _PACK.c.id)
            .where(owned_by(self.ctx, _PACK), _PACK.c.legacy_report_id.in_(ids))
            .order_by(_PACK.c.created_at.asc())
        )
        for legacy_id, pack_id in found:
            if legacy_id is not None:
                packs[legacy_id] = pack_id
        return workspaces, packs
