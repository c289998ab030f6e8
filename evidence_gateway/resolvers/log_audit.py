"""``evidence-gateway log verify``: re-checks the stored log against the rows it vouches for.

For each organisation: the events are numbered 1..n without gaps; each stored leaf hash is the
hash of its event's canonical bytes, recomputed from the event row; every kept checkpoint is
signed by a known key and its root is the root recomputed from the event rows (so every
checkpoint is consistent with the log as stored now); every cached subtree hash (the proofs'
shortcut) is the tree's; every signed statement verifies and names
the leaf its event has; every pack's stored pack_hash and file digests, and every approval row,
agree with what the log recorded when they happened. An edit of an event, a leaf, a checkpoint,
a pack, its files or an approval behind the server's back is reported.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson

from evidence_gateway.core import evidence_keys
from evidence_gateway.core.merkle import Tree, frontier, leaf_hash
from evidence_gateway.models import PackArtifact
from evidence_gateway.proofs import dsse
from evidence_gateway.proofs.notes import NoteError, PublicKey, verify_checkpoint
from evidence_gateway.resolvers import seals
from evidence_gateway.store import seals as seal_store
from evidence_gateway.store import tlog as store
from evidence_gateway.store.db import Database

_BATCH = 5000


@dataclass
class Audit:
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)


async def audit(db: Database, pinned: list[PublicKey] | None = None) -> Audit:
    """Every organisation's log and the rows it vouches for; ``pinned`` keys replace the stored ones."""
    keys = pinned if pinned is not None else [evidence_keys.public_of(r) for r in await evidence_keys.verifier_keys(db)]
    result = Audit()
    for org_id in await store.organisations(db):
        await _audit_org(db, org_id, keys, result)
    return result


async def _audit_org(db: Database, org_id: uuid.UUID, keys: list[PublicKey], result: Audit) -> None:
    problems = result.problems
    size = await store.tree_size(db, org_id)
    stored = await store.leaves(db, org_id, size)
    recomputed: list[bytes] = []
    logged: dict[str, dict[str, Any]] = {}  # what the log says about packs and approvals
    sequence = 0
    while True:
        rows = await store.events_of(db, org_id, sequence + 1, sequence + _BATCH)
        for row in rows:
            sequence += 1
            if row.sequence != sequence:
                problems.append(f"org {org_id}: event sequence {row.sequence} where {sequence} was due (a gap)")
                sequence = row.sequence
            recomputed.append(leaf_hash(store.leaf_of(row)))
            if row.type in seal_store.SEALED_TYPES:
                data = orjson.loads(row.data)
                key = str(data.get("approval_action_id") or "") if row.type != "pack.generated" else str(row.subject_id)
                logged[key] = {"event": row, "data": data}
        if len(rows) < _BATCH:
            break
    if len(recomputed) != len(stored):
        problems.append(f"org {org_id}: {len(recomputed)} events but {len(stored)} leaves")
    for index, (mine, kept) in enumerate(zip(recomputed, stored, strict=False)):
        if mine != kept:
            problems.append(f"org {org_id}: event {index + 1} does not hash to its leaf (event or leaf changed)")
    tree = Tree(recomputed)
    checkpoints = await store.all_checkpoints(db, org_id)
    for cp in checkpoints:
        try:
            parsed, _key = verify_checkpoint(cp.note, keys)
        except NoteError as exc:
            problems.append(f"org {org_id}: checkpoint {cp.size}: {exc}")
            continue
        if parsed.size != cp.size or parsed.root != bytes(cp.root):
            problems.append(f"org {org_id}: checkpoint {cp.size}: stored columns differ from its signed note")
        if parsed.size > tree.size or tree.root(parsed.size) != parsed.root:
            problems.append(f"org {org_id}: checkpoint {parsed.size}: the events no longer hash to its signed root")
        elif b"".join(frontier(tree, cp.size)) != bytes(cp.frontier):
            problems.append(f"org {org_id}: checkpoint {cp.size}: its stored frontier is not the tree's")
    for level, first, value in await store.all_subtrees(db, org_id):
        last = first + (1 << level)
        if first % (1 << level) or last > tree.size or tree.hash(first, last) != value:
            problems.append(f"org {org_id}: cached subtree of leaves {first}..{last - 1} is not the tree's")
    await _audit_packs(db, org_id, keys, tree, logged, problems)
    result.checked.append(f"org {org_id}: {len(recomputed)} events, {len(checkpoints)} checkpoints")


async def _audit_packs(
    db: Database,
    org_id: uuid.UUID,
    keys: list[PublicKey],
    tree: Tree,
    logged: dict[str, dict[str, Any]],
    problems: list[str],
) -> None:
    packs, approvals, artifacts = await seal_store.pack_rows(db, org_id)
    by_pack: dict[uuid.UUID, list[PackArtifact]] = {}
    for artifact in artifacts:
        by_pack.setdefault(artifact.report_pack_id, []).append(artifact)
    for pack in packs:
        entry = logged.get(str(pack.id))
        if entry is None:
            continue  # never generated (queued, failed): nothing was vouched for
        data = entry["data"]
        if pack.pack_hash != data.get("pack_hash"):
            problems.append(f"pack {pack.id}: pack_hash differs from the logged pack.generated")
        stated = {a["artifact_type"]: a.get("content_sha256") for a in data.get("artifacts", [])}
        for artifact in by_pack.get(pack.id, []):
            if artifact.artifact_type in stated and stated[artifact.artifact_type] != artifact.content_sha256:
                problems.append(f"pack {pack.id}: {artifact.artifact_type} digest differs from the log")
            if artifact.content_sha256 and await seals.file_digest(db, artifact) != artifact.content_sha256:
                problems.append(f"pack {pack.id}: {artifact.artifact_type} bytes do not match their digest")
        for statement in await seal_store.statements_of(db, org_id, pack.id):
            try:
                content, _key = dsse.open_envelope(orjson.loads(statement.envelope), keys)
            except (dsse.EnvelopeError, orjson.JSONDecodeError) as exc:
                problems.append(f"pack {pack.id}: statement of event {statement.event_sequence}: {exc}")
                continue
            position = content["predicate"]["log"]
            index = int(position["leaf_index"])
            if index >= tree.size or tree.leaves[index].hex() != position["leaf_sha256"]:
                problems.append(f"pack {pack.id}: statement {statement.event_sequence} names another leaf")
            if content["predicate"]["pack"].get("pack_hash") != pack.pack_hash:
                problems.append(
                    f"pack {pack.id}: statement of event {statement.event_sequence} states another pack_hash"
                )
    for action in approvals:
        entry = logged.get(str(action.id))
        if entry is None:
            problems.append(f"approval {action.id}: no pack.status_changed in the log")
            continue
        data, event = entry["data"], entry["event"]
        recorded = (data.get("action_type"), data.get("comment"), data.get("status_before"), data.get("status_after"))
        if recorded != (action.action_type, action.comment, action.status_before, action.status_after):
            problems.append(f"approval {action.id}: differs from the logged status change")
        if str(event.actor) != str(action.api_key_id) or str(event.subject_id) != str(action.report_pack_id):
            problems.append(f"approval {action.id}: another actor or pack than the log records")
