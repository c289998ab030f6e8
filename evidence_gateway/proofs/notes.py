"""Ed25519 keys, C2SP signed notes and tlog checkpoints.

Everything here runs offline: the server signs with it and ``evidence-gateway verify`` checks
with it, with no database. Formats: https://c2sp.org/signed-note (a text, a blank line, one
``— <name> <base64(key hash || signature)>`` line per signature) and
https://c2sp.org/tlog-checkpoint (origin, tree size, base64 root hash). PyNaCl (libsodium) does
the Ed25519 arithmetic: a serving process signs a checkpoint every few seconds once it takes
writes, and libsodium's binding adds about 2 MB of resident memory where ``cryptography``'s adds
about 7. ``cryptography`` still reads a PEM key (``from_text``), once, when one is supplied.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey as _Ed25519Private
from nacl.signing import VerifyKey as _Ed25519Public

ED25519 = b"\x01"  # the signed-note signature type of Ed25519
_DASH = "\u2014 "
_NAME = re.compile(r"^[^\s+]+$")


class NoteError(ValueError):
    """A note or checkpoint that is malformed or carries no valid signature of a known key."""


def b64decode(text: str) -> bytes:
    """Base64 that only its one canonical spelling decodes: otherwise a changed last character
    (bits past the data) or padding would decode to the same bytes and go unnoticed."""
    raw = base64.b64decode(text, validate=True)
    if base64.b64encode(raw).decode() != text:
        raise ValueError("not canonical base64")
    return raw


def key_hash(name: str, public: bytes) -> bytes:
    """The 4-byte key id of signed-note: SHA-256(name || "\\n" || 0x01 || public key)[:4]."""
    return hashlib.sha256(name.encode() + b"\n" + ED25519 + public).digest()[:4]


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A verifier key: ``name`` (the signer's), the raw 32-byte Ed25519 key."""

    name: str
    public: bytes

    @property
    def key_id(self) -> str:
        return key_hash(self.name, self.public).hex()

    @property
    def vkey(self) -> str:
        """The signed-note verifier key text: ``<name>+<hex key hash>+<base64(0x01 || key)>``."""
        return f"{self.name}+{self.key_id}+{base64.b64encode(ED25519 + self.public).decode()}"

    def verify(self, signature: bytes, message: bytes) -> bool:
        if len(signature) != 64:
            return False
        try:
            _Ed25519Public(self.public).verify(message, signature)
        except (BadSignatureError, ValueError, TypeError):
            return False
        return True

    @classmethod
    def from_vkey(cls, vkey: str) -> PublicKey:
        try:
            name, hash_hex, key_b64 = vkey.strip().split("+", 2)
            raw = b64decode(key_b64)
        except ValueError:
            raise NoteError("not a verifier key") from None
        if raw[:1] != ED25519 or len(raw) != 33 or not _NAME.match(name):
            raise NoteError("not an Ed25519 verifier key")
        key = cls(name, raw[1:])
        if key.key_id != hash_hex:
            raise NoteError("the verifier key's hash does not match its key")
        return key


class SigningKey:
    """A private key with its signer name. Never rendered: ``repr`` shows the key id only."""

    __slots__ = ("_private", "public_key")

    def __init__(self, name: str, private: _Ed25519Private) -> None:
        if not _NAME.match(name):
            raise ValueError("a key name has no spaces and no '+'")
        self._private = private
        self.public_key = PublicKey(name, bytes(private.verify_key))

    def __repr__(self) -> str:
        return f"SigningKey({self.public_key.name!r}, key_id={self.key_id!r})"

    @property
    def key_id(self) -> str:
        return self.public_key.key_id

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message).signature

    def seed(self) -> bytes:
        """The raw 32-byte private key, for storing a generated key only."""
        return bytes(self._private)

    @classmethod
    def generate(cls, name: str) -> SigningKey:
        return cls(name, _Ed25519Private.generate())

    @classmethod
    def from_seed(cls, name: str, seed: bytes) -> SigningKey:
        if len(seed) != 32:
            raise ValueError("a raw Ed25519 key is 32 bytes")
        return cls(name, _Ed25519Private(seed))

    @classmethod
    def from_text(cls, name: str, text: str) -> SigningKey:
        """A PEM (PKCS#8, as ``openssl genpkey -algorithm ed25519`` writes) or a base64 raw key."""
        stripped = text.strip()
        if stripped.startswith("-----BEGIN"):
            return cls.from_seed(name, _pem_seed(stripped))
        raw = base64.b64decode(stripped, validate=True)
        if len(raw) != 32:
            raise ValueError("a raw Ed25519 key is 32 bytes")
        return cls.from_seed(name, raw)


def _pem_seed(pem: str) -> bytes:
    """The raw 32 bytes of a PKCS#8 PEM Ed25519 key: ``cryptography`` parses PEM (loaded here only)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = serialization.load_pem_private_key(pem.encode(), password=None)
    if not isinstance(private, Ed25519PrivateKey):
        raise ValueError("the signing key is not an Ed25519 key")
    return private.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )


def sign_note(text: str, key: SigningKey) -> str:
    if not text.endswith("\n"):
        raise ValueError("a note's text ends with a newline")
    signature = base64.b64encode(key_hash(key.public_key.name, key.public_key.public) + key.sign(text.encode()))
    return f"{text}\n{_DASH}{key.public_key.name} {signature.decode()}\n"


def open_note(note: str, keys: list[PublicKey]) -> tuple[str, PublicKey]:
    """The note's text and the known key that signed it; NoteError unless one valid signature of
    a key in ``keys`` is present (signatures of unknown keys are ignored, as the spec asks)."""
    text, sep, signatures = note.rpartition("\n\n")
    if not sep or not signatures.endswith("\n"):
        raise NoteError("not a signed note")
    text += "\n"
    by_id = {(k.name, key_hash(k.name, k.public)): k for k in keys}
    for line in signatures[:-1].split("\n"):
        if not line.startswith(_DASH):
            raise NoteError("malformed signature line")
        name, _, blob = line[len(_DASH) :].partition(" ")
        try:
            raw = b64decode(blob)
        except ValueError:
            raise NoteError("malformed signature") from None
        key = by_id.get((name, raw[:4]))
        if key is not None and len(raw) == 68 and key.verify(raw[4:], text.encode()):
            return text, key
    raise NoteError("no valid signature by a known key")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes

    def text(self) -> str:
        return f"{self.origin}\n{self.size}\n{base64.b64encode(self.root).decode()}\n"

    @classmethod
    def parse(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or not lines[0]:
            raise NoteError("not a checkpoint")
        size = lines[1]
        if not size.isdigit() or (size.startswith("0") and size != "0"):
            raise NoteError("malformed tree size")
        try:
            root = b64decode(lines[2])
        except ValueError:
            raise NoteError("malformed root hash") from None
        if len(root) != 32:
            raise NoteError("malformed root hash")
        return cls(lines[0], int(size), root)


def verify_checkpoint(note: str, keys: list[PublicKey]) -> tuple[Checkpoint, PublicKey]:
    text, key = open_note(note, keys)
    return Checkpoint.parse(text), key
