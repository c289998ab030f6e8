"""/api/v2/log/… (extension): the organisation's transparency log, and the instance's public keys
at /.well-known/evidence-keys. Hashes are base64, as in checkpoints (C2SP tlog-checkpoint)."""

from __future__ import annotations

import base64
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.core import evidence_keys
from evidence_gateway.resolvers import bundles, tlog
from evidence_gateway.rest_compat.http import JSONResponse, caller, envelope
from evidence_gateway.store.record_types import TlogCheckpointRecord


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode()


def render_checkpoint(cp: TlogCheckpointRecord) -> dict[str, Any]:
    return {
        "origin": cp.note.split("\n", 1)[0],
        "size": cp.size,
        "root_hash": _b64(cp.root),
        "key_id": cp.key_id,
        "issued_at": cp.issued_at,
        "note": cp.note,
    }


def render_inclusion(proof: tlog.InclusionProof) -> dict[str, Any]:
    return {
        "event_id": proof.event_id,
        "sequence": proof.sequence,
        "leaf_index": proof.leaf_index,
        "tree_size": proof.checkpoint.size,
        "leaf_hash": _b64(proof.leaf_hash),
        "leaf": None if proof.leaf is None else _b64(proof.leaf),
        "audit_path": [_b64(h) for h in proof.audit_path],
        "checkpoint": render_checkpoint(proof.checkpoint),
    }


def render_consistency(proof: tlog.ConsistencyProof) -> dict[str, Any]:
    return {
        "from_size": proof.old.size,
        "to_size": proof.new.size,
        "proof": [_b64(h) for h in proof.proof],
        "from_checkpoint": render_checkpoint(proof.old),
        "to_checkpoint": render_checkpoint(proof.new),
    }


async def get_checkpoint(request: Request) -> Response:
    """GET /v2/log/checkpoint?size=: a checkpoint issued earlier, or a current one."""
    ctx = await caller(request)
    return envelope(render_checkpoint(await tlog.checkpoint(ctx, request.query_params.get("size"))))


async def get_inclusion(request: Request) -> Response:
    """GET /v2/log/proof/inclusion?event=&size=: an event's leaf and its audit path."""
    ctx = await caller(request)
    query = request.query_params
    return envelope(render_inclusion(await tlog.inclusion(ctx, query.get("event"), query.get("size"))))


async def get_consistency(request: Request) -> Response:
    """GET /v2/log/proof/consistency?from=&to=: that one checkpoint's tree extends another's."""
    ctx = await caller(request)
    query = request.query_params
    return envelope(render_consistency(await tlog.consistency(ctx, query.get("from", ""), query.get("to", ""))))


async def evidence_keys_document(request: Request) -> Response:
    """GET /.well-known/evidence-keys: every public key that ever signed, no API key needed."""
    state = request.app.state
    await evidence_keys.signing_key(state.db, state.settings)  # made on first use: publish it from the start
    rows = await evidence_keys.verifier_keys(state.db)
    keys = []
    for row in rows:
        public = evidence_keys.public_of(row)
        keys.append(
            {
                "key_id": row.key_id,
                "name": row.name,
                "algorithm": "ed25519",
                "public_key": _b64(public.public),
                "vkey": public.vkey,
                "created_at": row.created_at,
                "retired_at": row.retired_at,
            }
        )
    return JSONResponse({"keys": keys})


routes = [
    Route("/v2/log/checkpoint", get_checkpoint, methods=["GET"]),
    Route("/v2/log/proof/inclusion", get_inclusion, methods=["GET"]),
    Route("/v2/log/proof/consistency", get_consistency, methods=["GET"]),
]
well_known = [Route("/.well-known/evidence-keys", evidence_keys_document, methods=["GET"])]


async def get_bundle(request: Request) -> Response:
    """GET /v2/packs/{id}/bundle: the pack's verifiable bundle (zip)."""
    ctx = await caller(request)
    name, content = await bundles.pack_bundle(ctx, request.path_params["id"])
    return Response(
        content,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


routes.append(Route("/v2/packs/{id}/bundle", get_bundle, methods=["GET"]))
