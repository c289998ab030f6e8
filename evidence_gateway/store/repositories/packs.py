"""Report packs and their artifacts: every read of those rows passes here (generation, approval
and failure change the entities loaded here in a unit of work)."""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Table, bindparam, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.scoping import owned, owned_by, table_of
from evidence_gateway.models import (
    ApprovalAction,
    ArtifactStatus,
    CalculationRun,
    DataQualityAssessment,
    PackArtifact,
    PackStatus,
    ReportPack,
)
from evidence_gateway.store.db import Database, rows_changed
from evidence_gateway.store.joined import Joined
from evidence_gateway.store.record_types import (
    ApprovalActionRecord,
    CalculationRunRecord,
    DataQualityAssessmentRecord,
    PackArtifactRecord,
    ReportPackRecord,
)
from evidence_gateway.store.repository import Repository
from evidence_gateway.store.scoped import rows_many

_PACK: Table = table_of(ReportPack)
_RUN: Table = table_of(CalculationRun)
_ASSESSMENT: Table = table_of(DataQualityAssessment)
_ARTIFACT: Table = table_of(PackArtifact)
_PACK_BY_ID = select(*_PACK.c).where(_PACK.c.id == bindparam("pack_id"), owned(_PACK))
_PACK_ARTIFACTS = select(*_ARTIFACT.c).where(_ARTIFACT.c.report_pack_id == bindparam("pack_id"), owned(_ARTIFACT))
_PACK_DETAIL = Joined(
    _PACK,
    (_RUN, _RUN.c.id == _PACK.c.calculation_run_id),
    (_ASSESSMENT, _ASSESSMENT.c.id == _PACK.c.data_quality_assessment_id),
    where=_PACK.c.id == bindparam("pack_id"),
)


@dataclass(frozen=True, slots=True)
class PackRows:
    """A pack with its run, assessment and artifacts (artifacts in stored order)."""

    pack: ReportPackRecord
    artifacts: list[PackArtifactRecord]
    calculation_run: CalculationRunRecord | None
    quality_assessment: DataQualityAssessmentRecord | None


class ReportPackRepository(Repository[ReportPack, ReportPackRecord]):
    model = ReportPack
    record = ReportPackRecord
    kind = "pack"

    async def of_workspaces(self, workspace_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ReportPackRecord]]:
        """Every pack version of each workspace, newest version first."""
        return await self.grouped_by("workspace_id", workspace_ids, ("version_number",))

    async def detail(self, pack_id: uuid.UUID) -> PackRows | None:
        """The pack joined to its run and assessment, and its artifacts: two reads at once."""
        params = {"pack_id": pack_id}
        detail, artifacts = await rows_many(self.ctx, (_PACK_DETAIL.statement, params), (_PACK_ARTIFACTS, params))
        if not detail:
            return None
        pack, run, assessment = _PACK_DETAIL.split(detail[0])
        made = PackArtifactRecord._make
        return PackRows(pack, [made(a) for a in artifacts], run, assessment)

    async def artifacts(self, pack_id: uuid.UUID) -> list[PackArtifactRecord] | None:
        """The pack's artifacts (stored order), or None when the pack is not the caller's."""
        params = {"pack_id": pack_id}
        pack, artifacts = await rows_many(self.ctx, (_PACK_BY_ID, params), (_PACK_ARTIFACTS, params))
        if not pack:
            return None
        made = PackArtifactRecord._make
        return [made(a) for a in artifacts]

    async def highest_version(self, session: AsyncSession, workspace_id: uuid.UUID) -> int:
        """The workspace's highest pack version number, 0 before its first pack."""
        stmt = select(func.max(_PACK.c.version_number)).where(
            _PACK.c.workspace_id == workspace_id, owned_by(self.ctx, _PACK)
        )
        return int((await session.execute(stmt)).scalar_one() or 0)

    async def older_versions(
        self, session: AsyncSession, workspace_id: uuid.UUID, version_number: int, *, except_in: Collection[str]
    ) -> list[ReportPack]:
        """The workspace's packs below ``version_number`` whose status is not in ``except_in``
        (what a new version archives), as entities of the unit of work."""
        stmt = self.get_readable_statement().where(
            _PACK.c.workspace_id == workspace_id,
            _PACK.c.version_number < version_number,
            _PACK.c.status.not_in(list(except_in)),
        )
        return list((await session.execute(stmt)).scalars())

    async def load_unsealed(self, session: AsyncSession, pack_id: uuid.UUID) -> ReportPack | None:
        """The pack, locked and read again, while it has no hash yet (still being generated)."""
        stmt = self.get_readable_statement().where(_PACK.c.id == pack_id, _PACK.c.pack_hash.is_(None))
        stmt = stmt.with_for_update().execution_options(populate_existing=True)
        found: ReportPack | None = (await session.execute(stmt)).scalar_one_or_none()
        return found

    @staticmethod
    async def fail_expired(session: AsyncSession, pack_id: uuid.UUID, now: datetime) -> bool:
        """Fail the pack by a plain update if it is unsealed, not failed and its lease lapsed
        before ``now``; whether it was. Not org-scoped: the sweeper's last resort has only the
        pack's id."""
        stmt = (
            update(_PACK)
            .where(
                _PACK.c.id == pack_id,
                _PACK.c.pack_hash.is_(None),
                _PACK.c.status != PackStatus.failed.value,
                _PACK.c.lease_expires_at < now,
            )
            .values(
                status=PackStatus.failed.value,
                lease_owner=None,
                lease_expires_at=None,
                row_version=_PACK.c.row_version + 1,
            )
        )
        return bool(rows_changed(await session.execute(stmt)))

    async def renew_lease(self, pack_id: uuid.UUID, owner: str, until: datetime) -> None:
        """Extend the lease ``owner`` holds on the pack's generation (nothing if it lost it)."""
        stmt = (
            update(ReportPack)
            .where(_PACK.c.id == pack_id, _PACK.c.lease_owner == owner, owned_by(self.ctx, _PACK))
            .values(lease_expires_at=until)
        )
        async with self.ctx.db.write() as session:
            await session.execute(stmt)


