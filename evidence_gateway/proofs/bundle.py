"""Verifying a pack's bundle offline: no server, no database (docs/verification.md).

Every check below fails with VerificationError naming what did not hold; ``verify_bundle``
returns the list of what it verified. The keys trusted are the bundle's own ``keys.json`` unless
the caller pins others (``--key``): a bundle's keys only say who signed, so an auditor compares
them with the instance's /.well-known/evidence-keys, or pins a key received another way.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evidence_gateway.core.merkle import ProofError, leaf_hash, verify_inclusion
from evidence_gateway.proofs import dsse, timestamp
from evidence_gateway.proofs.notes import NoteError, PublicKey, b64decode, verify_checkpoint

SEAL_PREDICATE = "https://evidence-gateway.dev/attestations/pack-seal/v1"
STATUS_PREDICATE = "https://evidence-gateway.dev/attestations/pack-status/v1"
FORMAT = "evidence-bundle/v1"


class VerificationError(Exception):
    """What did not hold, in a sentence."""


@dataclass
class Report:
    pack_id: str = ""
    pack_hash: str = ""
    checks: list[str] = field(default_factory=list)

    def ok(self, line: str) -> None:
        self.checks.append(line)


def _fail(reason: str) -> VerificationError:
    return VerificationError(reason)


Entries = Mapping[str, bytes]


def _read(entries: Entries, name: str) -> bytes:
    found = entries.get(name)
    if found is None:
        raise _fail(f"{name} is missing from the bundle")
    return found


def _json(entries: Entries, name: str) -> Any:
    try:
        return json.loads(_read(entries, name))
    except ValueError:
        raise _fail(f"{name} is not JSON") from None


def read_entries(data: bytes) -> dict[str, bytes]:
    """The bundle's files by name; VerificationError if it is no readable zip."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = zf.namelist()
            if len(names) != len(set(names)):
                raise _fail("the zip holds two entries of one name")
            return {name: zf.read(name) for name in names}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise _fail(f"not a readable zip: {exc}") from None


def verify_bundle(data: bytes, pinned: list[PublicKey] | None = None, tsa_ca: bytes | None = None) -> Report:
    """Check a bundle whole; VerificationError on the first thing that does not hold."""
    return verify_entries(read_entries(data), pinned, tsa_ca)


def verify_entries(entries: Entries, pinned: list[PublicKey] | None = None, tsa_ca: bytes | None = None) -> Report:
    try:
        report = _verify(entries, pinned)
        _check_timestamp(entries, report, tsa_ca)
        return report
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise _fail(f"malformed bundle: {type(exc).__name__} {exc}") from None


def _check_timestamp(entries: Entries, report: Report, tsa_ca: bytes | None) -> None:
    """seal.tsr and statements/N.tsr, when present: RFC 3161 time-stamps over their statement's
    signature; chained to ``tsa_ca`` when given (else only to the certificate the token carries),
    and then every statement must have one."""
    statements = sorted(n for n in entries if n.startswith("statements/") and n.endswith(".dsse.json"))
    stamps = {"seal.dsse.json": "seal.tsr"} | {n: n.removesuffix(".dsse.json") + ".tsr" for n in statements}
    stray = {n for n in entries if n.endswith(".tsr")} - set(stamps.values())
    if stray:
        raise _fail(f"time-stamps of no statement in the bundle: {', '.join(sorted(stray))}")
    for envelope, name in stamps.items():
        reply = entries.get(name)
        if reply is None:
            if tsa_ca is not None:
                raise _fail(f"{name} is missing: {envelope} has no time-stamp to check against --tsa-ca")
            continue
        signature = b64decode(str(_json(entries, envelope)["signatures"][0]["sig"]))
        try:
            when = timestamp.check_reply(reply, signature)
            issuer = timestamp.check_chain(reply, tsa_ca, when) if tsa_ca is not None else None
        except timestamp.TimestampError as exc:
            raise _fail(f"{name}: {exc}") from None
        except ValueError as exc:
            raise _fail(f"{name}: malformed time-stamp: {exc}") from None
        signer = timestamp.signer_certificate(reply).subject.rfc4514_string()
        chain = f", chained to {issuer}" if issuer else " (not chained: no --tsa-ca)"
        what = "the seal's" if envelope == "seal.dsse.json" else f"{envelope}'s"
        report.ok(f"time-stamp: {what} signature existed at {when.isoformat()}, by {signer}{chain}")


