"""Approval actions on a pack: the state table of DESIGN.md §5, one transaction per action."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from evidence_gateway.errors import Conflict
from evidence_gateway.models import ApprovalAction, ApprovalActionType, PackStatus, WorkspaceStatus
from evidence_gateway.resolvers.context import Ctx
from evidence_gateway.resolvers.packs import load_pack
from evidence_gateway.resolvers.validation import StrictInput, parse
from evidence_gateway.resolvers.workspaces import load_writable_workspace, move_workspace
from evidence_gateway.timeutil import utcnow

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

ActionName = Literal[tuple(a.value for a in ApprovalActionType)]  # type: ignore[valid-type]


class ApprovalInput(StrictInput):
    action_type: ActionName  # type: ignore[valid-type]
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
    async with ctx.db.write() as session:
        # Lock order as in pack generation: workspace first, then the pack row.
        found = await load_pack(session, ctx, pack_id)
        workspace = await load_writable_workspace(session, ctx, found.workspace_id)
        pack = await load_pack(session, ctx, found.id, for_write=True)
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
            api_key_id=ctx.principal.key_id,
            created_at=now,
        )
        session.add(action)
        # Only the workspace's current pack moves it, and only once it is at the pack stage:
        # a workspace with newer data (data_imported, calculated) keeps saying so.
        if workspace.latest_report_pack_id == pack.id and workspace.status in _PACK_STAGE:
            move_workspace(workspace, _WORKSPACE_FOLLOWS[target])
    return ApprovalResult(pack.id, pack.workspace_id, before, target, action)
