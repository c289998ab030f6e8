"""The API key reads and writes of authentication, apart from ``ApiKeyRepository`` (which
inherits them): they run before there is a caller's context, and authentication is imported by
the context itself, so they cannot depend on it."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from sqlalchemy import or_, select, update
from sqlmodel import col

from evidence_gateway.models import ApiKey
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import ApiKeyRecord


class ApiKeyLookup:
    @staticmethod
    async def live_by_hash(db: Database, key_hash: str) -> ApiKeyRecord | None:
        """The unrevoked key with this hash, of whichever organisation: not org-scoped, since the
        key is how a request's organisation is found in the first place."""
        live = col(ApiKey.revoked_at).is_(None)
        stmt = select(*table_of(ApiKey).c).where(col(ApiKey.key_hash) == key_hash, live)
        async with db.read() as session:
            row = (await session.execute(stmt)).first()
        return None if row is None else ApiKeyRecord._make(row)

    @staticmethod
    async def touch(db: Database, key_id: uuid.UUID, now: datetime, resolution: timedelta) -> None:
        """Record the key's use unless it was recorded within ``resolution`` (not org-scoped:
        written while authenticating, before there is a caller)."""
        # On the table, not the entity: an ORM update would configure every mapper on the first
        # authenticated request, for nothing a key check reads.
        keys = table_of(ApiKey)
        stmt = (
            update(keys)
            .where(keys.c.id == key_id, or_(keys.c.last_used_at.is_(None), keys.c.last_used_at < now - resolution))
            .values(last_used_at=now)
        )
        async with db.write() as session:
            await session.execute(stmt)
