"""Approval actions: the state table of DESIGN.md §5, refusals that change nothing, concurrency."""

from __future__ import annotations

import asyncio
import csv
import io
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select, update

from evidence_gateway.models import ApprovalAction, ReportPack
from tests.conftest import Api, gql_code
from tests.test_packs import calculated_workspace, generated

ACTIONS = ("requested", "approved", "rejected", "published")
# start status -> the actions that lead somewhere from it, and where.
TABLE: dict[str, dict[str, str]] = {
    "generated": {"requested": "in_review"},
    "draft": {"requested": "in_review"},
    "in_review": {"approved": "approved", "rejected": "draft"},
    "approved": {"published": "published"},
    "published": {},
    "archived": {},
    "failed": {},
}
# How to reach each start status through the API.
PATHS: dict[str, list[str]] = {
    "generated": [],
    "in_review": ["requested"],
    "draft": ["requested", "rejected"],
    "approved": ["requested", "approved"],
    "published": ["requested", "approved", "published"],
}


def db_of(api: Api) -> Any:
    return api.http._transport.app.state.db  # type: ignore[attr-defined]


async def approve(api: Api, pack_id: str, action: str, **extra: Any) -> Any:
    return await api.post(f"/api/v2/packs/{pack_id}/approvals", {"action_type": action, **extra})


async def pack_in(api: Api, status: str) -> tuple[dict[str, Any], dict[str, Any]]:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    if status == "archived":
        await generated(api, ws["id"])
    elif status == "failed":
        async with db_of(api).write() as session:
            pid = uuid.UUID(pack["id"])
            await session.execute(update(ReportPack).where(ReportPack.id == pid).values(status="failed"))
    else:
        for action in PATHS[status]:
            assert (await approve(api, pack["id"], action)).status_code == 201
    return ws, (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]


def stable(pack: dict[str, Any]) -> dict[str, Any]:
    artifacts = [{k: v for k, v in a.items() if k != "signed_download_url"} for a in pack["artifacts"]]
    return {**pack, "artifacts": artifacts}


async def action_count(api: Api) -> int:
    async with db_of(api).read() as session:
        return int((await session.execute(select(func.count()).select_from(ApprovalAction))).scalar_one())


