"""Calculation runs and their quality assessments: every read of those rows passes here (the
writes of a run's life: its start, lease and completion, go through the unit of work's
entities loaded here)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.scoping import owned, owned_by, table_of
from evidence_gateway.models import CalculationRun, DataQualityAssessment, RunStatus
from evidence_gateway.store.db import rows_changed
from evidence_gateway.store.record_types import CalculationRunRecord, DataQualityAssessmentRecord
from evidence_gateway.store.repository import Repository
from evidence_gateway.store.scoped import rows

_ASSESSMENT = table_of(DataQualityAssessment)
_LATEST = (
    select(*_ASSESSMENT.c)
    .where(_ASSESSMENT.c.workspace_id == bindparam("workspace_id"), owned(_ASSESSMENT))
    .order_by(_ASSESSMENT.c.assessed_at.desc(), _ASSESSMENT.c.id.desc())
    .limit(1)
)


class CalculationRunRepository(Repository[CalculationRun, CalculationRunRecord]):
    model = CalculationRun
    record = CalculationRunRecord
    kind = "run"

    async def of_workspaces(self, workspace_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[CalculationRunRecord]]:
        """Every run of each workspace, newest first."""
        return await self.grouped_by("workspace_id", workspace_ids)

    async def reloaded(self, session: AsyncSession, run_id: uuid.UUID) -> CalculationRun:
        """The run as a statement of the unit of work just left it, not as the session held it."""
        stmt = self.get_readable_statement().where(self.table.c.id == run_id)
        run: CalculationRun = (await session.execute(stmt.execution_options(populate_existing=True))).scalar_one()
        return run

    async def renew_lease(self, run_id: uuid.UUID, owner: str, until: datetime) -> None:
        """Extend the lease ``owner`` holds on a running run (nothing if it lost it or the run ended)."""
        table = self.table
        stmt = (
            update(table)
            .where(
                table.c.id == run_id,
                table.c.status == RunStatus.running.value,
                table.c.lease_owner == owner,
                owned_by(self.ctx, table),
            )
            .values(lease_expires_at=until)
        )
        async with self.ctx.db.write() as session:
            await session.execute(stmt)

    @staticmethod
    async def fail_running(
        session: AsyncSession, run_id: uuid.UUID, message: str, now: datetime, *, expired_only: bool
    ) -> bool:
        """Fail the run if it is still running (and, ``expired_only``, its lease has lapsed);
        whether it was. Not org-scoped: the sweeper's last resort runs it with no context left
        but the run's id."""
        table = table_of(CalculationRun)
        stmt = update(table).where(table.c.id == run_id, table.c.status == RunStatus.running.value)
        if expired_only:
            stmt = stmt.where(table.c.lease_expires_at < now)
        stmt = stmt.values(
            status=RunStatus.failed.value,
            error_message=message[:2000],
            completed_at=now,
            lease_owner=None,
            lease_expires_at=None,
        )
        return bool(rows_changed(await session.execute(stmt)))


class AssessmentRepository(Repository[DataQualityAssessment, DataQualityAssessmentRecord]):
    model = DataQualityAssessment
    record = DataQualityAssessmentRecord
    kind = "quality_assessment"
    time_column = "assessed_at"

    async def of_runs(self, run_ids: list[uuid.UUID]) -> dict[uuid.UUID, DataQualityAssessmentRecord]:
        """The assessment of each run (one per run)."""
        grouped = await self.grouped_by("calculation_run_id", run_ids, ("assessed_at", "id"))
        return {run_id: found[0] for run_id, found in grouped.items() if found}

    async def of_run(self, run_id: uuid.UUID) -> DataQualityAssessmentRecord | None:
        return (await self.of_runs([run_id])).get(run_id)

    async def latest_of_workspace(self, workspace_id: uuid.UUID) -> DataQualityAssessmentRecord | None:
        found = await rows(self.ctx, _LATEST, workspace_id=workspace_id)
        return DataQualityAssessmentRecord._make(found[0]) if found else None

    async def load_of_run(self, session: AsyncSession, run_id: uuid.UUID) -> DataQualityAssessment | None:
        """The run's assessment as an entity, in a unit of work."""
        found = await session.execute(self.get_readable_statement().where(self.table.c.calculation_run_id == run_id))
        assessment: DataQualityAssessment | None = found.scalar_one_or_none()
        return assessment

    async def attach_to_pack(self, session: AsyncSession, assessment_id: uuid.UUID, pack_id: uuid.UUID) -> None:
        """Record the pack an assessment was published in, in the unit of work's transaction."""
        table = self.table
        stmt = (
            update(table).where(table.c.id == assessment_id, owned_by(self.ctx, table)).values(report_pack_id=pack_id)
        )
        await session.execute(stmt)
