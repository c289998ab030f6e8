"""A seal's RFC 3161 time-stamp (docs/verification.md, "Time-stamps"): from a local authority made
with ``openssl ts``, in the bundle as seal.tsr, checked by ``evidence-gateway verify`` and by
``openssl ts -verify``; a flipped byte of the token fails; an authority that is down leaves the
seal unstamped until the bundle is asked for again."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from asn1crypto import tsp  # type: ignore[import-untyped]

from evidence_gateway.proofs.bundle import VerificationError, read_entries, verify_entries
from tests.conftest import Configured
from tests.test_bundles import _bundle, _cli, _zip

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is needed to run a local TSA")

TSA_CONFIG = """[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {dir}
serial = {dir}/serial
crypto_device = builtin
signer_cert = {dir}/tsa.pem
certs = {dir}/tsa.pem
signer_key = {dir}/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = yes
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def _new_ca(d: Path, name: str) -> bytes:
    _openssl(
        *("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}"),
        *("-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"),
        *("-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem"),
    )
    return (d / "ca.pem").read_bytes()


@dataclass
class Tsa:
    url: str
    ca: Path
    up: bool = True
    answered: int = 0


@pytest.fixture
def tsa(tmp_path: Path) -> Iterator[Tsa]:
    """A CA, a TSA certificate (extendedKeyUsage critical timeStamping) and an HTTP endpoint
    that pipes each query to ``openssl ts -reply``; 503 while ``up`` is false."""
    d = tmp_path / "tsa"
    d.mkdir()
    (d / "serial").write_text("01\n")
    (d / "tsa.cnf").write_text(TSA_CONFIG.format(dir=d))
    (d / "ext.cnf").write_text("extendedKeyUsage=critical,timeStamping\nbasicConstraints=CA:FALSE\n")
    _new_ca(d, "Test CA")
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=Test TSA",
        "-keyout",
        f"{d}/tsa.key",
        "-out",
        f"{d}/tsa.csr",
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        f"{d}/tsa.csr",
        "-CA",
        f"{d}/ca.pem",
        "-CAkey",
        f"{d}/ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        f"{d}/ext.cnf",
        "-out",
        f"{d}/tsa.pem",
    )
    state = Tsa(url="", ca=d / "ca.pem")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            query = self.rfile.read(int(self.headers["Content-Length"]))
            if not state.up or self.headers["Content-Type"] != "application/timestamp-query":
                self.send_response(503)
                self.end_headers()
                return
            done = subprocess.run(
                ["openssl", "ts", "-reply", "-config", f"{d}/tsa.cnf", "-queryfile", "/dev/stdin", "-out", "-"],
                input=query,
                capture_output=True,
                check=True,
            )
            state.answered += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(done.stdout)))
            self.end_headers()
            self.wfile.write(done.stdout)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/tsa"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


async def test_a_seal_is_time_stamped_and_both_verifiers_agree(
    configured: Configured, tsa: Tsa, tmp_path: Path
) -> None:
    async with configured(tsa_url=tsa.url, tsa_ca_file=str(tsa.ca)) as api:
        _pack_id, content = await _bundle(api)
    entries = read_entries(content)
    assert "seal.tsr" in entries and entries["tsa-chain.pem"] == tsa.ca.read_bytes()
    report = verify_entries(entries, tsa_ca=tsa.ca.read_bytes())
    assert any(line.startswith("time-stamp:") and "CN=" in line for line in report.checks), report.checks

    bundle = tmp_path / "bundle.zip"
    bundle.write_bytes(content)
    ok = await _cli("verify", str(bundle), "--tsa-ca", str(tsa.ca))
    assert ok.returncode == 0, ok.stderr
    assert "time-stamp: the seal's signature existed at" in ok.stdout

    # openssl agrees: the token is over the seal signature's bytes.
    signature = base64.b64decode(json.loads(entries["seal.dsse.json"])["signatures"][0]["sig"])
    (tmp_path / "sig.bin").write_bytes(signature)
    (tmp_path / "seal.tsr").write_bytes(entries["seal.tsr"])
    command = ["openssl", "ts", "-verify", "-data", str(tmp_path / "sig.bin"), "-in", str(tmp_path / "seal.tsr")]
    command += ["-CAfile", str(tsa.ca)]
    done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
    assert done.returncode == 0 and "Verification: OK" in done.stdout, done.stdout + done.stderr
    (tmp_path / "other.bin").write_bytes(signature[:-1] + bytes([signature[-1] ^ 1]))
    command[3] = str(tmp_path / "other.bin")
    refused = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
    assert refused.returncode != 0

    token = entries["seal.tsr"]
    flipped = tmp_path / "flipped.zip"
    changed = dict(entries)
    imprint = token.index(hashlib.sha256(signature).digest())
    changed["seal.tsr"] = token[:imprint] + bytes([token[imprint] ^ 1]) + token[imprint + 1 :]
    flipped.write_bytes(_zip(changed))
    bad = await _cli("verify", str(flipped))
    assert bad.returncode == 1 and "seal.tsr" in bad.stderr, bad.stderr

    # Another CA does not vouch for this authority.
    with pytest.raises(VerificationError, match="does not chain to the given CA"):
        verify_entries(entries, tsa_ca=_new_ca(tmp_path, "Other CA"))


