"""Idempotency records (core/idempotency.py): every statement over the claimed keys.

Org-scoped: a repository is built for one organisation and every statement names it beside the
key, so one organisation's key never reaches another's record. ``purge`` alone is not: the
sweeper drops every organisation's expired answers at once.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.models import IdempotencyRecord
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database, rows_changed

_TABLE = table_of(IdempotencyRecord)


class IdempotencyRepository:
    def __init__(self, org_id: uuid.UUID) -> None:
        self.org_id = org_id

    def _where(self, stmt: Any, key: str) -> Any:
        return stmt.where(_TABLE.c.org_id == self.org_id, _TABLE.c.key == key)

    async def insert_first(self, db: Database, session: AsyncSession, values: dict[str, Any]) -> bool:
        """Store a new claim (``values`` name this organisation); whether it was the first."""
        stmt = db.insert_or_nothing(_TABLE).values(**{**values, "org_id": self.org_id}).returning(_TABLE.c.key)
        return (await session.execute(stmt)).first() is not None

    async def load(self, session: AsyncSession, key: str) -> IdempotencyRecord:
        """The key's record as stored now (not as the session may hold it)."""
        stmt = self._where(select(IdempotencyRecord), key).execution_options(populate_existing=True)
        record: IdempotencyRecord = (await session.execute(stmt)).scalar_one()
        return record

    async def set(self, session: AsyncSession, key: str, **values: Any) -> None:
        """Change the key's record: claimed afresh, re-locked, or completed with its answer."""
        await session.execute(self._where(update(IdempotencyRecord), key).values(**values))

    async def renew(self, session: AsyncSession, key: str, locked_until: datetime) -> None:
        """Extend the lock of a claim whose work still runs (nothing once it completed)."""
        stmt = self._where(update(IdempotencyRecord), key).where(_TABLE.c.completed.is_(False))
        await session.execute(stmt.values(locked_until=locked_until))

    async def release(self, session: AsyncSession, key: str) -> None:
        """Forget a claim whose work changed nothing (a completed one is kept)."""
        await session.execute(self._where(delete(IdempotencyRecord), key).where(_TABLE.c.completed.is_(False)))

    @staticmethod
    async def purge(session: AsyncSession, now: datetime) -> int:
        """Drop every organisation's answers older than their retention. Not org-scoped: the
        sweeper runs it for all at once, with no caller."""
        return rows_changed(await session.execute(delete(IdempotencyRecord).where(_TABLE.c.expires_at < now)))
