"""The Relay ``node(id)`` root field over resolvers/nodes.py."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Annotated, Any

import strawberry
from strawberry.types import Info

from evidence_gateway.models import CalculationRun, Event, EvidenceItem, ReportPack, Workspace
from evidence_gateway.resolvers import nodes
from evidence_gateway.schema.calculations import CalculationRunType
from evidence_gateway.schema.common import LOOKUP_RULE
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.convert import from_model
from evidence_gateway.schema.events import event_type
from evidence_gateway.schema.evidence import evidence_item
from evidence_gateway.schema.packs import pack_type
from evidence_gateway.schema.relay import Node
from evidence_gateway.schema.workspaces import WorkspaceType
from evidence_gateway.store.record_types import (
    CalculationRunRecord,
    EvidenceItemRecord,
    ReportPackRecord,
    WorkspaceRecord,
)

GqlInfo = Info[GraphQLContext, None]

_AS_TYPE: dict[type, Callable[[Any], Node]] = {
    Workspace: lambda w: from_model(WorkspaceType, w),
    WorkspaceRecord: lambda w: from_model(WorkspaceType, w),
    ReportPack: pack_type,
    ReportPackRecord: pack_type,
    CalculationRun: lambda r: from_model(CalculationRunType, r),
    CalculationRunRecord: lambda r: from_model(CalculationRunType, r),
    EvidenceItem: evidence_item,
    EvidenceItemRecord: evidence_item,
    Event: event_type,
}


@strawberry.type
class Query:
    @strawberry.field(
        description=f"Any Node by its id (Workspace, ReportPack, CalculationRun, EvidenceItem, Event); {LOOKUP_RULE}."
    )
    async def node(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="The node's id.")]
    ) -> Node | None:
        found = await nodes.find_node(info.context.ctx, id)
        return None if found is None else _AS_TYPE[type(found)](found)


@strawberry.type
class Mutation:
    """Reads only."""
