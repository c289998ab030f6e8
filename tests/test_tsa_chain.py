"""`verify --tsa-ca` checks a time-stamp's whole certificate chain (proofs/timestamp.py
check_chain): every link to the given root, issuers that are CAs, and every certificate valid at
the token's genTime. Tokens come from ``openssl ts -reply`` over certificates made here with
chosen dates (root -> intermediate -> TSA); revocation is out of scope (docs/verification.md)."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from evidence_gateway.proofs import timestamp

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the tokens")

NOW = dt.datetime.now(dt.UTC)
DAY = dt.timedelta(days=1)
CONFIG = """[ tsa ]
default_tsa = c
[ c ]
serial = {d}/serial
crypto_device = builtin
signer_cert = {d}/tsa.pem
certs = {d}/certs.pem
signer_key = {d}/tsa.key
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
ess_cert_id_alg = sha256
"""


def _cert(
    name: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None,
    *,
    ca: bool,
    start: dt.datetime = NOW - DAY,
    end: dt.datetime = NOW + DAY,
) -> x509.Certificate:
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256())


def _pem(*certs: x509.Certificate) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


def _token(d: Path, tsa: x509.Certificate, key: ec.EllipticCurvePrivateKey, carried: bytes, data: bytes) -> bytes:
    d.mkdir(exist_ok=True)
    (d / "serial").write_text("01\n")
    (d / "tsa.pem").write_bytes(_pem(tsa))
    (d / "certs.pem").write_bytes(carried)
    (d / "tsa.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    (d / "tsa.cnf").write_text(CONFIG.format(d=d))
    query, _nonce = timestamp.request(data)
    done = subprocess.run(
        ["openssl", "ts", "-reply", "-config", f"{d}/tsa.cnf", "-queryfile", "/dev/stdin", "-out", "-"],
        input=query,
        capture_output=True,
        check=True,
    )
    return done.stdout


def _keys(n: int) -> list[ec.EllipticCurvePrivateKey]:
    return [ec.generate_private_key(ec.SECP256R1()) for _ in range(n)]


def test_the_whole_chain_to_the_root_is_checked_at_gen_time(tmp_path: Path) -> None:
    root_key, mid_key, tsa_key, other_key = _keys(4)
    root = _cert("Root", root_key, None, ca=True)
    mid = _cert("Intermediate", mid_key, (root, root_key), ca=True)
    tsa = _cert("TSA", tsa_key, (mid, mid_key), ca=False)
    data = b"a statement's signature"

    # The token carries the intermediate: the root alone is enough.
    asked = dt.datetime.now(dt.UTC)
    reply = _token(tmp_path / "a", tsa, tsa_key, _pem(tsa, mid), data)
    answered = dt.datetime.now(dt.UTC)
    when = timestamp.check_reply(reply, data)
    assert timestamp.check_chain(reply, _pem(root), when) == "CN=Root"
    # genTime has whole seconds: it falls in the second the reply was made.
    assert asked - dt.timedelta(seconds=1) <= when <= answered + dt.timedelta(seconds=1)
    # Another root does not vouch for it.
    other = _cert("Other", other_key, None, ca=True)
    with pytest.raises(timestamp.TimestampError, match="does not chain to the given CA: no issuer of CN=Intermediate"):
        timestamp.check_chain(reply, _pem(other), when)

    # The token carries the TSA's certificate only: the intermediate must come with the root.
    bare = _token(tmp_path / "b", tsa, tsa_key, _pem(tsa), data)
    with pytest.raises(timestamp.TimestampError, match="no issuer of CN=TSA"):
        timestamp.check_chain(bare, _pem(root), when)
    assert timestamp.check_chain(bare, _pem(root, mid), when) == "CN=Intermediate"  # trusted as given

    # Each certificate must be valid at genTime: the TSA's, an intermediate's, the root's.
    later = when + 3 * DAY
    with pytest.raises(timestamp.TimestampError, match="CN=TSA was not valid at the time-stamp's time"):
        timestamp.check_chain(reply, _pem(root), later)
    expired_mid = _cert("Intermediate", mid_key, (root, root_key), ca=True, end=NOW - DAY / 2)
    reply = _token(tmp_path / "c", tsa, tsa_key, _pem(tsa, expired_mid), data)
    with pytest.raises(timestamp.TimestampError, match="CN=Intermediate was not valid"):
        timestamp.check_chain(reply, _pem(root), timestamp.check_reply(reply, data))
    young_root = _cert("Root", root_key, None, ca=True, start=NOW + DAY / 2)
    with pytest.raises(timestamp.TimestampError, match="CN=Root was not valid"):
        timestamp.check_chain(_token(tmp_path / "d", tsa, tsa_key, _pem(tsa, mid), data), _pem(young_root), when)

    # An issuer that is no CA does not make a chain.
    not_ca = _cert("Intermediate", mid_key, (root, root_key), ca=False)
    reply = _token(tmp_path / "e", tsa, tsa_key, _pem(tsa, not_ca), data)
    with pytest.raises(
        timestamp.TimestampError, match="CN=Intermediate signed a certificate of the chain but is not a CA"
    ):
        timestamp.check_chain(reply, _pem(root), timestamp.check_reply(reply, data))
