"""Evidence items: every read of an evidence item row passes here."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core.scoping import owned_by
from evidence_gateway.models import EvidenceItem, ReportPack, Shipment
from evidence_gateway.models.base import table_of
from evidence_gateway.resolvers.list_queries import ListQuery
from evidence_gateway.store.keyset import Slice
from evidence_gateway.store.pages import NewestFirst, Page, PageWindow
from evidence_gateway.store.record_types import EvidenceItemRecord
from evidence_gateway.store.repository import Repository

_NEWEST = ("uploaded_at", "id")


class EvidenceItemRepository(Repository[EvidenceItem, EvidenceItemRecord]):
    model = EvidenceItem
    record = EvidenceItemRecord
    kind = "evidence_item"
    time_column = "uploaded_at"

    _of_workspace = NewestFirst(
        EvidenceItem, table_of(EvidenceItem).c.workspace_id == bindparam("workspace_id"), time_column="uploaded_at"
    )

    async def page_of_workspace(
        self, params: PageWindow, workspace_id: uuid.UUID, query: ListQuery | None = None
    ) -> Page[EvidenceItemRecord]:
        """One workspace's items, newest first (or filtered and ordered by ``query``)."""
        if query is None or query.is_plain:
            return await self._of_workspace.page(self.ctx, params, workspace_id=workspace_id)
        return await self.page(params, query, self.table.c.workspace_id == workspace_id)

    async def slice_of(
        self, workspace_id: uuid.UUID | None, *, query: ListQuery | None = None, **relay: Any
    ) -> Slice[EvidenceItemRecord]:
        if workspace_id is None:
            return await self.slice(query=query, **relay)
        return await self.slice(self.table.c.workspace_id == workspace_id, query=query, **relay)

    async def of_workspaces(self, workspace_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[EvidenceItemRecord]]:
        return await self.grouped_by("workspace_id", workspace_ids, _NEWEST)

    async def of_packs(self, pack_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[EvidenceItemRecord]]:
        return await self.grouped_by("report_pack_id", pack_ids, _NEWEST)

    async def for_pack(
        self, session: AsyncSession, workspace_id: uuid.UUID, uploaded_until: datetime
    ) -> list[EvidenceItem]:
        """Items attached to the workspace, to one of its shipments, or to one of its packs,
        uploaded by ``uploaded_until``, oldest first (a pack's evidence file)."""
        ctx = self.ctx
        packs = select(col(ReportPack.id)).where(
            col(ReportPack.workspace_id) == workspace_id, owned_by(ctx, ReportPack)
        )
        shipments = select(col(Shipment.id)).where(col(Shipment.workspace_id) == workspace_id, owned_by(ctx, Shipment))
        found = await session.execute(
            select(EvidenceItem)
            .where(
                owned_by(ctx, EvidenceItem),
                col(EvidenceItem.uploaded_at) <= uploaded_until,
                or_(
                    col(EvidenceItem.workspace_id) == workspace_id,
                    col(EvidenceItem.report_pack_id).in_(packs),
                    col(EvidenceItem.shipment_id).in_(shipments),
                ),
            )
            .order_by(col(EvidenceItem.uploaded_at).asc(), col(EvidenceItem.id).asc())
        )
        return list(found.scalars())
