"""Persisted GraphQL documents, keyed by their SHA-256.

Not a ``Repository`` of the caller's organisation: a document is program text, the same under
its hash for every organisation and node (what it returns is scoped by the caller's key), so it
is looked up, touched and purged by hash alone. Only counting and making room are an
organisation's, by the organisation that registered them.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core.scoping import of_org
from evidence_gateway.models import PersistedQuery
from evidence_gateway.store.db import Database

_SHA = col(PersistedQuery.sha256)
_USED = col(PersistedQuery.last_used_at)


class PersistedQueryRepository:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def document_of(self, sha256: str) -> tuple[str, datetime] | None:
        """The document under this hash and its recorded last use, or None."""
        statement = select(col(PersistedQuery.document), _USED).where(_SHA == sha256)
        async with self.db.read() as session:
            row = (await session.execute(statement)).one_or_none()
        return None if row is None else (str(row[0]), row[1])

    async def touch(self, sha256: str, now: datetime) -> bool:
        """Record a use; False when the row is gone."""
        async with self.db.write() as session:
            result = await session.execute(update(PersistedQuery).where(_SHA == sha256).values(last_used_at=now))
        return bool(getattr(result, "rowcount", 1))

    async def load(self, session: AsyncSession, sha256: str) -> PersistedQuery | None:
        """The entity, in a unit of work's session (registering a document again)."""
        return await session.get(PersistedQuery, sha256)

    def add(self, session: AsyncSession, sha256: str, document: str, org_id: uuid.UUID, now: datetime) -> None:
        session.add(PersistedQuery(sha256=sha256, document=document, org_id=org_id, last_used_at=now))

    async def make_room(self, session: AsyncSession, org_id: uuid.UUID, per_org: int) -> list[str]:
        """Delete the organisation's least recently used documents beyond ``per_org`` minus one;
        the hashes deleted (a node forgets them too)."""
        held = await session.scalar(
            select(func.count()).select_from(PersistedQuery).where(of_org(org_id, PersistedQuery))
        )
        excess = int(held or 0) - per_org + 1
        if excess <= 0:
            return []
        oldest = select(_SHA).where(of_org(org_id, PersistedQuery)).order_by(_USED, _SHA).limit(excess)
        doomed = list((await session.scalars(oldest)).all())
        await session.execute(delete(PersistedQuery).where(_SHA.in_(doomed)))
        return doomed

    async def purge(self, cutoff: datetime) -> int:
        """Delete the documents last used before ``cutoff``; how many went."""
        async with self.db.write() as session:
            result = await session.execute(delete(PersistedQuery).where(_USED < cutoff))
        return int(getattr(result, "rowcount", 0) or 0)
