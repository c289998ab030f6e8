"""node(id): any record the caller's organisation owns, found by its id alone.

Ids are random UUIDs, unique across tables, so the id is enough: the store asks every node
table at once which holds it, and the hit is read through its repository. Another
organisation's id finds nothing, exactly as an unknown one.
"""

from __future__ import annotations

import uuid
from typing import Any

from evidence_gateway.core.context import Ctx
from evidence_gateway.models import CalculationRun, Event, EvidenceItem, ReportPack, Workspace
from evidence_gateway.resolvers.events import as_seen_by
from evidence_gateway.store.repositories.calculations import CalculationRunRepository
from evidence_gateway.store.repositories.events import EventRepository
from evidence_gateway.store.repositories.evidence import EvidenceItemRepository
from evidence_gateway.store.repositories.nodes import table_holding
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
    kind = await table_holding(ctx, node_id, NODE_MODELS)
    if kind is None:
        return None
    repository = REPOSITORIES.get(NODE_MODELS[kind])
    if repository is not None:
        return await repository(ctx).get(node_id)
    event = await EventRepository(ctx).entity(node_id)
    return as_seen_by(ctx, event) if event is not None else None