# The verifier's own work, the same whatever the database: run once.
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_a_flipped_byte_anywhere_the_token_signs_fails_the_verifier(configured: Configured, tsa: Tsa) -> None:
    async with configured(tsa_url=tsa.url, tsa_ca_file=str(tsa.ca)) as api:
        _pack_id, content = await _bundle(api)
    entries = read_entries(content)
    token = entries["seal.tsr"]
    missed = []
    for position in range(len(token)):
        changed = dict(entries)
        changed["seal.tsr"] = token[:position] + bytes([token[position] ^ 0x01]) + token[position + 1 :]
        try:
            verify_entries(changed, tsa_ca=tsa.ca.read_bytes())
        except VerificationError:
            continue
        missed.append(position)
    # The CMS wrapping holds bytes nothing signs (the digest algorithm list, certificates beyond the
    # signer's); every byte of the stamped content, the signed attributes and the signature counts.
    signed = tsp.TimeStampResp.load(token)["time_stamp_token"]["content"]
    signer = signed["signer_infos"][0]
    counted = [signed["encap_content_info"]["content"].contents, signer["signed_attrs"].contents]
    counted.append(signer["signature"].native)
    spans = [(token.index(part), token.index(part) + len(part)) for part in counted]
    assert [p for p in missed if any(a <= p < b for a, b in spans)] == []
    assert len(missed) < len(token) // 2


async def test_a_tsa_that_is_down_does_not_stop_a_pack_and_is_asked_again(
    configured: Configured, tsa: Tsa, tmp_path: Path
) -> None:
    tsa.up = False
    # An unreadable chain file costs the bundle only its tsa-chain.pem.
    async with configured(tsa_url=tsa.url, tsa_ca_file=str(tmp_path / "missing.pem")) as api:
        pack_id, content = await _bundle(api)
        entries = read_entries(content)
        assert "seal.tsr" not in entries
        verify_entries(entries)
        assert tsa.answered == 0
        tsa.up = True
        again = await api.get(f"/api/v2/packs/{pack_id}/bundle")
    assert again.status_code == 200
    stamped = read_entries(again.content)
    assert "seal.tsr" in stamped and "tsa-chain.pem" not in stamped
    assert any(line.startswith("time-stamp:") for line in verify_entries(stamped).checks)
    # --tsa-ca asks for a time-stamp that a bundle without one cannot give.
    with pytest.raises(VerificationError, match="seal.tsr is missing"):
        verify_entries(entries, tsa_ca=tsa.ca.read_bytes())


async def test_approval_statements_are_time_stamped_too(configured: Configured, tsa: Tsa, tmp_path: Path) -> None:
    async with configured(tsa_url=tsa.url, tsa_ca_file=str(tsa.ca)) as api:
        _pack_id, content = await _bundle(api)
    entries = read_entries(content)
    statements = sorted(n for n in entries if n.startswith("statements/") and n.endswith(".dsse.json"))
    assert len(statements) == 2  # requested, approved
    stamps = [n.removesuffix(".dsse.json") + ".tsr" for n in statements]
    assert all(name in entries for name in stamps)
    ca = tsa.ca.read_bytes()
    report = verify_entries(entries, tsa_ca=ca)
    stamped = [line for line in report.checks if line.startswith("time-stamp:")]
    assert len(stamped) == 3 and all(f"{n}'s signature existed at" in " ".join(stamped) for n in statements)

    # openssl agrees that a statement's token is over that statement's signature.
    signature = base64.b64decode(json.loads(entries[statements[0]])["signatures"][0]["sig"])
    (tmp_path / "sig.bin").write_bytes(signature)
    (tmp_path / "st.tsr").write_bytes(entries[stamps[0]])
    command = ["openssl", "ts", "-verify", "-data", str(tmp_path / "sig.bin"), "-in", str(tmp_path / "st.tsr")]
    done = await asyncio.to_thread(subprocess.run, [*command, "-CAfile", str(tsa.ca)], capture_output=True, text=True)
    assert done.returncode == 0 and "Verification: OK" in done.stdout, done.stdout + done.stderr

    # A token moved to another statement, a flipped imprint, a missing token under --tsa-ca and a
    # token of no statement are each refused, naming the entry.
    swapped = dict(entries)
    swapped[stamps[0]], swapped[stamps[1]] = entries[stamps[1]], entries[stamps[0]]
    with pytest.raises(VerificationError, match="other data"):
        verify_entries(swapped)
    token = entries[stamps[1]]
    at = token.index(
        hashlib.sha256(base64.b64decode(json.loads(entries[statements[1]])["signatures"][0]["sig"])).digest()
    )
    flipped = dict(entries)
    flipped[stamps[1]] = token[:at] + bytes([token[at] ^ 1]) + token[at + 1 :]
    with pytest.raises(VerificationError, match=stamps[1]):
        verify_entries(flipped)
    missing = {k: v for k, v in entries.items() if k != stamps[0]}
    verify_entries(missing)  # without --tsa-ca a time-stamp is optional
    with pytest.raises(VerificationError, match=f"{stamps[0]} is missing"):
        verify_entries(missing, tsa_ca=ca)
    stray = dict(entries)
    stray["statements/999.tsr"] = token
    with pytest.raises(VerificationError, match="statements/999.tsr"):
        verify_entries(stray)
