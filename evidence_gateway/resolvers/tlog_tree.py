"""Proof trees from the log's subtree cache (core/subtrees.py): the cached hashes a proof needs
and the leaves of at most a few chunks, instead of every leaf of the organisation's log. A cached
subtree missing (a log older than the cache, a checkpoint that did not get to write it) is
hashed from its leaves once and kept."""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from evidence_gateway.core import subtrees
from evidence_gateway.core.merkle import Tree
from evidence_gateway.errors import InternalError
from evidence_gateway.store import tlog as store
from evidence_gateway.store.db import Database


async def proof_tree(
    db: Database,
    org_id: uuid.UUID,
    size: int,
    inclusions: Iterable[int] = (),
    consistencies: Iterable[tuple[int, int]] = (),
) -> Tree:
    """A tree of ``size`` that answers the given inclusion and consistency proofs (and its root)."""
    level = subtrees.CHUNK_LEVEL
    plan = subtrees.needs(size, inclusions, consistencies, level)
    cached = await store.subtrees(db, org_id, plan.subtrees)
    missing = plan.subtrees - cached.keys()
    if missing:
        fresh: list[tuple[int, int, bytes]] = []
        for width_level, first in subtrees.covering(missing):
            hashes = await _leaves(db, org_id, first, first + (1 << width_level))
            fresh.extend(subtrees.subtrees_of(hashes, first, level))
        await store.keep_subtrees(db, org_id, fresh)
        cached.update({(lv, first): value for lv, first, value in fresh})
    leaves: dict[int, bytes] = {}
    for chunk in sorted(plan.chunks):
        lo = chunk << level
        for offset, value in enumerate(await _leaves(db, org_id, lo, min(lo + (1 << level), size))):
            leaves[lo + offset] = value
    return subtrees.primed_tree(size, leaves, cached)


async def _leaves(db: Database, org_id: uuid.UUID, lo: int, hi: int) -> list[bytes]:
    """Leaf hashes lo..hi-1, all there: a proof is never made over a log with holes."""
    found = await store.leaves(db, org_id, hi, lo)
    if len(found) != hi - lo or any(len(h) != 32 for h in found):
        raise InternalError("the event log has gaps or events without leaves", org_id=str(org_id))
    return found
