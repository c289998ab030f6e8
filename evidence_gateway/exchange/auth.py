"""PACT §6.3 access tokens: client credentials, RS256 JWTs, the JWKS that verifies them.

RS256 because it is what PACT's conformance tooling and the usual OAuth2 client libraries expect
first (the spec only asks for RFC 6749 client credentials; the examples show ``eyJhbGciOiJSUzI…``).
The private key is the installation's, generated once and kept in the database like its other
secrets, so every node and worker signs and verifies with the same key. A token names its
recipient; each request checks the recipient is still unrevoked, so revoking credentials ends
the tokens already issued too.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories import sharing as store

# RSA (cryptography, ~7 MB resident) loads with the first token issued or checked, not with the server.
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric import rsa

CLIENT_ID_PREFIX = "evci_"
CLIENT_SECRET_PREFIX = "evcs_"
_CLIENT_ID = re.compile(r"^evci_[0-9a-f]{24}$")
_CLIENT_SECRET = re.compile(r"^evcs_[0-9a-f]{48}$")
KEY_NAME = "pact_token_rs256"
ALGORITHM = "RS256"
# A JWT is three base64url parts; anything longer than this is not one of ours.
_MAX_TOKEN = 4096


def new_client_id() -> str:
    return CLIENT_ID_PREFIX + secrets.token_hex(12)


def new_client_secret() -> str:
    return CLIENT_SECRET_PREFIX + secrets.token_hex(24)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def well_formed_client(client_id: str, secret: str) -> bool:
    """Refused before any database work when not the shape we hand out."""
    return bool(_CLIENT_ID.fullmatch(client_id) and _CLIENT_SECRET.fullmatch(secret))


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret).encode(), stored_hash.encode())


class TokenInvalid(Exception):
    """Not a token this host signed (or not a token at all)."""


class TokenExpired(Exception):
    """A token this host signed, past its expiry."""


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, binascii.Error):
        raise TokenInvalid() from None


def _kid_of(public: rsa.RSAPublicKey) -> str:
    """The key's RFC 7638 thumbprint: the same key has the same id on every node."""
    numbers = public.public_numbers()
    jwk = {"e": _b64(_int_bytes(numbers.e)), "kty": "RSA", "n": _b64(_int_bytes(numbers.n))}
    canonical = json.dumps(jwk, separators=(",", ":"), sort_keys=True).encode()
    return _b64(hashlib.sha256(canonical).digest())


def _int_bytes(value: int) -> bytes:
    return value.to_bytes((value.bit_length() + 7) // 8, "big")


@dataclass(frozen=True, slots=True)
class Claims:
    """What a verified token says: whose recipient, which organisation's, until when."""

    recipient_id: uuid.UUID
    org_id: uuid.UUID
    client_id: str
    expires_at: int


@dataclass
class TokenKeys:
    """The signing key of this process, loaded (or made) on first use.

    ``clock`` is the token clock (tests pass their own to see a token expire without waiting).
    """

    db: Database
    clock: Callable[[], float] = time.time
    _key: rsa.RSAPrivateKey | None = None
    _kid: str = ""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def _load(self) -> tuple[rsa.RSAPrivateKey, str]:
        if self._key is not None:
            return self._key, self._kid
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        async with self._lock:
            if self._key is None:
                stored = await store.stored_signing_key(self.db, KEY_NAME)
                if stored is None:
                    # RSA generation costs tens of milliseconds: off the event loop.
                    made = await asyncio.to_thread(rsa.generate_private_key, public_exponent=65537, key_size=2048)
                    pem = made.private_bytes(
                        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
                    ).decode()
                    stored = await store.signing_key(self.db, KEY_NAME, _kid_of(made.public_key()), pem)
                key = serialization.load_pem_private_key(stored[1].encode(), password=None)
                if not isinstance(key, rsa.RSAPrivateKey):
                    raise RuntimeError("the stored exchange signing key is not an RSA key")
                self._key, self._kid = key, stored[0]
        assert self._key is not None
        return self._key, self._kid

    async def issue(self, *, issuer: str, recipient_id: uuid.UUID, org_id: uuid.UUID, client_id: str, ttl: int) -> str:
        """A signed access token for this recipient, valid ``ttl`` seconds."""
        key, kid = await self._load()
        now = int(self.clock())
        header = {"alg": ALGORITHM, "typ": "JWT", "kid": kid}
        payload = {
            "iss": issuer,
            "sub": client_id,
            "aud": issuer,
            "iat": now,
            "nbf": now,
            "exp": now + ttl,
            "jti": uuid.uuid4().hex,
            "rid": str(recipient_id),
            "org": str(org_id),
        }
        signing_input = f"{_b64(_json(header))}.{_b64(_json(payload))}".encode("ascii")
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        signature = key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
        return f"{signing_input.decode('ascii')}.{_b64(signature)}"

    async def verify(self, token: str, *, issuer: str) -> Claims:
        """The token's claims; TokenInvalid unless this host signed it for this issuer, TokenExpired
        once it is past ``exp`` (checked after the signature: only our own tokens expire)."""
        if len(token) > _MAX_TOKEN or token.count(".") != 2:
            raise TokenInvalid()
        key, kid = await self._load()
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        head_b64, body_b64, sig_b64 = token.split(".")
        header = _object(_unb64(head_b64))
        if header.get("alg") != ALGORITHM or header.get("kid") != kid:
            raise TokenInvalid()
        try:
            key.public_key().verify(
                _unb64(sig_b64), f"{head_b64}.{body_b64}".encode("ascii"), padding.PKCS1v15(), hashes.SHA256()
            )
        except (InvalidSignature, UnicodeEncodeError):
            raise TokenInvalid() from None
        claims = _object(_unb64(body_b64))
        if claims.get("iss") != issuer or not isinstance(claims.get("exp"), int):
            raise TokenInvalid()
        try:
            made = Claims(
                uuid.UUID(str(claims["rid"])), uuid.UUID(str(claims["org"])), str(claims["sub"]), claims["exp"]
            )
        except (KeyError, ValueError):
            raise TokenInvalid() from None
        if made.expires_at <= int(self.clock()):
            raise TokenExpired()
        return made

    async def jwks(self) -> dict[str, Any]:
        """The public half, as RFC 7517 JSON Web Key Set."""
        key, kid = await self._load()
        numbers = key.public_key().public_numbers()
        jwk = {
            "kty": "RSA",
            "use": "sig",
            "alg": ALGORITHM,
            "kid": kid,
            "n": _b64(_int_bytes(numbers.n)),
            "e": _b64(_int_bytes(numbers.e)),
        }
        return {"keys": [jwk]}


def _json(value: dict[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _object(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise TokenInvalid() from None
    if not isinstance(value, dict):
        raise TokenInvalid()
    return value
