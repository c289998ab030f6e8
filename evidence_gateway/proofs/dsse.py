"""DSSE envelopes over in-toto Statements (https://github.com/secure-systems-lab/dsse,
https://github.com/in-toto/attestation): the spec's few lines rather than a library, so the
offline verifier needs only PyNaCl (Ed25519)."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from evidence_gateway.proofs.notes import PublicKey, SigningKey, b64decode

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"


class EnvelopeError(ValueError):
    """An envelope that is malformed or not signed by a known key."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what is signed."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def statement(subjects: Mapping[str, str], predicate_type: str, predicate: Mapping[str, Any]) -> dict[str, Any]:
    """An in-toto Statement v1; ``subjects`` maps each file name to its hex SHA-256."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": digest}} for name, digest in subjects.items()],
        "predicateType": predicate_type,
        "predicate": dict(predicate),
    }


def seal(content: Mapping[str, Any], key: SigningKey) -> dict[str, Any]:
    payload = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
    return {
        "payloadType": PAYLOAD_TYPE,
        "payload": base64.b64encode(payload).decode(),
        "signatures": [{"keyid": key.key_id, "sig": base64.b64encode(key.sign(pae(PAYLOAD_TYPE, payload))).decode()}],
    }


def open_envelope(envelope: Any, keys: list[PublicKey]) -> tuple[dict[str, Any], PublicKey]:
    """The signed statement and the key whose signature holds; EnvelopeError otherwise."""
    if not isinstance(envelope, dict) or envelope.get("payloadType") != PAYLOAD_TYPE:
        raise EnvelopeError("not an in-toto DSSE envelope")
    try:
        payload = b64decode(str(envelope["payload"]))
        signatures = list(envelope["signatures"])
    except (KeyError, TypeError, ValueError):
        raise EnvelopeError("malformed envelope") from None
    message = pae(PAYLOAD_TYPE, payload)
    by_id = {k.key_id: k for k in keys}
    for signature in signatures:
        key = by_id.get(str(signature.get("keyid")) if isinstance(signature, dict) else "")
        try:
            sig = b64decode(str(signature["sig"]))
        except (KeyError, TypeError, ValueError):
            continue
        if key is not None and key.verify(sig, message):
            try:
                content = json.loads(payload)
            except ValueError:
                raise EnvelopeError("the signed payload is not JSON") from None
            if not isinstance(content, dict) or content.get("_type") != STATEMENT_TYPE:
                raise EnvelopeError("the signed payload is not an in-toto Statement v1")
            return content, key
    raise EnvelopeError("no valid signature by a known key")
