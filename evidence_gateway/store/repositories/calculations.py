"""Calculation runs: every read of a run row passes here (the writes of a run's life: its
start, lease and completion, go through the unit of work's entities it loads)."""

from __future__ import annotations

import uuid

from evidence_gateway.models import CalculationRun
from evidence_gateway.store.keyset import Slice
from evidence_gateway.store.record_types import CalculationRunRecord
from evidence_gateway.store.repository import Repository


class CalculationRunRepository(Repository[CalculationRun, CalculationRunRecord]):
    model = CalculationRun
    record = CalculationRunRecord
    kind = "run"

    async def of_workspaces(self, workspace_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[CalculationRunRecord]]:
        """Every run of each workspace, newest first."""
        return await self.grouped_by("workspace_id", workspace_ids)

    async def slice_of_workspace(self, workspace_id: uuid.UUID, **relay: object) -> Slice[CalculationRunRecord]:
        return await self.slice(self.table.c.workspace_id == workspace_id, **relay)
