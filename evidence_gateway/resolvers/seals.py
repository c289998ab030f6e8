"""Packs' signed statements: a seal for each generated pack and a statement for each change of
its status, DSSE envelopes over in-toto Statements (docs/verification.md, "Seals").

A statement names the log position of the event it is for, which exists only once that event
committed; so statements are signed just after, as checkpoints advance over the pack's events
(each event is looked at once), and at the latest when the pack's bundle is asked for.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import orjson

from evidence_gateway.calculation import ENGINE_VERSION
from evidence_gateway.core import evidence_keys
from evidence_gateway.core.merkle import leaf_hash
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import PackArtifact, SignedStatement
from evidence_gateway.packs.lookup import artifacts_of
from evidence_gateway.proofs import dsse
from evidence_gateway.settings import Settings
from evidence_gateway.store import artifact_files as files
from evidence_gateway.store import seals as store
from evidence_gateway.store import tlog as tlog_store
from evidence_gateway.store.db import Database

SEAL_PREDICATE = "https://evidence-gateway.dev/attestations/pack-seal/v1"
STATUS_PREDICATE = "https://evidence-gateway.dev/attestations/pack-status/v1"


async def seal_new_events(db: Database, settings: Settings, org_id: uuid.UUID, after: int, through: int) -> None:
    """Statements for the pack events among sequences (after, through]."""
    for pack_id, workspace_id in await store.pack_events_between(db, org_id, after, through):
        await seal_pack(db, settings, org_id, pack_id, workspace_id)


async def seal_pack(
    db: Database, settings: Settings, org_id: uuid.UUID, pack_id: uuid.UUID, workspace_id: uuid.UUID
) -> list[SignedStatement]:
    """Every statement of the pack, signing those its events still lack."""
    events = await store.pack_events(db, org_id, workspace_id, pack_id)
    have = {s.event_sequence for s in await store.statements_of(db, org_id, pack_id)}
    missing = [e for e in events if e.sequence not in have]
    if missing:
        facts = await _facts(db, org_id, pack_id)
        if facts is not None:
            key = await evidence_keys.signing_key(db, settings)
            origin = evidence_keys.origin(settings, org_id)
            for event in missing:
                predicate_type, predicate = _predicate(facts, event, origin)
                envelope = dsse.seal(dsse.statement(facts["subjects"], predicate_type, predicate), key)
                await store.keep(
                    db,
                    SignedStatement(
                        org_id=org_id,
                        pack_id=pack_id,
                        kind="seal" if event.type == "pack.generated" else "status",
                        event_sequence=event.sequence,
                        key_id=key.key_id,
                        envelope=orjson.dumps(envelope).decode(),
                        created_at=utcnow(),
                    ),
                )
    statements = await store.statements_of(db, org_id, pack_id)
    if settings.tsa_url:
        # Loaded with a time-stamp authority configured only: asn1crypto and cryptography's X.509.
        from evidence_gateway.resolvers import timestamps

        for unstamped in (s for s in statements if s.timestamp is None):
            await timestamps.stamp(db, settings, unstamped)
        statements = await store.statements_of(db, org_id, pack_id)
    return statements


def _log_position(event: Any, origin: str) -> dict[str, Any]:
    return {
        "origin": origin,
        "event_id": str(event.id),
        "sequence": event.sequence,
        "leaf_index": event.sequence - 1,
        "leaf_sha256": leaf_hash(tlog_store.leaf_of(event)).hex(),
    }


def _predicate(facts: dict[str, Any], event: Any, origin: str) -> tuple[str, dict[str, Any]]:
    log = _log_position(event, origin)
    if event.type == "pack.generated":
        return SEAL_PREDICATE, {**facts["seal"], "log": log}
    data = orjson.loads(event.data)
    change = {
        "status_before": data.get("status_before"),
        "status_after": data.get("status_after"),
        "actor": str(event.actor) if event.actor else None,
        "occurred_at": orjson.loads(orjson.dumps(event.occurred_at, option=orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z)),
    }
    return STATUS_PREDICATE, {"pack": facts["seal"]["pack"], "change": change, "log": log}


async def _facts(db: Database, org_id: uuid.UUID, pack_id: uuid.UUID) -> dict[str, Any] | None:
    """What a seal states about the pack: its files' digests (of the stored bytes) and its inputs."""
    async with db.read() as session:
        found = await store.seal_inputs(session, org_id, pack_id)
        if found is None:
            return None
        pack, run, factors, workspace = found
        artifacts = (await artifacts_of(session, [pack_id]))[pack_id]
    subjects = {a.file_name or a.artifact_type: await file_digest(db, a) for a in artifacts}
    return {
        "subjects": subjects,
        "seal": {
            "pack": {"id": str(pack.id), "version_number": pack.version_number, "pack_hash": pack.pack_hash},
            "workspace": {"id": str(pack.workspace_id), "name": workspace.name if workspace else None},
            "run": None
            if run is None
            else {
                "id": str(run.id),
                "rerun_hash": run.rerun_hash,
                "methodology_profile_id": str(run.methodology_profile_id) if run.methodology_profile_id else None,
            },
            "factor_version": None
            if factors is None
            else {"id": str(factors.id), "code": factors.code, "name": factors.name, "source": factors.source},
            "engine_version": ENGINE_VERSION,
            # In pack_hash order (docs/packs.md): the files' names in the bundle and their types.
            "artifacts": [{"type": a.artifact_type, "name": a.file_name or a.artifact_type} for a in artifacts],
        },
    }


async def file_digest(db: Database, artifact: PackArtifact) -> str:
    """SHA-256 (hex) of the stored bytes, read a slice at a time."""
    digest = hashlib.sha256()
    async for piece in files.read_slices(db, artifact):
        digest.update(piece)
    return digest.hexdigest()
