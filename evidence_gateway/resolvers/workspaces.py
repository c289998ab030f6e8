"""Workspace operations: org-scoped reads, creation, and state moves."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

from pydantic import model_validator
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import UnitOfWork, unit_of_work
from evidence_gateway.errors import Conflict, InvalidInput, NotFound
from evidence_gateway.models import Workspace, WorkspaceStatus
from evidence_gateway.read_models.representation import workspace_json
from evidence_gateway.resolvers.list_queries import WORKSPACES, parse_list_query
from evidence_gateway.resolvers.methodology import profile_exists
from evidence_gateway.resolvers.pagination import Page, PageParams
from evidence_gateway.resolvers.preconditions import check_if_match, touch
from evidence_gateway.resolvers.validation import IsoDate, Name, ShortText, StrictInput, UUIDField, parse, parse_id
from evidence_gateway.store.record_types import WorkspaceRecord
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository


class WorkspaceCreate(StrictInput):
    name: Name
    external_reference: ShortText | None = None
    reporting_period_start: IsoDate | None = None
    reporting_period_end: IsoDate | None = None
    """Not before reporting_period_start."""
    default_methodology_profile_id: UUIDField | None = None

    @model_validator(mode="after")
    def _period_in_order(self) -> WorkspaceCreate:
        start, end = self.reporting_period_start, self.reporting_period_end
        if start and end and end < start:
            raise ValueError("reporting_period_end must not be before reporting_period_start")
        return self


async def list_workspaces(
    ctx: Ctx, params: PageParams, filters: Any = None, order: Any = None
) -> Page[WorkspaceRecord]:
    """Newest first (or in ``order``), narrowed by ``filters`` (list_queries.WORKSPACES); the
    (org_id, key, id) indexes serve the page and its total."""
    return await WorkspaceRepository(ctx).page(params, parse_list_query(WORKSPACES, filters, order))


async def get_workspace(ctx: Ctx, workspace_id: Any) -> WorkspaceRecord:
    """The caller's workspace as a record: reads need no unit of work."""
    found = await WorkspaceRepository(ctx).get(parse_id(workspace_id, "workspace"))
    if found is None:
        raise NotFound("workspace not found", resource="workspace", id=str(workspace_id))
    return found


async def get_workspaces_by_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, WorkspaceRecord]:
    """Batch read for DataLoaders: unknown or foreign ids are simply absent."""
    return await WorkspaceRepository(ctx).get_many(ids)


async def create_workspace(ctx: Ctx, data: Any) -> WorkspaceRecord:
    """The new workspace, as a record read by attribute like the entity."""
    payload = parse(WorkspaceCreate, data)
    now = utcnow()
    async with unit_of_work(ctx) as uow:
        profile_id = payload.default_methodology_profile_id
        if profile_id is not None:
            if not await profile_exists(uow.session, profile_id):
                raise InvalidInput(fields={"default_methodology_profile_id": "unknown methodology profile"})
        workspace = WorkspaceRepository(ctx).add(
            uow,
            status=WorkspaceStatus.draft.value,
            created_at=now,
            updated_at=now,
            **payload.model_dump(),
        )
        uow.emit(
            EventType.workspace_created, "workspace", workspace.id, workspace_json(workspace), workspace_id=workspace.id
        )
        uow.respond(workspace)
    return workspace


async def load_workspace(session: AsyncSession, ctx: Ctx, workspace_id: Any, *, for_write: bool = False) -> Workspace:
    """The only way to reach a workspace: another organisation's id is simply not found."""
    wid = parse_id(workspace_id, "workspace")
    workspace = await WorkspaceRepository(ctx).load(session, wid, for_update=for_write)
    if workspace is None:
        raise NotFound("workspace not found", resource="workspace", id=str(workspace_id))
    return workspace


async def load_writable_workspace(
    session: AsyncSession, ctx: Ctx, workspace_id: Any, *, if_match: bool = True
) -> Workspace:
    """Locks the row (PostgreSQL), refuses archived workspaces and honours If-Match (unless the
    request's If-Match names another resource, as approvals name the pack)."""
    workspace = await load_workspace(session, ctx, workspace_id, for_write=True)
    if workspace.status == WorkspaceStatus.archived.value:
        raise Conflict("workspace is archived", status=workspace.status)
    if if_match:
        check_if_match(ctx, workspace, "workspace")
    return workspace


def move_workspace(uow: UnitOfWork, workspace: Workspace, status: WorkspaceStatus) -> None:
    """Every change of a workspace passes here: new ETag, and an event when its state moves."""
    before = workspace.status
    workspace.status = status.value
    workspace.updated_at = utcnow()
    touch(workspace)
    if before != status.value:
        uow.emit(
            EventType.workspace_status_changed,
            "workspace",
            workspace.id,
            {**workspace_json(workspace), "status_before": before, "status_after": status.value},
            workspace_id=workspace.id,
        )


def periods_overlap(a_start: date | None, a_end: date | None, b_start: date | None, b_end: date | None) -> bool:
    """Open ends overlap everything; used to match legacy reports to workspaces."""
    if a_start and b_end and b_end < a_start:
        return False
    return not (b_start and a_end and a_end < b_start)