def _verify(entries: Entries, pinned: list[PublicKey] | None) -> Report:
    names = set(entries)
    report = Report()
    manifest = _json(entries, "manifest.json")
    if manifest.get("format") != FORMAT:
        raise _fail("manifest.json: not an evidence-bundle/v1")
    report.pack_id, report.pack_hash = str(manifest["pack_id"]), str(manifest["pack_hash"])

    keys = pinned if pinned is not None else _bundle_keys(entries)
    report.ok(f"keys: {', '.join(k.key_id for k in keys)} ({'pinned' if pinned is not None else 'from keys.json'})")

    # The checkpoint: a signed note of a known key.
    try:
        checkpoint, signer = verify_checkpoint(_read(entries, "log/checkpoint.txt").decode(), keys)
    except (NoteError, UnicodeDecodeError) as exc:
        raise _fail(f"log/checkpoint.txt: {exc}") from None
    report.ok(f"checkpoint: {checkpoint.origin} size {checkpoint.size}, signed by {signer.key_id}")

    # The seal: signed, over exactly the bundle's files, whose bytes match.
    seal, seal_key = _open(entries, "seal.dsse.json", keys)
    if seal.get("predicateType") != SEAL_PREDICATE:
        raise _fail("seal.dsse.json: not a pack seal")
    predicate = seal["predicate"]
    if predicate["pack"]["id"] != report.pack_id or predicate["pack"]["pack_hash"] != report.pack_hash:
        raise _fail("seal.dsse.json: names another pack or pack_hash than manifest.json")
    report.ok(f"seal: signature by {seal_key.key_id} over {len(seal['subject'])} files")
    digests = _check_files(entries, names, seal["subject"], report)

    # pack_hash: SHA-256 of the files' hex digests in the seal's order (docs/packs.md).
    order = [a["name"] for a in predicate["artifacts"]]
    if sorted(order) != sorted(digests):
        raise _fail("seal: its artifacts list is not the sealed files")
    derived = hashlib.sha256("".join(digests[name] for name in order).encode("ascii")).hexdigest()
    if derived != report.pack_hash:
        raise _fail(f"pack_hash: derived {derived} from the files, the seal states {report.pack_hash}")
    report.ok(f"pack_hash: {derived} re-derived from the files")

    # The log: each statement's event is a leaf of the signed tree, and says what the statement says.
    generated = _check_leaf(entries, predicate["log"], checkpoint.root, checkpoint.size, report)
    if generated.get("type") != "pack.generated" or generated.get("subject_id") != report.pack_id:
        raise _fail("log: the seal's event is not this pack's pack.generated")
    logged = generated["data"]
    if logged.get("pack_hash") != report.pack_hash:
        raise _fail("log: the logged pack.generated states another pack_hash")
    sealed_files = [(a["type"], f"artifacts/{a['name']}", digests[a["name"]]) for a in predicate["artifacts"]]
    if [(a["type"], a["path"], a["sha256"]) for a in manifest["artifacts"]] != sealed_files:
        raise _fail("manifest.json: its artifacts are not the sealed ones, in their order")
    report.ok(f"log: pack.generated at sequence {predicate['log']['sequence']} states this pack_hash")

    statements = [n for n in sorted(names) if n.startswith("statements/") and n.endswith(".dsse.json")]
    for name in statements:
        content, key = _open(entries, name, keys)
        if content.get("predicateType") != STATUS_PREDICATE or content["predicate"]["pack"]["id"] != report.pack_id:
            raise _fail(f"{name}: not a status statement of this pack")
        if {s["name"]: s["digest"]["sha256"] for s in content["subject"]} != digests:
            raise _fail(f"{name}: covers other files than the seal")
        event = _check_leaf(entries, content["predicate"]["log"], checkpoint.root, checkpoint.size, report)
        change = content["predicate"]["change"]
        data = event["data"]
        if event.get("type") != "pack.status_changed" or event.get("subject_id") != report.pack_id:
            raise _fail(f"{name}: its event is not this pack's status change")
        if (data.get("status_before"), data.get("status_after")) != (change["status_before"], change["status_after"]):
            raise _fail(f"{name}: states another change than the log")
        report.ok(f"{name}: {change['status_before']} -> {change['status_after']}, signed by {key.key_id}, in the log")
    listed = {f"statements/{s}.dsse.json" for s in manifest["statements"]} - {
        f"statements/{predicate['log']['sequence']}.dsse.json"
    }
    if listed != set(statements):
        raise _fail("manifest.json lists other statements than the bundle holds")
    return report


