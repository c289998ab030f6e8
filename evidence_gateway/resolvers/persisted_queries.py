"""Persisted GraphQL documents: looked up by SHA-256, registered once (every node sees them)."""

from __future__ import annotations

import hashlib
from collections import OrderedDict

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlmodel import col

from evidence_gateway.db import Database
from evidence_gateway.models import PersistedQuery


def sha256_of(document: str) -> str:
    return hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()


class PersistedQueries:
    """The table, with this node's memory of the documents it served: a document never changes
    under its hash, so remembering it is always right (bounded, least recently used first out)."""

    CACHE_SIZE = 1_000

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: OrderedDict[str, str] = OrderedDict()

    def _remember(self, sha256: str, document: str) -> None:
        self._cache[sha256] = document
        self._cache.move_to_end(sha256)
        while len(self._cache) > self.CACHE_SIZE:
            self._cache.popitem(last=False)

    async def lookup(self, sha256: str) -> str | None:
        """The document with this hash, if any node registered it."""
        if (cached := self._cache.get(sha256)) is not None:
            return cached
        statement = select(col(PersistedQuery.document)).where(col(PersistedQuery.sha256) == sha256)
        async with self.db.read() as session:
            document = (await session.execute(statement)).scalar_one_or_none()
        if document is not None:
            self._remember(sha256, document)
        return document

    async def register(self, sha256: str, document: str) -> None:
        """Store a document under its hash; a concurrent registration of it is the same row."""
        if sha256 in self._cache:
            return
        try:
            async with self.db.write() as session:
                if await session.get(PersistedQuery, sha256) is None:
                    session.add(PersistedQuery(sha256=sha256, document=document))
        except IntegrityError:
            pass  # another request (or node) stored it between the check and the insert
        self._remember(sha256, document)