@pytest.mark.parametrize("start", list(TABLE))
async def test_state_table(api: Api, start: str) -> None:
    ws, pack = await pack_in(api, start)
    assert pack["status"] == start
    allowed = TABLE[start]
    before_actions = await action_count(api)
    for action in ACTIONS:
        if action in allowed:
            continue
        resp = await approve(api, pack["id"], action)
        assert resp.status_code == 409, (start, action, resp.text)
        details = resp.json()["details"]
        assert details["code"] == "conflict"
        assert details["current_status"] == start
        assert details["allowed_actions"] == list(allowed)
        assert start in resp.json()["error"]
    # Refusals change nothing (signed links are minted per request, so they are left out).
    assert stable(pack) == stable((await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"])
    assert await action_count(api) == before_actions
    for action, target in allowed.items():
        resp = await approve(api, pack["id"], action, comment=f"{action} it")
        assert resp.status_code == 201, resp.text
        assert resp.json() == {
            "data": {"reportPackId": pack["id"], "workspaceId": ws["id"], "statusBefore": start, "statusAfter": target}
        }
        assert (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]["status"] == target
        assert await action_count(api) == before_actions + 1
        break  # one accepted action per start state; the others from here are covered by their own start


async def test_workspace_follows_its_pack_to_publication(api: Api) -> None:
    ws, pack = await pack_in(api, "generated")

    async def workspace_status() -> str:
        return str((await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["status"])

    assert await workspace_status() == "review_needed"
    await approve(api, pack["id"], "requested")
    assert await workspace_status() == "review_needed"
    await approve(api, pack["id"], "rejected", comment="numbers look off")
    assert await workspace_status() == "review_needed"
    await approve(api, pack["id"], "requested")
    await approve(api, pack["id"], "approved")
    assert await workspace_status() == "approved"
    approved = (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]
    assert approved["approved_at"] and approved["published_at"] is None
    await approve(api, pack["id"], "published")
    assert await workspace_status() == "published"
    published = (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]
    assert published["published_at"] >= published["approved_at"]
    # A new version leaves the published one alone and puts the workspace back in review.
    second = (await generated(api, ws["id"]))["data"]
    assert (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]["status"] == "published"
    assert await workspace_status() == "review_needed"
    listed = (await api.get(f"/api/v2/packs/{second['id']}/artifacts")).json()["data"]
    trail_url = next(a for a in listed if a["artifact_type"] == "audit_trail")["signed_download_url"]
    events = list(csv.DictReader(io.StringIO((await api.http.get(trail_url)).text)))
    approvals = [e for e in events if e["event"].startswith("approval_")]
    assert [e["event"] for e in approvals] == [
        "approval_requested", "approval_rejected", "approval_requested", "approval_approved", "approval_published"
    ]  # fmt: skip
    assert "numbers look off" in approvals[1]["description"]
    body = await api.gql(
        "query($id: UUID!) { pack(id: $id) { approvals { actionType statusBefore statusAfter comment } } }",
        {"id": pack["id"]},
    )
    assert [a["statusAfter"] for a in body["data"]["pack"]["approvals"]] == [
        "IN_REVIEW", "DRAFT", "IN_REVIEW", "APPROVED", "PUBLISHED"
    ]  # fmt: skip


async def test_a_stale_pack_does_not_move_a_workspace_with_newer_data(api: Api) -> None:
    ws, pack = await pack_in(api, "in_review")
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 2})).status_code == 201
    assert (await approve(api, pack["id"], "approved")).status_code == 201
    assert (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["status"] == "data_imported"


async def test_concurrent_approvals_have_one_winner(api: Api) -> None:
    _ws, pack = await pack_in(api, "in_review")
    before = await action_count(api)
    responses = await asyncio.gather(*(approve(api, pack["id"], "approved") for _ in range(5)))
    assert sorted(r.status_code for r in responses) == [201, 409, 409, 409, 409]
    losers = [r.json()["details"] for r in responses if r.status_code == 409]
    assert all(d["current_status"] == "approved" for d in losers)
    assert await action_count(api) == before + 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"action_type": "approve"}, "action_type"),
        ({}, "action_type"),
        ({"action_type": 1}, "action_type"),
        ({"action_type": "requested", "comment": 5}, "comment"),
        ({"action_type": "requested", "comment": "x" * 4001}, "comment"),
    ],
)
async def test_invalid_actions_are_422_and_change_nothing(api: Api, body: dict[str, Any], field: str) -> None:
    _ws, pack = await pack_in(api, "generated")
    resp = await api.post(f"/api/v2/packs/{pack['id']}/approvals", body)
    assert resp.status_code == 422
    assert field in resp.json()["details"]["fields"]
    assert (await api.get(f"/api/v2/packs/{pack['id']}")).json()["data"]["status"] == "generated"
    assert await action_count(api) == 0


async def test_malformed_bodies_are_400(api: Api) -> None:
    _ws, pack = await pack_in(api, "generated")
    resp = await api.http.post(
        f"/api/v2/packs/{pack['id']}/approvals", content=b"{", headers={"Authorization": f"Bearer {api.key}"}
    )
    assert resp.status_code == 400
    assert (await api.post(f"/api/v2/packs/{pack['id']}/approvals", ["requested"])).status_code == 400
    assert (await api.post(f"/api/v2/packs/{pack['id']}/approvals", None)).status_code == 400


async def test_graphql_refusals_match_rest(api: Api) -> None:
    _ws, pack = await pack_in(api, "generated")
    mutation = (
        "mutation($id: UUID!, $a: ApprovalActionType!) {"
        " recordApproval(packId: $id, input: {actionType: $a}) { statusBefore statusAfter } }"
    )
    body = await api.gql(mutation, {"id": pack["id"], "a": "PUBLISHED"})
    assert gql_code(body) == "CONFLICT"
    assert body["errors"][0]["extensions"]["allowed_actions"] == ["requested"]
    for wrong in ("nonsense", "requested"):  # REST's lowercase wire value is not the GraphQL name
        body = await api.gql(mutation, {"id": pack["id"], "a": wrong})
        assert gql_code(body) == "BAD_USER_INPUT"
    body = await api.gql(mutation, {"id": pack["id"], "a": "REQUESTED"})
    assert body["data"]["recordApproval"] == {"statusBefore": "GENERATED", "statusAfter": "IN_REVIEW"}
