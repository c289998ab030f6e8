"""The instance's Ed25519 signing key and every public key it ever signed with.

A key supplied from outside (EVIDENCE_SIGNING_KEY_FILE / EVIDENCE_SIGNING_KEY) wins and its
private half never reaches the database; only its public half is recorded, so what it signed
keeps verifying after the operator replaces it. Without one, a key is generated once and kept in
the database (like the download-signing secret, instance_secrets.py): every worker and node
signs with the same key. Rotation generates a new key and retires the old one, whose public
half stays published at /.well-known/evidence-keys.
"""

from __future__ import annotations

import base64
import logging
import re
import time
import weakref
from pathlib import Path
from urllib.parse import urlsplit

from evidence_gateway.proofs.notes import PublicKey, SigningKey
from evidence_gateway.settings import Settings
from evidence_gateway.store import tlog as store
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import EvidenceKeyRecord

log = logging.getLogger(__name__)

# A node re-reads which key signs this often (another node may have rotated it); signing with a
# key rotated away moments ago is harmless: its public half stays published.
_CACHE_SECONDS = 30.0
_cache: weakref.WeakKeyDictionary[Database, tuple[float, SigningKey]] = weakref.WeakKeyDictionary()


def signer_name(settings: Settings) -> str:
    """EVIDENCE_LOG_NAME, else the public base URL's host (a signed-note name has no spaces or '+')."""
    name = settings.log_name or urlsplit(settings.public_base_url).netloc or "evidence-gateway"
    return re.sub(r"[\s+]", "-", name)


def origin(settings: Settings, org_id: object) -> str:
    """The log origin of one organisation (the checkpoint's first line)."""
    return f"{signer_name(settings)}/log/{org_id}"


class SigningKeyError(ValueError):
    """A signing key supplied from outside that cannot be used; ``str()`` is one line for an
    operator, naming the setting and never the key."""


def check_supplied(settings: Settings) -> None:
    """Start-up: refuse a supplied key that cannot sign, before anything is served, rather than
    answer 500 the first time a checkpoint or a seal is signed."""
    _supplied(settings)


def _supplied(settings: Settings) -> SigningKey | None:
    text = settings.signing_key.get_secret_value()
    source = "EVIDENCE_SIGNING_KEY"
    if settings.signing_key_file:
        source = "EVIDENCE_SIGNING_KEY_FILE"
        try:
            text = Path(settings.signing_key_file).read_text()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not text"
            raise SigningKeyError(f"{source}: cannot read {settings.signing_key_file}: {reason}") from None
    if not text.strip():
        return None
    from cryptography.exceptions import UnsupportedAlgorithm  # PEM parsing's own; loaded with a supplied key only

    try:
        return SigningKey.from_text(signer_name(settings), text)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        # The parser's own message is left out: it may quote what it could not read.
        raise SigningKeyError(
            f"{source}: not an Ed25519 private key (a PEM from `openssl genpkey -algorithm ed25519`, "
            "or the base64 of its 32 raw bytes)"
        ) from None


async def signing_key(db: Database, settings: Settings) -> SigningKey:
    """The key that signs now (cached per process for a short while)."""
    cached = _cache.get(db)
    if cached is not None and cached[0] > time.monotonic():
        return cached[1]
    key = await _current(db, settings)
    _cache[db] = (time.monotonic() + _CACHE_SECONDS, key)
    return key


async def _current(db: Database, settings: Settings) -> SigningKey:
    supplied = _supplied(settings)
    if supplied is not None:
        await store.record_key(db, supplied.key_id, supplied.public_key.name, supplied.public_key.public, None)
        return supplied
    for row in reversed(await store.keys(db)):
        if row.private_seed and row.retired_at is None:
            return SigningKey.from_seed(row.name, base64.b64decode(row.private_seed))
    return await rotate(db, settings)


async def rotate(db: Database, settings: Settings) -> SigningKey:
    """A new generated key signs from now on; the others stop signing but keep verifying.

    Concurrent first starts may each generate one: each is recorded, the newest signs, and
    every one of them verifies, so nothing signed in the race is lost."""
    key = SigningKey.generate(signer_name(settings))
    await store.record_key(
        db, key.key_id, key.public_key.name, key.public_key.public, base64.b64encode(key.seed()).decode()
    )
    await store.retire_keys(db, key.key_id)
    _cache.pop(db, None)
    log.warning("generated evidence signing key %s (EVIDENCE_SIGNING_KEY_FILE not set)", key.key_id)
    return key


def public_of(row: EvidenceKeyRecord) -> PublicKey:
    return PublicKey(row.name, bytes(row.public_key))


async def verifier_keys(db: Database) -> list[EvidenceKeyRecord]:
    """Every key that ever signed, oldest first."""
    return await store.keys(db)
