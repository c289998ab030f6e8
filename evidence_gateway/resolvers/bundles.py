"""A pack's bundle: one zip an auditor verifies offline (``evidence-gateway verify``; the layout
is docs/verification.md's, "The bundle"). The pack's files, its seal and status statements, a
checkpoint of the organisation's log signed now, each statement's event leaf with its inclusion
proof in that checkpoint, and every public key of the instance."""

from __future__ import annotations

import base64
import io
import logging
import zipfile
from typing import Any

import anyio
import orjson

from evidence_gateway.core import evidence_keys
from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import Conflict
from evidence_gateway.packs.lookup import artifacts_of, load_pack
from evidence_gateway.resolvers import pack_reads, seals, tlog
from evidence_gateway.resolvers.tlog_tree import proof_tree
from evidence_gateway.resolvers.validation import parse_id
from evidence_gateway.store import artifact_files as files
from evidence_gateway.store import tlog as tlog_store

FORMAT = "evidence-bundle/v1"
log = logging.getLogger(__name__)


def _json(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z)


async def pack_bundle(ctx: Ctx, pack_id: Any) -> tuple[str, bytes]:
    """The bundle's file name and bytes; 409 while the pack has no sealed files."""
    async with ctx.db.read() as session:
        pack = await load_pack(session, ctx, parse_id(pack_id, "pack"))
        artifacts = (await artifacts_of(session, [pack.id]))[pack.id]
    if pack.pack_hash is None:
        raise Conflict("the pack has no generated files to bundle", status=pack.status)
    statements = await seals.seal_pack(ctx.db, ctx.settings, ctx.org_id, pack.id, pack.workspace_id)
    if not any(s.kind == "seal" for s in statements):
        raise Conflict("the pack's generation is not in the log yet", status=pack.status)
    checkpoint = await tlog.issue_checkpoint(ctx.db, ctx.settings, ctx.org_id)
    indices = [s.event_sequence - 1 for s in statements]
    tree = await proof_tree(ctx.db, ctx.org_id, checkpoint.size, inclusions=indices)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        listed = []
        stamped = False
        for artifact in artifacts:
            name = artifact.file_name or artifact.artifact_type
            zf.writestr(f"artifacts/{name}", await files.read_whole(ctx.db, artifact))
            listed.append(
                {"type": artifact.artifact_type, "path": f"artifacts/{name}", "sha256": artifact.content_sha256}
            )
        for statement in statements:
            stem = "seal" if statement.kind == "seal" else f"statements/{statement.event_sequence}"
            zf.writestr(f"{stem}.dsse.json", statement.envelope)
            if statement.timestamp is not None:
                zf.writestr(f"{stem}.tsr", statement.timestamp)
                stamped = True
            event = await _event(ctx, statement.event_sequence)
            index = statement.event_sequence - 1
            zf.writestr(f"log/leaves/{statement.event_sequence}.json", tlog_store.leaf_of(event))
            proof = {
                "leaf_index": index,
                "tree_size": checkpoint.size,
                "audit_path": [base64.b64encode(h).decode() for h in tree.inclusion(index, checkpoint.size)],
            }
            zf.writestr(f"log/proofs/{statement.event_sequence}.json", _json(proof))
        chain = await _tsa_chain(ctx.settings.tsa_ca_file) if stamped else None
        if chain is not None:
            zf.writestr("tsa-chain.pem", chain)
        zf.writestr("log/checkpoint.txt", checkpoint.note)
        keys = [
            {"key_id": row.key_id, "vkey": evidence_keys.public_of(row).vkey}
            for row in await evidence_keys.verifier_keys(ctx.db)
        ]
        zf.writestr("keys.json", _json({"keys": keys}))
        manifest = {
            "format": FORMAT,
            "pack_id": str(pack.id),
            "pack_hash": pack.pack_hash,
            "artifacts": listed,
            "statements": [s.event_sequence for s in statements],
        }
        zf.writestr("manifest.json", _json(manifest))
    return f"pack-{pack.id}-v{pack.version_number}-bundle.zip", out.getvalue()


async def bundle_url(ctx: Ctx, pack_id: Any) -> str:
    """Where the pack's bundle is downloaded (with the Bearer key); 404 for another's or no pack."""
    pack = await pack_reads.get_pack(ctx, pack_id)
    return f"{ctx.settings.public_base_url.rstrip('/')}/api/v2/packs/{pack.id}/bundle"


async def _tsa_chain(path: str) -> bytes | None:
    """The authority's certificates, if configured and readable: the token verifies without them
    (they only let an auditor chain it), so an unreadable file is logged, not a failed bundle."""
    if not path:
        return None
    try:
        return await anyio.Path(path).read_bytes()
    except OSError as exc:
        log.warning("EVIDENCE_TSA_CA_FILE cannot be read (%s): bundles go without tsa-chain.pem", exc.strerror)
        return None


async def _event(ctx: Ctx, sequence: int) -> Any:
    rows = await tlog_store.events_of(ctx.db, ctx.org_id, sequence, sequence)
    return rows[0]
