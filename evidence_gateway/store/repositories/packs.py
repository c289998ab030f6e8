"""Report packs: every read of a pack row passes here (generation, approval and failure change
the entities it loads in a unit of work)."""

from __future__ import annotations

import uuid

from evidence_gateway.models import ReportPack
from evidence_gateway.store.keyset import Slice
from evidence_gateway.store.record_types import ReportPackRecord
from evidence_gateway.store.repository import Repository


class ReportPackRepository(Repository[ReportPack, ReportPackRecord]):
    model = ReportPack
    record = ReportPackRecord
    kind = "pack"

    async def of_workspaces(self, workspace_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ReportPackRecord]]:
        """Every pack version of each workspace, newest version first."""
        return await self.grouped_by("workspace_id", workspace_ids, ("version_number",))

    async def slice_of_workspace(self, workspace_id: uuid.UUID, **relay: object) -> Slice[ReportPackRecord]:
        return await self.slice(self.table.c.workspace_id == workspace_id, **relay)
