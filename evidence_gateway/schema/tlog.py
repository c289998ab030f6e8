"""GraphQL over the organisation's transparency log (docs/verification.md): the same resolvers
as /api/v2/log/…, hashes in base64 as in checkpoints."""

from __future__ import annotations

import base64
import uuid
from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.types import Info

from evidence_gateway.core.timeutil import as_aware
from evidence_gateway.resolvers import bundles, tlog
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.store.record_types import TlogCheckpointRecord

GqlInfo = Info[GraphQLContext, None]
SizeArg = Annotated[int | None, strawberry.argument(description="A tree size a checkpoint was issued at; null: now.")]


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


@strawberry.type(description="A signed checkpoint of the organisation's log (C2SP tlog-checkpoint, signed note).")
class LogCheckpoint:
    origin: str = strawberry.field(description="The log's origin: the note's first line.")
    size: int = strawberry.field(description="Tree size: the events it covers (sequences 1..size).")
    root_hash: str = strawberry.field(description="RFC 6962 root hash of the tree, base64.")
    key_id: str = strawberry.field(description="Key id of the signing key (/.well-known/evidence-keys).")
    issued_at: datetime = strawberry.field(description="When it was signed.")
    note: str = strawberry.field(description="The signed note itself, to verify as the C2SP formats say.")


@strawberry.type(description="An event's leaf and its audit path to a checkpoint's root (RFC 6962 §2.1.1).")
class LogInclusionProof:
    event_id: uuid.UUID = strawberry.field(description="The event.")
    sequence: int = strawberry.field(description="Its sequence: the leaf index plus one.")
    leaf_index: int = strawberry.field(description="Its index in the tree.")
    tree_size: int = strawberry.field(description="The size of the tree the path leads to.")
    leaf_hash: str = strawberry.field(description="SHA-256(0x00 || leaf), base64.")
    leaf: str | None = strawberry.field(
        description="The leaf's bytes (the event's canonical JSON), base64; null where the key may not read all of it."
    )
    audit_path: list[str] = strawberry.field(description="The audit path, base64 hashes, leaf side first.")
    checkpoint: LogCheckpoint = strawberry.field(description="The signed checkpoint whose root the path reaches.")


@strawberry.type(description="That one checkpoint's tree extends another's (RFC 6962 §2.1.2).")
class LogConsistencyProof:
    from_size: int = strawberry.field(description="The older tree size.")
    to_size: int = strawberry.field(description="The newer tree size.")
    proof: list[str] = strawberry.field(description="The consistency proof, base64 hashes.")
    from_checkpoint: LogCheckpoint = strawberry.field(description="The older signed checkpoint.")
    to_checkpoint: LogCheckpoint = strawberry.field(description="The newer signed checkpoint.")


def checkpoint_type(cp: TlogCheckpointRecord) -> LogCheckpoint:
    return LogCheckpoint(
        origin=cp.note.split("\n", 1)[0],
        size=cp.size,
        root_hash=_b64(cp.root),
        key_id=cp.key_id,
        issued_at=as_aware(cp.issued_at),
        note=cp.note,
    )


@strawberry.type
class Query:
    @strawberry.field(
        description="A checkpoint of the organisation's log: of `size` (issued earlier), or a current one."
    )
    async def log_checkpoint(self, info: GqlInfo, size: SizeArg = None) -> LogCheckpoint:
        return checkpoint_type(await tlog.checkpoint(info.context.ctx, size))

    @strawberry.field(description="An event's inclusion proof: in the checkpoint of `size`, or a current one.")
    async def log_inclusion_proof(
        self,
        info: GqlInfo,
        event_id: Annotated[uuid.UUID, strawberry.argument(description="The event.")],
        size: SizeArg = None,
    ) -> LogInclusionProof:
        proof = await tlog.inclusion(info.context.ctx, event_id, size)
        return LogInclusionProof(
            event_id=proof.event_id,
            sequence=proof.sequence,
            leaf_index=proof.leaf_index,
            tree_size=proof.checkpoint.size,
            leaf_hash=_b64(proof.leaf_hash),
            leaf=None if proof.leaf is None else _b64(proof.leaf),
            audit_path=[_b64(h) for h in proof.audit_path],
            checkpoint=checkpoint_type(proof.checkpoint),
        )

    @strawberry.field(description="A consistency proof between two checkpoints of the organisation's log.")
    async def log_consistency_proof(
        self,
        info: GqlInfo,
        from_size: Annotated[int, strawberry.argument(description="The older checkpoint's size.")],
        to_size: Annotated[int, strawberry.argument(description="The newer checkpoint's size.")],
    ) -> LogConsistencyProof:
        proof = await tlog.consistency(info.context.ctx, from_size, to_size)
        return LogConsistencyProof(
            from_size=proof.old.size,
            to_size=proof.new.size,
            proof=[_b64(h) for h in proof.proof],
            from_checkpoint=checkpoint_type(proof.old),
            to_checkpoint=checkpoint_type(proof.new),
        )

    @strawberry.field(
        description="Where the pack's verifiable bundle (zip) is downloaded with the Bearer key: "
        "GET /api/v2/packs/{id}/bundle (docs/verification.md)."
    )
    async def pack_bundle_url(
        self, info: GqlInfo, pack_id: Annotated[uuid.UUID, strawberry.argument(description="Pack id.")]
    ) -> str:
        return await bundles.bundle_url(info.context.ctx, pack_id)


@strawberry.type
class Mutation:
    """Checkpoints are signed by the log itself, never by a mutation."""
