"""The cursor-paginated lists: each is its organisation scope, its order and the keyset helper.

Every list is filtered by the caller's organisation here, whatever the transport asks; a
list of one workspace's records also checks that the workspace is the caller's (NotFound
otherwise, as the page/per_page lists do).
"""

from __future__ import annotations

import uuid
from typing import Any

from evidence_gateway.auth import Scope
from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import NotFound
from evidence_gateway.models import Event
from evidence_gateway.resolvers.delivery_log import LoggedAttempt, attempts_of
from evidence_gateway.resolvers.events import as_seen_by
from evidence_gateway.resolvers.legacy import LegacyReportView, views_of
from evidence_gateway.resolvers.list_queries import (
    CALCULATION_RUNS,
    EVENTS,
    EVIDENCE_ITEMS,
    IMPORT_BATCHES,
    LEGACY_REPORTS,
    PACKS,
    WEBHOOK_DELIVERIES,
    WEBHOOK_ENDPOINTS,
    WORKSPACES,
    ListSpec,
    parse_list_query,
)
from evidence_gateway.resolvers.validation import parse_id
from evidence_gateway.store.keyset import Slice
from evidence_gateway.store.record_types import (
    CalculationRunRecord,
    EvidenceItemRecord,
    ReportPackRecord,
    WorkspaceRecord,
)
from evidence_gateway.store.repositories.calculations import CalculationRunRepository
from evidence_gateway.store.repositories.events import EventRepository
from evidence_gateway.store.repositories.evidence import EvidenceItemRepository
from evidence_gateway.store.repositories.imports import ImportBatchRepository
from evidence_gateway.store.repositories.legacy import LegacyReportRepository
from evidence_gateway.store.repositories.packs import ReportPackRepository
from evidence_gateway.store.repositories.webhooks import WebhookDeliveryRepository, WebhookEndpointRepository
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository


async def workspaces(ctx: Ctx, filters: Any = None, order: Any = None, **relay: Any) -> Slice[WorkspaceRecord]:
    """The caller's workspaces, newest first or in ``order``, narrowed by ``filters``
    (list_queries.WORKSPACES)."""
    query = parse_list_query(WORKSPACES, filters, order)
    return await WorkspaceRepository(ctx).slice(query=query, **relay)


async def _own_workspace(ctx: Ctx, workspace_id: Any) -> uuid.UUID:
    wid = parse_id(workspace_id, "workspace")
    if await WorkspaceRepository(ctx).get(wid) is None:
        raise NotFound("workspace not found", resource="workspace", id=str(wid))
    return wid


async def packs(ctx: Ctx, filters: Any = None, order: Any = None, **relay: Any) -> Slice[ReportPackRecord]:
    """Every pack version of every workspace of the caller's, newest first or in ``order``,
    narrowed by ``filters`` (list_queries.PACKS: "packs awaiting approval" is status in_review)."""
    query = parse_list_query(PACKS, filters, order)
    return await ReportPackRepository(ctx).slice(query=query, **relay)


async def calculation_runs(
    ctx: Ctx, filters: Any = None, order: Any = None, **relay: Any
) -> Slice[CalculationRunRecord]:
    """Every calculation run of the caller's (completed, failed, running), newest first or in
    ``order``, narrowed by ``filters`` (list_queries.CALCULATION_RUNS)."""
    query = parse_list_query(CALCULATION_RUNS, filters, order)
    return await CalculationRunRepository(ctx).slice(query=query, **relay)


async def evidence_items(
    ctx: Ctx, workspace_id: Any = None, filters: Any = None, order: Any = None, **relay: Any
) -> Slice[EvidenceItemRecord]:
    """The caller's evidence items, newest first or in ``order``, narrowed by ``filters``;
    optionally one workspace's (NotFound if not theirs)."""
    query = parse_list_query(EVIDENCE_ITEMS, filters, order)
    wid = await _own_workspace(ctx, workspace_id) if workspace_id is not None else None
    return await EvidenceItemRepository(ctx).slice_of(wid, query=query, **relay)


