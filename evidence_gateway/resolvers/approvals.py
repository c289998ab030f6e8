"""Approval actions on a pack: the state table of DESIGN.md §5, one transaction per action."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import unit_of_work
from evidence_gateway.errors import Conflict, NotFound, Unauthenticated
from evidence_gateway.models import ApprovalAction, ApprovalActionType, PackStatus, WorkspaceStatus
from evidence_gateway.packs.lookup import artifacts_of, load_pack
from evidence_gateway.read_models.representation import pack_json
from evidence_gateway.resolvers.preconditions import check_if_match, touch
from evidence_gateway.resolvers.validation import OneOf, StrictInput, parse, parse_id
from evidence_gateway.resolvers.workspaces import load_writable_workspace, move_workspace
from evidence_gateway.store.record_types import ApprovalActionRecord
from evidence_gateway.store.repositories.packs import ApprovalRepository

# action -> (statuses it may start from, status it leads to)
TRANSITIONS: dict[str, tuple[frozenset[str], str]] = {
    ApprovalActionType.requested.value: (
        frozenset({PackStatus.generated.value, PackStatus.draft.value}),
        PackStatus.in_review.value,
    ),
    ApprovalActionType.approved.value: (frozenset({PackStatus.in_review.value}), PackStatus.approved.value),
    ApprovalActionType.rejected.value: (frozenset({PackStatus.in_review.value}), PackStatus.draft.value),
    ApprovalActionType.published.value: (frozenset({PackStatus.approved.value}), PackStatus.published.value),
}
# The workspace follows its latest pack into these states.
_WORKSPACE_FOLLOWS = {
    PackStatus.approved.value: WorkspaceStatus.approved,
    PackStatus.published.value: WorkspaceStatus.published,
    PackStatus.in_review.value: WorkspaceStatus.review_needed,
    PackStatus.draft.value: WorkspaceStatus.review_needed,
}
_PACK_STAGE = {
    WorkspaceStatus.review_needed.value,
    WorkspaceStatus.approved.value,
    WorkspaceStatus.published.value,
}

ActionName = Annotated[str, OneOf(ApprovalActionType)]


class ApprovalInput(StrictInput):
    action_type: ActionName
    comment: Annotated[str, Field(max_length=4000)] | None = None


@dataclass(frozen=True, slots=True)
class ApprovalResult:
    report_pack_id: uuid.UUID
    workspace_id: uuid.UUID
    status_before: str
    status_after: str
    action: ApprovalAction


def allowed_actions(status: str) -> list[str]:
    return [action for action, (sources, _) in TRANSITIONS.items() if status in sources]


async def record_approval(ctx: Ctx, pack_id: Any, data: Any) -> ApprovalResult:
    """POST /packs/{id}/approvals: apply one transition or refuse (409) without changing anything."""
    payload = parse(ApprovalInput, data)
    async with unit_of_work(ctx) as uow:
        session = uow.session
        # Lock order as in pack generation: workspace first, then the pack row.
        found = await load_pack(session, ctx, parse_id(pack_id, "pack"))
        workspace = await load_writable_workspace(session, ctx, found.workspace_id, if_match=False)
        pack = await load_pack(session, ctx, found.id, for_write=True)
        check_if_match(ctx, pack, "pack")
        sources, target = TRANSITIONS[payload.action_type]
        before = pack.status
        if before not in sources:
            raise Conflict(
                f"cannot record '{payload.action_type}' on a pack that is {before}",
                current_status=before,
                action_type=payload.action_type,
                allowed_actions=allowed_actions(before),
            )
        if pack.pack_hash is None:
            raise Conflict(
                "the pack's artifacts are still being generated",
                current_status=before,
                action_type=payload.action_type,
                allowed_actions=[],
            )
        now = utcnow()
        pack.status = target
        touch(pack)
        if target == PackStatus.approved.value:
            pack.approved_at = now
        elif target == PackStatus.published.value:
            pack.published_at = now
        action = ApprovalAction(
            report_pack_id=pack.id,
            workspace_id=pack.workspace_id,
            org_id=ctx.org_id,
            action_type=payload.action_type,
            comment=payload.comment,
            status_before=before,
            status_after=target,
            api_key_id=_acting_key(ctx),
            created_at=now,
        )
        session.add(action)
        uow.emit(
            EventType.pack_status_changed,
            "report_pack",
            pack.id,
            {
                **pack_json(pack, (await artifacts_of(session, [pack.id]))[pack.id], ctx.settings),
                "status_before": before,
                "status_after": target,
                "action_type": payload.action_type,
                "comment": payload.comment,
                "approval_action_id": action.id,
            },
            workspace_id=pack.workspace_id,
        )
        if workspace.latest_report_pack_id == pack.id:
            # Only the workspace's current pack moves it, and only once it is at the pack stage:
            # a workspace with newer data (data_imported, calculated) keeps saying so. Its detail
            # shows this pack either way, so its ETag moves.
            if workspace.status in _PACK_STAGE:
                move_workspace(uow, workspace, _WORKSPACE_FOLLOWS[target])
            else:
                touch(workspace)
        result = ApprovalResult(pack.id, pack.workspace_id, before, target, action)
        uow.respond(result)
    return result


async def get_approval(ctx: Ctx, action_id: Any) -> ApprovalActionRecord:
    """One recorded approval action of the caller's organisation (the Location of a new one)."""
    found = await ApprovalRepository(ctx).get(parse_id(action_id, "approval action"))
    if found is None:
        raise NotFound("approval action not found", resource="approval_action", id=str(action_id))
    return found


def _acting_key(ctx: Ctx) -> uuid.UUID:
    """Approvals are a person's decision: always made with an API key."""
    if ctx.actor is None:
        raise Unauthenticated()
    return ctx.actor
