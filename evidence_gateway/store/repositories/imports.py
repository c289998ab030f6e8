"""Import batches and the shipment rows they carry."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.models import HubRow, ImportBatch, Shipment
from evidence_gateway.models.base import table_of
from evidence_gateway.store.record_types import ImportBatchRecord
from evidence_gateway.store.repository import Repository
from evidence_gateway.store.scoped import readable

_SHIPMENT = table_of(Shipment)
_HUB = table_of(HubRow)


class ImportBatchRepository(Repository[ImportBatch, ImportBatchRecord]):
    model = ImportBatch
    record = ImportBatchRecord
    kind = "import_batch"

    async def of_workspaces(self, workspace_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[ImportBatchRecord]]:
        """Every import of each workspace, newest first."""
        return await self.grouped_by("workspace_id", workspace_ids)

    async def in_import_order(
        self, session: AsyncSession, workspace_id: uuid.UUID, *, until: datetime | None = None
    ) -> list[ImportBatch]:
        """A workspace's imports oldest first, in the caller's snapshot (what a run or a pack
        read); ``until``: those registered by then."""
        table = self.table
        stmt = self.get_readable_statement().where(table.c.workspace_id == workspace_id)
        if until is not None:
            stmt = stmt.where(table.c.created_at <= until)
        found = await session.execute(stmt.order_by(table.c.created_at.asc(), table.c.id.asc()))
        return list(found.scalars())

    async def add_shipments(self, session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
        """Shipment rows of a batch, in the unit of work's transaction (the caller's
        organisation stamped on each). Core, not ORM bulk: the ORM drops None keys and splits
        sparse rows into many statements."""
        org_id = self.ctx.org_id
        await session.execute(insert(_SHIPMENT), [{**row, "org_id": org_id} for row in rows])

    async def add_hubs(self, session: AsyncSession, rows: Sequence[dict[str, Any]]) -> None:
        """Hub rows of a batch, in the unit of work's transaction (the caller's organisation stamped on each)."""
        if rows:
            await session.execute(insert(_HUB), [{**row, "org_id": self.ctx.org_id} for row in rows])

    async def hubs_in_import_order(
        self, session: AsyncSession, workspace_id: uuid.UUID, batch_ids: Sequence[uuid.UUID]
    ) -> list[HubRow]:
        """The workspace's hub rows, batch by batch in the order given, then by row, in the caller's snapshot."""
        if not batch_ids:
            return []
        stmt = readable(self.ctx, HubRow).where(
            col(HubRow.workspace_id) == workspace_id, col(HubRow.import_batch_id).in_(list(batch_ids))
        )
        found = list((await session.execute(stmt)).scalars())
        order = {b: i for i, b in enumerate(batch_ids)}
        return sorted(found, key=lambda h: (order[h.import_batch_id], h.row_index))
