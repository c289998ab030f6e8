"""node(id): any record the caller's organisation owns, found by its id alone.

Ids are random UUIDs, unique across tables, so the id is enough: one statement asks every
node table at once (each by primary key, each filtered by the caller's organisation) and
the hit is loaded. Another organisation's id finds nothing, exactly as an unknown one.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import literal, select, union_all
from sqlmodel import col

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned_by
from evidence_gateway.models import CalculationRun, Event, EvidenceItem, ReportPack, Workspace
from evidence_gateway.resolvers.events import as_seen_by
from evidence_gateway.store.repositories.calculations import CalculationRunRepository
from evidence_gateway.store.repositories.evidence import EvidenceItemRepository
from evidence_gateway.store.repositories.packs import ReportPackRepository
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository
from evidence_gateway.store.repository import Repository

NODE_MODELS: tuple[Any, ...] = (Workspace, ReportPack, CalculationRun, EvidenceItem, Event)
# The node types read through their repository (as a typed record), by model.
REPOSITORIES: dict[Any, type[Repository[Any, Any]]] = {
    Workspace: WorkspaceRepository,
    ReportPack: ReportPackRepository,
    CalculationRun: CalculationRunRepository,
    EvidenceItem: EvidenceItemRepository,
}


async def find_node(ctx: Ctx, node_id: uuid.UUID) -> Any | None:
    """The caller's record with this id, of any node type, or None."""
    probes = [
        select(literal(i).label("kind")).where(col(model.id) == node_id, owned_by(ctx, model))
        for i, model in enumerate(NODE_MODELS)
    ]
    async with ctx.db.read() as session:
        kind = (await session.execute(union_all(*probes).limit(1))).scalar_one_or_none()
        if kind is None:
            return None
        model = NODE_MODELS[kind]
        repository = REPOSITORIES.get(model)
        if repository is None:
            found = (await session.execute(select(model).where(col(model.id) == node_id))).scalar_one_or_none()
    if repository is not None:
        return await repository(ctx).get(node_id)
    return as_seen_by(ctx, found) if isinstance(found, Event) else found
