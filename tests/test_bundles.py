"""A pack's bundle verifies offline (docs/verification.md), and every single flipped bit in its
files, seal, statements, proofs, checkpoint, leaves or manifest is caught by the same verifier
`evidence-gateway verify` runs; the command itself answers 0 on a good bundle and 1 on a bad one."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from evidence_gateway.proofs.bundle import VerificationError, read_entries, verify_bundle, verify_entries
from evidence_gateway.proofs.notes import PublicKey
from tests.conftest import Api
from tests.test_packs import calculated_workspace, generated


async def _bundle(api: Api) -> tuple[str, bytes]:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    assert (await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "requested"})).status_code == 201
    assert (await api.post(f"/api/v2/packs/{pack['id']}/approvals", {"action_type": "approved"})).status_code == 201
    resp = await api.get(f"/api/v2/packs/{pack['id']}/bundle")
    assert resp.status_code == 200, resp.text
    assert resp.headers["content-type"] == "application/zip"
    return pack["id"], resp.content


async def test_a_bundle_verifies_offline_and_names_what_it_proved(api: Api, api_b: Api, tmp_path: Path) -> None:
    pack_id, content = await _bundle(api)
    report = verify_bundle(content)
    entries = read_entries(content)
    assert report.pack_id == pack_id
    assert sum(1 for n in entries if n.startswith("artifacts/")) == 9
    assert sum(1 for n in entries if n.startswith("statements/")) == 2  # requested, approved
    assert any(line.startswith("pack_hash:") for line in report.checks)
    # Pinned to the instance's published key, it verifies too; pinned to another, it does not.
    published = (await api.get("/.well-known/evidence-keys", key=None)).json()["keys"]
    assert verify_bundle(content, [PublicKey.from_vkey(k["vkey"]) for k in published]).pack_id == pack_id
    with pytest.raises(VerificationError):
        verify_bundle(content, [PublicKey(name="x", public=b"\x01" * 32)])
    # Another organisation cannot have it.
    assert (await api_b.get(f"/api/v2/packs/{pack_id}/bundle")).status_code == 404
    # GraphQL names where it is.
    query = "query($p: UUID!) { packBundleUrl(packId: $p) }"
    body = await api.gql(query, {"p": pack_id})
    assert body["data"]["packBundleUrl"] == f"http://testserver/api/v2/packs/{pack_id}/bundle"
    assert (await api_b.gql(query, {"p": pack_id}))["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    # The command: exit 0 and what was verified; exit 1 and the reason.
    good = tmp_path / "bundle.zip"
    good.write_bytes(content)
    ok = await _cli("verify", str(good))
    assert ok.returncode == 0, ok.stderr
    assert "VERIFIED" in ok.stdout and pack_id in ok.stdout
    changed = dict(entries)
    name = next(n for n in entries if n.startswith("artifacts/"))
    changed[name] = changed[name][:-1] + bytes([changed[name][-1] ^ 1])
    bad = tmp_path / "bad.zip"
    bad.write_bytes(_zip(changed))
    refused = await _cli("verify", str(bad))
    assert refused.returncode == 1 and name in refused.stderr


async def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "evidence_gateway.cli", *args]
    return await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)


def _zip(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    return out.getvalue()


async def test_every_flipped_bit_of_a_bundle_is_caught(api: Api) -> None:
    _pack_id, content = await _bundle(api)
    entries = read_entries(content)
    verify_entries(entries)
    rng = random.Random(28)
    cases = 0
    missed: list[str] = []
    for name, data in sorted(entries.items()):
        # Small files byte by byte; the artifacts at spread positions (their bytes are all hashed).
        positions = range(len(data)) if len(data) <= 400 else sorted(rng.sample(range(len(data)), 60))
        for position in positions:
            bit = 1 << rng.randrange(8)
            changed = dict(entries)
            changed[name] = data[:position] + bytes([data[position] ^ bit]) + data[position + 1 :]
            cases += 1
            try:
                verify_entries(changed)
            except VerificationError:
                continue
            missed.append(f"{name}@{position}^{bit}")
    # Whole-file edits: an entry gone, an extra file, statements dropped.
    for name in entries:
        cases += 1
        try:
            verify_entries({k: v for k, v in entries.items() if k != name})
        except VerificationError:
            continue
        missed.append(f"without {name}")
    for extra in ("artifacts/extra.txt", "statements/999.dsse.json"):
        cases += 1
        try:
            verify_entries({**entries, extra: b"{}"})
        except VerificationError:
            continue
        missed.append(f"with {extra}")
    assert missed == []
    assert cases >= 1000, cases
    print(json.dumps({"bundle_tamper_cases": cases}))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl")
async def test_openssl_agrees_with_the_seal_and_the_checkpoint(api: Api, tmp_path: Path) -> None:
    """An independent Ed25519 implementation, as docs/verification.md's by-hand steps use it."""
    _pack_id, content = await _bundle(api)
    entries = read_entries(content)
    vkey = json.loads(entries["keys.json"])["keys"][-1]["vkey"]
    der = bytes.fromhex("302a300506032b6570032100") + base64.b64decode(vkey.split("+", 2)[2])[1:]
    pem = tmp_path / "pub.pem"
    pem.write_text(f"-----BEGIN PUBLIC KEY-----\n{base64.b64encode(der).decode()}\n-----END PUBLIC KEY-----\n")
    envelope = json.loads(entries["seal.dsse.json"])
    payload, kind = base64.b64decode(envelope["payload"]), envelope["payloadType"].encode()
    pae = b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)
    text, _, signature_line = entries["log/checkpoint.txt"].decode().rpartition("\n\n")
    cases = [
        (pae, base64.b64decode(envelope["signatures"][0]["sig"])),
        ((text + "\n").encode(), base64.b64decode(signature_line.split()[-1])[4:]),
    ]
    for message, signature in cases:
        for changed, expected in ((message, 0), (message[:-1] + bytes([message[-1] ^ 1]), 1)):
            (tmp_path / "msg.bin").write_bytes(changed)
            (tmp_path / "sig.bin").write_bytes(signature)
            command = ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", str(pem), "-rawin"]
            command += ["-in", str(tmp_path / "msg.bin"), "-sigfile", str(tmp_path / "sig.bin")]
            done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
            assert (done.returncode != 0) == bool(expected), done.stdout + done.stderr
