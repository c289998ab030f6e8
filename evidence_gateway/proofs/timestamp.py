"""RFC 3161 time-stamps of seal signatures: the request sent to a time-stamping authority and
the offline check of its reply (docs/verification.md, "Time-stamps").

asn1crypto parses the ASN.1 (pure Python, no native build, maintained alongside oscrypto) and
``cryptography`` checks the signatures, so the offline verifier gains no service dependency.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime

from asn1crypto import algos, cms, tsp  # type: ignore[import-untyped]
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

CONTENT_TYPE = "application/timestamp-query"
_HASHES: dict[str, hashes.HashAlgorithm] = {
    "sha256": hashes.SHA256(),
    "sha384": hashes.SHA384(),
    "sha512": hashes.SHA512(),
}


class TimestampError(ValueError):
    """A reply or token that is malformed, for other data, or not signed as it claims."""


def request(signature: bytes) -> tuple[bytes, int]:
    """A TimeStampReq (DER) over SHA-256 of ``signature``, and its nonce."""
    nonce = secrets.randbits(63)
    req = tsp.TimeStampReq(
        {
            "version": "v1",
            "message_imprint": {
                "hash_algorithm": {"algorithm": "sha256"},
                "hashed_message": hashlib.sha256(signature).digest(),
            },
            "nonce": nonce,
            "cert_req": True,
        }
    )
    return bytes(req.dump()), nonce


def check_reply(reply: bytes, signature: bytes, nonce: int | None = None) -> datetime:
    """The time the authority vouches ``signature`` existed at; TimestampError unless the reply
    is granted, for SHA-256 of ``signature`` (and ``nonce``), and signed by its TSA certificate."""
    try:
        response = tsp.TimeStampResp.load(reply)
        status = response["status"]["status"].native
        if status not in ("granted", "granted_with_mods"):
            raise TimestampError(f"the authority did not grant a time-stamp: {status}")
        signed = response["time_stamp_token"]["content"]
        info = signed["encap_content_info"]["content"].parsed
        imprint = info["message_imprint"]
        algorithm = imprint["hash_algorithm"]["algorithm"].native
        if algorithm not in _HASHES:
            raise TimestampError(f"unsupported message imprint hash {algorithm}")
        if imprint["hashed_message"].native != hashlib.new(algorithm, signature).digest():
            raise TimestampError("the time-stamp is for other data than the seal's signature")
        if nonce is not None and info["nonce"].native != nonce:
            raise TimestampError("the time-stamp answers another request (nonce)")
        _check_signer(signed)
        when: datetime = info["gen_time"].native
        return when
    except TimestampError:
        raise
    except Exception as exc:  # noqa: BLE001 - the parsers' errors on hostile DER are many kinds
        raise TimestampError(f"malformed time-stamp: {type(exc).__name__} {exc}") from None


def signer_certificate(reply: bytes) -> x509.Certificate:
    """The TSA certificate the token names as its signer."""
    signed = tsp.TimeStampResp.load(reply)["time_stamp_token"]["content"]
    return _signer_cert(signed)


def _signer_cert(signed: cms.SignedData) -> x509.Certificate:
    sid = signed["signer_infos"][0]["sid"]
    for choice in signed["certificates"] or []:
        cert = choice.chosen
        if sid.name == "issuer_and_serial_number":
            wanted = sid.chosen
            if cert.issuer == wanted["issuer"] and cert.serial_number == wanted["serial_number"].native:
                return x509.load_der_x509_certificate(cert.dump())
        elif cert.key_identifier == sid.chosen.native:
            return x509.load_der_x509_certificate(cert.dump())
    raise TimestampError("the time-stamp holds no certificate of its signer (certReq)")


def _check_signer(signed: cms.SignedData) -> None:
    info = signed["signer_infos"][0]
    cert = _signer_cert(signed)
    usage = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage)
    if x509.oid.ExtendedKeyUsageOID.TIME_STAMPING not in usage.value:
        raise TimestampError("the signer's certificate is not for time-stamping")
    digest_name = info["digest_algorithm"]["algorithm"].native
    if digest_name not in _HASHES:
        raise TimestampError(f"unsupported digest {digest_name}")
    if len(signed["signer_infos"]) != 1 or signed["encap_content_info"]["content_type"].native != "tst_info":
        raise TimestampError("the token is not one signer's TSTInfo")
    content = signed["encap_content_info"]["content"].contents
    attrs = info["signed_attrs"]
    types = [a["values"][0].native for a in attrs if a["type"].native == "content_type"]
    if types != ["tst_info"]:
        raise TimestampError("the token's signed content type is not TSTInfo")
    digests = [a["values"][0].native for a in attrs if a["type"].native == "message_digest"]
    if digests != [hashlib.new(digest_name, content).digest()]:
        raise TimestampError("the token's signed digest is not its content's")
    # What is signed: the signed attributes encoded as a SET (RFC 5652 5.4).
    message = attrs.untag().dump(force=True)
    _verify(cert, info["signature"].native, message, _HASHES[digest_name], info["signature_algorithm"])


def _verify(
    cert: x509.Certificate, sig: bytes, message: bytes, hash_: hashes.HashAlgorithm, alg: algos.SignedDigestAlgorithm
) -> None:
    key = cert.public_key()
    try:
        if isinstance(key, rsa.RSAPublicKey):
            pad: padding.AsymmetricPadding = padding.PKCS1v15()
            if alg.signature_algo == "rsassa_pss":
                pad = padding.PSS(mgf=padding.MGF1(hash_), salt_length=padding.PSS.AUTO)
            key.verify(sig, message, pad, hash_)
        elif isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(sig, message, ec.ECDSA(hash_))
        else:
            raise TimestampError("unsupported TSA key type")
    except InvalidSignature:
        raise TimestampError("the token's signature does not verify with its TSA certificate") from None


def check_chain(reply: bytes, ca_pem: bytes, when: datetime) -> str:
    """That the token's TSA certificate chains to a certificate of ``ca_pem`` (the roots trusted;
    intermediates come from the token or the same file), each link signed by its issuer, every
    issuer a CA allowed to sign certificates, and every certificate of the chain, the root too,
    valid at ``when`` (the token's genTime). The root's subject. Revocation is not checked."""
    anchors = x509.load_pem_x509_certificates(ca_pem)
    try:
        signed = tsp.TimeStampResp.load(reply)["time_stamp_token"]["content"]
        pool = [*_carried(signed), *anchors]
        cert = signer_certificate(reply)
    except TimestampError:
        raise
    except Exception as exc:  # noqa: BLE001 - the parsers' errors on hostile DER are many kinds
        raise TimestampError(f"malformed certificate in the time-stamp: {type(exc).__name__} {exc}") from None
    for _depth in range(8):
        _valid_at(cert, when)
        if cert in anchors:
            return cert.subject.rfc4514_string()
        issuer = next((c for c in pool if c != cert and _issued(cert, c)), None)
        if issuer is None:
            raise TimestampError(f"the TSA certificate does not chain to the given CA: no issuer of {_name(cert)}")
        _may_issue(issuer)
        cert = issuer
    raise TimestampError("the TSA certificate chain is longer than 8")


def _carried(signed: cms.SignedData) -> list[x509.Certificate]:
    """The token's certificates that parse (one that does not cannot link a chain; the signer's is
    parsed on its own)."""
    out = []
    for choice in signed["certificates"] or []:
        try:
            out.append(x509.load_der_x509_certificate(choice.chosen.dump()))
        except Exception:  # noqa: BLE001, S112 - unparsable: not a link
            continue
    return out


def _name(cert: x509.Certificate) -> str:
    return cert.subject.rfc4514_string()


def _issued(cert: x509.Certificate, issuer: x509.Certificate) -> bool:
    try:
        cert.verify_directly_issued_by(issuer)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _valid_at(cert: x509.Certificate, when: datetime) -> None:
    if not cert.not_valid_before_utc <= when <= cert.not_valid_after_utc:
        raise TimestampError(
            f"{_name(cert)} was not valid at the time-stamp's time {when.isoformat()} "
            f"(valid {cert.not_valid_before_utc.isoformat()} to {cert.not_valid_after_utc.isoformat()})"
        )


def _may_issue(cert: x509.Certificate) -> None:
    try:
        constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints).value
    except x509.ExtensionNotFound:
        constraints = None
    if constraints is None or not constraints.ca:
        raise TimestampError(f"{_name(cert)} signed a certificate of the chain but is not a CA")
    try:
        usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    except x509.ExtensionNotFound:
        return
    if not usage.key_cert_sign:
        raise TimestampError(f"{_name(cert)} signed a certificate of the chain but may not sign certificates")
