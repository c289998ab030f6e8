"""The organisation's transparency log: signed checkpoints, inclusion and consistency proofs
(docs/verification.md). Everything is the caller's organisation's only: another's event id is
an unknown id, and each organisation's tree holds its own events alone."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from evidence_gateway.auth import Scope
from evidence_gateway.core import evidence_keys, merkle, subtrees
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.errors import InternalError, InvalidInput, NotFound
from evidence_gateway.proofs.notes import Checkpoint, sign_note
from evidence_gateway.resolvers import seals
from evidence_gateway.resolvers.events import ADMIN_ONLY_DATA
from evidence_gateway.resolvers.tlog_tree import proof_tree
from evidence_gateway.resolvers.validation import canonical_uuid
from evidence_gateway.settings import Settings
from evidence_gateway.store import tlog as store
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import TlogCheckpointRecord


@dataclass(frozen=True, slots=True)
class InclusionProof:
    event_id: uuid.UUID
    sequence: int
    leaf_index: int
    leaf_hash: bytes
    # The leaf's bytes, when the caller may read all of the event (else None: the hash suffices).
    leaf: bytes | None
    audit_path: list[bytes]
    checkpoint: TlogCheckpointRecord


@dataclass(frozen=True, slots=True)
class ConsistencyProof:
    old: TlogCheckpointRecord
    new: TlogCheckpointRecord
    proof: list[bytes]


async def issue_checkpoint(db: Database, settings: Settings, org_id: uuid.UUID) -> TlogCheckpointRecord:
    """A signed checkpoint of the tree as committed now (the latest one again if it has not grown)."""
    size = await store.tree_size(db, org_id)
    latest = await store.checkpoint(db, org_id)
    if latest is not None and latest.size >= size:
        return latest
    start = latest.size if latest is not None else 0
    edge = _split_hashes(latest.frontier) if latest is not None else []
    added = await store.leaves(db, org_id, size, start)
    if len(added) != size - start or any(len(h) != 32 for h in added):
        # Never sign a root over a log with holes: `log verify` says what is wrong.
        raise InternalError("the event log has gaps or events without leaves", org_id=str(org_id))
    completed: list[tuple[int, int, bytes]] = []
    edge = merkle.extend(edge, start, added, completed, subtrees.CHUNK_LEVEL)
    root = merkle.root_of_frontier(edge)
    key = await evidence_keys.signing_key(db, settings)
    note = sign_note(Checkpoint(evidence_keys.origin(settings, org_id), size, root).text(), key)
    row = TlogCheckpointRecord(
        org_id=org_id, size=size, root=root, frontier=b"".join(edge), key_id=key.key_id, note=note, issued_at=utcnow()
    )
    stored = await store.store_checkpoint(db, row)
    # The subtrees these leaves completed, for proofs (resolvers/tlog_tree.py).
    await store.keep_subtrees(db, org_id, completed)
    # The packs' events the checkpoint newly covers get their statements (each range once).
    await seals.seal_new_events(db, settings, org_id, latest.size if latest is not None else 0, size)
    return stored


async def checkpoint_grown(db: Database, settings: Settings) -> int:
    """A checkpoint of each organisation's log that grew since its last one; how many were signed."""
    grown = await store.grown_logs(db)
    for org_id, _size in grown:
        await issue_checkpoint(db, settings, org_id)
    return len(grown)


async def checkpoint(ctx: Ctx, size: Any = None) -> TlogCheckpointRecord:
    """The checkpoint of ``size`` (one issued earlier), or a current one (issued now if the log grew)."""
    if size is None:
        return await issue_checkpoint(ctx.db, ctx.settings, ctx.org_id)
    found = await store.checkpoint(ctx.db, ctx.org_id, _size(size, "size"))
    if found is None:
        raise NotFound("checkpoint not found")
    return found


async def inclusion(ctx: Ctx, event_id: Any, size: Any = None) -> InclusionProof:
    """The event's leaf and its path to a checkpoint's root: ``size``'s, or a current one."""
    try:
        # A query parameter, not a path: missing or malformed is bad input (422), as for size.
        wanted = canonical_uuid(event_id)
    except ValueError:
        raise InvalidInput(fields={"event": "an event id (UUID)"}) from None
    event = await store.event_position(ctx.db, ctx.org_id, wanted)
    if event is None:
        raise NotFound("event not found")
    cp = await checkpoint(ctx, size)
    if cp.size < event.sequence:
        cp = await issue_checkpoint(ctx.db, ctx.settings, ctx.org_id) if size is None else cp
        if cp.size < event.sequence:
            raise InvalidInput(fields={"size": "the checkpoint does not include this event"})
    index = event.sequence - 1
    tree = await proof_tree(ctx.db, ctx.org_id, cp.size, inclusions=[index])
    leaf = store.leaf_of(event)
    hidden = ADMIN_ONLY_DATA.get(event.subject_type) and not ctx.principal.scope.allows(Scope.ADMIN)
    return InclusionProof(
        event_id=event.id,
        sequence=event.sequence,
        leaf_index=index,
        leaf_hash=tree.leaves[index],
        leaf=None if hidden else leaf,
        audit_path=tree.inclusion(index, cp.size),
        checkpoint=cp,
    )


async def consistency(ctx: Ctx, old: Any, new: Any) -> ConsistencyProof:
    """That the tree at checkpoint ``new`` extends the one at checkpoint ``old``."""
    old_size, new_size = _size(old, "from"), _size(new, "to")
    if old_size > new_size:
        raise InvalidInput(fields={"from": "must not exceed to"})
    first = await store.checkpoint(ctx.db, ctx.org_id, old_size)
    second = await store.checkpoint(ctx.db, ctx.org_id, new_size)
    if first is None or second is None:
        raise NotFound("checkpoint not found")
    tree = await proof_tree(ctx.db, ctx.org_id, new_size, consistencies=[(old_size, new_size)])
    return ConsistencyProof(first, second, tree.consistency(old_size, new_size))


def _split_hashes(joined: bytes) -> list[bytes]:
    return [bytes(joined[i : i + 32]) for i in range(0, len(joined), 32)]


def _size(value: Any, field: str) -> int:
    text = str(value)
    if not text.isdigit() or len(text) > 18:
        raise InvalidInput(fields={field: "a tree size (a whole number)"})
    return int(text)