class PackArtifactRepository(Repository[PackArtifact, PackArtifactRecord]):
    model = PackArtifact
    record = PackArtifactRecord
    kind = "artifact"

    async def of_packs(self, pack_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[PackArtifactRecord]]:
        """The artifacts of each pack (stored order)."""
        return await self.grouped_by("report_pack_id", pack_ids)

    async def entity(self, artifact_id: uuid.UUID) -> PackArtifact | None:
        """The caller's artifact as an entity (a download streams its stored bytes)."""
        async with self.ctx.db.read() as session:
            return await self.load(session, artifact_id)

    @staticmethod
    async def entities_of_packs(session: AsyncSession, pack_ids: list[uuid.UUID]) -> list[PackArtifact]:
        """The artifacts of these packs as entities (stored order). Not org-scoped: the packs were
        reached already, each through the caller's scope (packs/lookup.load_pack)."""
        if not pack_ids:
            return []
        found = await session.execute(select(PackArtifact).where(_ARTIFACT.c.report_pack_id.in_(pack_ids)))
        return list(found.scalars())

    @staticmethod
    async def entity_for_link(db: Database, artifact_id: uuid.UUID) -> PackArtifact | None:
        """The artifact a signed link names, as an entity. Not org-scoped: the link's signature is
        the capability (checked before, and it names this artifact), and its holder has no key."""
        async with db.read() as session:
            found = await session.execute(select(PackArtifact).where(_ARTIFACT.c.id == artifact_id))
            artifact: PackArtifact | None = found.scalar_one_or_none()
        return artifact

    @staticmethod
    async def fail_of_pack(session: AsyncSession, pack_id: uuid.UUID, message: str) -> None:
        """Every artifact of a failing pack failed, saying why. Not org-scoped: the pack was
        chosen already (by the caller's unit of work, or by id in the sweeper's last resort)."""
        stmt = (
            update(_ARTIFACT)
            .where(_ARTIFACT.c.report_pack_id == pack_id)
            .values(status=ArtifactStatus.failed.value, error_message=message[:2000], generated_at=None)
        )
        await session.execute(stmt)


class ApprovalRepository(Repository[ApprovalAction, ApprovalActionRecord]):
    model = ApprovalAction
    record = ApprovalActionRecord
    kind = "approval_action"

    async def of_packs(self, pack_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ApprovalActionRecord]]:
        """Every approval action of each pack, oldest first (the order they were taken in)."""
        newest_first = await self.grouped_by("report_pack_id", pack_ids)
        return {pack_id: found[::-1] for pack_id, found in newest_first.items()}