async def events(ctx: Ctx, filters: Any = None, order: Any = None, **relay: Any) -> Slice[Event]:
    """The caller's event log, oldest first or in ``order``, narrowed by ``filters``."""
    query = parse_list_query(EVENTS, filters, order)
    found = await EventRepository(ctx).slice_oldest_first(query=query, **relay)
    found.items[:] = [as_seen_by(ctx, e) for e in found.items]
    return found


async def webhook_endpoints(ctx: Ctx, filters: Any = None, order: Any = None, **relay: Any) -> Slice[Any]:
    """The organisation's webhook endpoints, newest first or in ``order``, narrowed by ``filters``
    (list_queries.WEBHOOK_ENDPOINTS; admin: they hold secrets)."""
    ctx.require(Scope.ADMIN)
    query = parse_list_query(WEBHOOK_ENDPOINTS, filters, order)
    return await WebhookEndpointRepository(ctx).slice(query=query, **relay)


async def webhook_deliveries(ctx: Ctx, filters: Any = None, order: Any = None, **relay: Any) -> Slice[LoggedAttempt]:
    """Delivery attempts, newest first or in ``order``, narrowed by ``filters``: an admin key
    reads all, others the tests to a bare URL (as webhookDeliveries), whatever the filter says."""
    query = parse_list_query(WEBHOOK_DELIVERIES, filters, order)
    repo = WebhookDeliveryRepository(ctx)
    where = [] if ctx.principal.scope.allows(Scope.ADMIN) else [repo.table.c.endpoint_id.is_(None)]
    found: Slice[Any] = await repo.slice(*where, query=query, **relay)
    found.items[:] = await attempts_of(ctx, found.items)
    return found


async def legacy_reports(ctx: Ctx, filters: Any = None, order: Any = None, **relay: Any) -> Slice[LegacyReportView]:
    """Legacy v1 reports, newest first or in ``order``, narrowed by ``filters``
    (list_queries.LEGACY_REPORTS), with their successors."""
    query = parse_list_query(LEGACY_REPORTS, filters, order)
    found: Slice[Any] = await LegacyReportRepository(ctx).slice(query=query, **relay)
    found.items[:] = await views_of(ctx, found.items)
    return found


# Nested lists: each parent's page, every parent of a batch in one statement (DataLoaders), and
# the declaration of its filters and orderings.
_NESTED: dict[str, tuple[Any, str, ListSpec]] = {
    "workspace.imports": (ImportBatchRepository, "workspace_id", IMPORT_BATCHES),
    "workspace.packs": (ReportPackRepository, "workspace_id", PACKS),
    "workspace.calculation_runs": (CalculationRunRepository, "workspace_id", CALCULATION_RUNS),
    "workspace.evidence_items": (EvidenceItemRepository, "workspace_id", EVIDENCE_ITEMS),
    "pack.evidence_items": (EvidenceItemRepository, "report_pack_id", EVIDENCE_ITEMS),
    "endpoint.deliveries": (WebhookDeliveryRepository, "endpoint_id", WEBHOOK_DELIVERIES),
}


async def nested(
    ctx: Ctx,
    relation: str,
    parents: list[uuid.UUID],
    filters: Any = None,
    order: Any = None,
    **relay: Any,
) -> dict[uuid.UUID, Slice[Any]]:
    """The same page of ``relation`` for each parent the caller already holds (rows of the
    caller's organisation only, as every list), narrowed by ``filters`` and in ``order`` where
    the relation declares them."""
    repository, parent, spec = _NESTED[relation]
    if relation == "endpoint.deliveries":
        ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    query = parse_list_query(spec, filters, order)
    found: dict[uuid.UUID, Slice[Any]] = await repository(ctx).slices_by(parent, parents, query=query, **relay)
    if relation == "endpoint.deliveries":
        every = [item for page in found.values() for item in page.items]
        attempts = iter(await attempts_of(ctx, every))
        for page in found.values():
            page.items[:] = [next(attempts) for _ in page.items]
    return found
