"""API keys: generation, hashing, and resolving a Bearer header to a Principal."""

from __future__ import annotations

import hashlib
import re
import secrets
import uuid
from dataclasses import dataclass

from sqlalchemy import select
from sqlmodel import col

from evidence_gateway.db import Database
from evidence_gateway.errors import Unauthenticated
from evidence_gateway.models import ApiKey

KEY_PREFIX = "evk_"
_KEY_RE = re.compile(r"^evk_[0-9a-f]{48}$")


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: built once per request, passed explicitly to every resolver."""

    org_id: uuid.UUID
    key_id: uuid.UUID


def generate_key() -> str:
    return KEY_PREFIX + secrets.token_hex(24)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip() or None


async def authenticate(db: Database, authorization: str | None) -> Principal:
    """One indexed lookup; malformed keys are refused before touching the database."""
    token = bearer_token(authorization)
    if token is None or not _KEY_RE.fullmatch(token):
        raise Unauthenticated()
    stmt = select(col(ApiKey.id), col(ApiKey.org_id)).where(
        ApiKey.key_hash == hash_key(token),
        col(ApiKey.revoked_at).is_(None),
    )
    async with db.read() as session:
        row = (await session.execute(stmt)).first()
    if row is None:
        raise Unauthenticated()
    return Principal(org_id=row.org_id, key_id=row.id)