def _bundle_keys(entries: Entries) -> list[PublicKey]:
    keys = []
    for entry in _json(entries, "keys.json")["keys"]:
        try:
            key = PublicKey.from_vkey(entry["vkey"])
        except NoteError as exc:
            raise _fail(f"keys.json: {exc}") from None
        if entry["key_id"] != key.key_id or set(entry) != {"key_id", "vkey"}:
            raise _fail("keys.json: a key_id that is not its key's")
        keys.append(key)
    return keys


def _open(entries: Entries, name: str, keys: list[PublicKey]) -> tuple[dict[str, Any], PublicKey]:
    try:
        return dsse.open_envelope(_json(entries, name), keys)
    except dsse.EnvelopeError as exc:
        raise _fail(f"{name}: {exc}") from None


def _check_files(entries: Entries, names: set[str], subjects: list[Any], report: Report) -> dict[str, str]:
    digests: dict[str, str] = {}
    for subject in subjects:
        name, stated = str(subject["name"]), str(subject["digest"]["sha256"])
        actual = hashlib.sha256(_read(entries, f"artifacts/{name}")).hexdigest()
        if actual != stated:
            raise _fail(f"artifacts/{name}: sha256 {actual}, the seal states {stated}")
        digests[name] = actual
    extra = {n for n in names if n.startswith("artifacts/")} - {f"artifacts/{n}" for n in digests}
    if extra:
        raise _fail(f"files the seal does not cover: {', '.join(sorted(extra))}")
    report.ok(f"artifacts: {len(digests)} files match their sealed sha256")
    return digests


def _check_leaf(entries: Entries, position: Any, root: bytes, size: int, report: Report) -> dict[str, Any]:
    sequence = int(position["sequence"])
    leaf = _read(entries, f"log/leaves/{sequence}.json")
    proof = _json(entries, f"log/proofs/{sequence}.json")
    hashed = leaf_hash(leaf)
    if hashed.hex() != position["leaf_sha256"] or int(position["leaf_index"]) != sequence - 1:
        raise _fail(f"log/leaves/{sequence}.json: not the leaf the statement names")
    if int(proof["leaf_index"]) != sequence - 1 or int(proof["tree_size"]) != size:
        raise _fail(f"log/proofs/{sequence}.json: for another leaf or tree")
    try:
        path = [b64decode(h) for h in proof["audit_path"]]
        verify_inclusion(sequence - 1, size, hashed, path, root)
    except (ProofError, ValueError) as exc:
        raise _fail(f"log/proofs/{sequence}.json: {exc}") from None
    try:
        event: dict[str, Any] = json.loads(leaf)
    except ValueError:
        raise _fail(f"log/leaves/{sequence}.json is not JSON") from None
    if event.get("id") != position["event_id"]:
        raise _fail(f"log/leaves/{sequence}.json: another event than the statement names")
    report.ok(f"inclusion: event {sequence} ({event.get('type')}) is leaf {sequence - 1} of the checkpoint's tree")
    return event
