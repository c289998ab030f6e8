"""Proofs from the log's subtree cache (core/subtrees.py, resolvers/tlog_tree.py) are the proofs
of the whole tree: over HTTP, as the log grows across chunk boundaries, when the cache is empty
(a log older than it) and on both databases; `log verify` reports a cached hash edited behind the
server's back. Chunks of four leaves here, so a few events cross several."""

from __future__ import annotations

import base64
import uuid
from typing import Any

import pytest
from sqlalchemy import text
from starlette.applications import Starlette

from evidence_gateway.core import merkle, subtrees
from evidence_gateway.resolvers import log_audit
from evidence_gateway.store import tlog as store
from evidence_gateway.store.db import Database
from tests.conftest import Api, create_workspace


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subtrees, "CHUNK_LEVEL", 2)


def _b(value: str) -> bytes:
    return base64.b64decode(value)


async def _org(db: Database, size: int) -> uuid.UUID:
    found = [o for o in await store.organisations(db) if await store.tree_size(db, o) == size]
    assert len(found) == 1
    return found[0]


async def _grow(api: Api, to: int) -> list[dict[str, Any]]:
    have = len((await api.get("/api/v2/events", params={"limit": 100})).json()["data"])
    for i in range(have, to):
        await create_workspace(api, name=f"ws {i}")
    events: list[dict[str, Any]] = (await api.get("/api/v2/events", params={"limit": 100})).json()["data"]
    assert [e["sequence"] for e in events] == list(range(1, to + 1))
    return events


async def _check_proofs(api: Api, db: Database, events: list[dict[str, Any]], sizes: list[int]) -> None:
    """Every served proof equals the one computed from all of the organisation's leaves."""
    org = await _org(db, len(events))
    whole = merkle.Tree(await store.leaves(db, org, len(events)))
    for size in sizes:
        cp = (await api.get("/api/v2/log/checkpoint", params={"size": size})).json()["data"]
        assert _b(cp["root_hash"]) == whole.root(size)
        for event in events[:size]:
            resp = await api.get("/api/v2/log/proof/inclusion", params={"event": event["id"], "size": size})
            assert resp.status_code == 200, resp.text
            proof = resp.json()["data"]
            index = event["sequence"] - 1
            assert _b(proof["leaf_hash"]) == whole.leaves[index]
            assert [_b(h) for h in proof["audit_path"]] == whole.inclusion(index, size)
    for old in sizes:
        for new in sizes:
            if old <= new:
                resp = await api.get("/api/v2/log/proof/consistency", params={"from": old, "to": new})
                assert resp.status_code == 200, resp.text
                assert [_b(h) for h in resp.json()["data"]["proof"]] == whole.consistency(old, new)


async def test_cached_proofs_equal_whole_tree_proofs_as_the_log_grows(app: Starlette, api: Api) -> None:
    db: Database = app.state.db
    events = await _grow(api, 6)
    assert (await api.get("/api/v2/log/checkpoint")).json()["data"]["size"] == 6
    org = await _org(db, 6)
    # The checkpoint kept the one complete chunk (leaves 0..3); nothing of the partial one.
    assert {(lv, f) for lv, f, _ in await store.all_subtrees(db, org)} == {(2, 0)}
    await _check_proofs(api, db, events, [6])
    events = await _grow(api, 19)  # across the chunk boundaries at 8, 12 and 16
    assert (await api.get("/api/v2/log/checkpoint")).json()["data"]["size"] == 19
    kept = {(lv, f) for lv, f, _ in await store.all_subtrees(db, org)}
    assert kept == {(2, 0), (2, 4), (2, 8), (2, 12), (3, 0), (3, 8), (4, 0)}
    await _check_proofs(api, db, events, [6, 19])
    assert not (await log_audit.audit(db)).problems


async def test_an_empty_cache_fills_as_proofs_need_it(app: Starlette, api: Api) -> None:
    """A log from before the cache: proofs hash the missing subtrees from the leaves once and keep them."""
    db: Database = app.state.db
    events = await _grow(api, 13)
    assert (await api.get("/api/v2/log/checkpoint")).json()["data"]["size"] == 13
    async with db.engine.begin() as conn:
        await conn.execute(text("DELETE FROM tlog_subtree"))
    org = await _org(db, 13)
    await _check_proofs(api, db, events, [13])
    assert {(lv, f) for lv, f, _ in await store.all_subtrees(db, org)} == {(2, 0), (2, 4), (2, 8), (3, 0)}


async def test_log_verify_reports_an_edited_cached_subtree(app: Starlette, api: Api) -> None:
    db: Database = app.state.db
    await _grow(api, 9)
    assert (await api.get("/api/v2/log/checkpoint")).json()["data"]["size"] == 9
    assert not (await log_audit.audit(db)).problems
    async with db.engine.begin() as conn:
        await conn.execute(
            text("UPDATE tlog_subtree SET hash = :h WHERE level = 3 AND first_leaf = 0"), {"h": b"\x00" * 32}
        )
    problems = (await log_audit.audit(db)).problems
    assert problems and "cached subtree of leaves 0..7" in problems[0]
