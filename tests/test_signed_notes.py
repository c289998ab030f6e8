"""Signed notes, checkpoints and DSSE envelopes: what signs verifies, and any change is refused."""

from __future__ import annotations

import base64
import json

import pytest

from evidence_gateway.proofs import dsse
from evidence_gateway.proofs.notes import Checkpoint, NoteError, PublicKey, SigningKey, sign_note, verify_checkpoint


def test_a_checkpoint_round_trips_and_every_changed_byte_is_refused() -> None:
    key = SigningKey.generate("evidence.example")
    other = SigningKey.generate("evidence.example")
    cp = Checkpoint("evidence.example/log/1", 42, bytes(range(32)))
    note = sign_note(cp.text(), key)
    assert note.startswith("evidence.example/log/1\n42\n") and "\n\n\u2014 evidence.example " in note
    assert verify_checkpoint(note, [other.public_key, key.public_key]) == (cp, key.public_key)
    with pytest.raises(NoteError):
        verify_checkpoint(note, [other.public_key])
    raw = note.encode()
    for i in range(len(raw)):
        changed = bytearray(raw)
        changed[i] ^= 0x01
        try:
            text = changed.decode()
        except UnicodeDecodeError:
            continue
        with pytest.raises(NoteError):
            verify_checkpoint(text, [key.public_key])


def test_verifier_keys_parse_and_keys_load_from_pem() -> None:
    key = SigningKey.generate("evidence.example")
    assert PublicKey.from_vkey(key.public_key.vkey) == key.public_key
    loaded = SigningKey.from_text("evidence.example", base64.b64encode(key.seed()).decode())
    assert loaded.key_id == key.key_id
    assert "seed" not in repr(key) and key.key_id in repr(key)


def test_dsse_envelopes_verify_and_refuse_changes() -> None:
    key = SigningKey.generate("evidence.example")
    statement = dsse.statement({"a.json": "00" * 32}, "https://example.com/p/v1", {"run": "r"})
    envelope = dsse.seal(statement, key)
    assert dsse.open_envelope(envelope, [key.public_key])[0] == statement
    payload = base64.b64decode(envelope["payload"])
    assert dsse.pae(dsse.PAYLOAD_TYPE, payload).startswith(b"DSSEv1 28 application/vnd.in-toto+json ")
    for i in range(len(payload)):
        changed = bytearray(payload)
        changed[i] ^= 0x20
        bad = {**envelope, "payload": base64.b64encode(bytes(changed)).decode()}
        with pytest.raises(dsse.EnvelopeError):
            dsse.open_envelope(bad, [key.public_key])
    with pytest.raises(dsse.EnvelopeError):
        dsse.open_envelope(json.loads(json.dumps(envelope)), [SigningKey.generate("x").public_key])
