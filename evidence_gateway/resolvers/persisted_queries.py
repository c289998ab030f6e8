"""Persisted GraphQL documents: looked up by SHA-256, registered once (every node sees them).

Bounded in every direction, since any key may register documents:

- size: a document over ``EVIDENCE_GRAPHQL_PERSISTED_QUERY_MAX_BYTES`` is refused before it
  runs (schema/persisted.py), and never stored;
- count: an organisation holds at most ``EVIDENCE_GRAPHQL_PERSISTED_QUERIES_PER_ORG`` documents
  it registered; registering one more deletes its least recently used (APQ clients send a
  document again when its hash is unknown, so a forgotten document costs one round trip);
- lifetime: a document unused for ``EVIDENCE_GRAPHQL_PERSISTED_QUERY_UNUSED_DAYS`` is no longer
  served, and deleted by the next registration's purge (at most one purge an hour per node);
  its last use is written at most once an hour per node;
- memory: each node keeps the documents it served within ``EVIDENCE_GRAPHQL_PERSISTED_QUERY_CACHE_BYTES``.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.exc import IntegrityError

from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.persisted_queries import PersistedQueryRepository

# How stale a document's recorded last use may be before a lookup writes it again, and how often
# a node purges unused documents: the lifetime is counted in days, one write an hour is plenty.
TOUCH_INTERVAL = timedelta(hours=1)
PURGE_INTERVAL = timedelta(hours=1)


def sha256_of(document: str) -> str:
    return hashlib.sha256(document.encode("utf-8", "surrogatepass")).hexdigest()


def size_of(document: str) -> int:
    return len(document.encode("utf-8", "surrogatepass"))


@dataclass
class _Held:
    document: str
    size: int
    used: datetime  # the last use this node wrote (or read) in the table


class PersistedQueries:
    """The table, with this node's memory of the documents it served: a document never changes
    under its hash, so remembering it is always right (bounded in bytes, least recently used out)."""

    def __init__(self, db: Database, settings: Settings | None = None) -> None:
        settings = settings or Settings()
        self.db = db
        self.repository = PersistedQueryRepository(db)
        self.max_bytes = settings.graphql_persisted_query_max_bytes
        self.per_org = settings.graphql_persisted_queries_per_org
        self.cache_bytes = settings.graphql_persisted_query_cache_bytes
        self.unused_for = timedelta(days=settings.graphql_persisted_query_unused_days)
        self._cache: OrderedDict[str, _Held] = OrderedDict()
        self._cached_bytes = 0
        self._purged_at: datetime | None = None

    @property
    def cached_bytes(self) -> int:
        return self._cached_bytes

    def _remember(self, sha256: str, document: str, used: datetime) -> None:
        size = size_of(document)
        if size > self.cache_bytes:
            return
        held = self._cache.pop(sha256, None)
        if held is not None:
            self._cached_bytes -= held.size
        self._cache[sha256] = _Held(document, size, used)
        self._cached_bytes += size
        while self._cached_bytes > self.cache_bytes:
            _, evicted = self._cache.popitem(last=False)
            self._cached_bytes -= evicted.size

    async def lookup(self, sha256: str) -> str | None:
        """The document with this hash, if it is registered and was used within the lifetime."""
        now = utcnow()
        held = self._cache.get(sha256)
        if held is not None:
            self._cache.move_to_end(sha256)
            if now - held.used >= TOUCH_INTERVAL:
                if not await self._touch(sha256, now):
                    self._forget(sha256)  # purged meanwhile (unused on every node for days)
                    return None
                held.used = now
            return held.document
        found = await self.repository.document_of(sha256)
        if found is None:
            return None
        document, used = found
        if now - used >= self.unused_for:
            return None  # expired: the client registers it again
        if now - used >= TOUCH_INTERVAL:
            await self._touch(sha256, now)
            used = now
        self._remember(sha256, document, used)
        return document

    def _forget(self, sha256: str) -> None:
        held = self._cache.pop(sha256, None)
        if held is not None:
            self._cached_bytes -= held.size

    async def _touch(self, sha256: str, now: datetime) -> bool:
        """Record a use; False when the row is gone."""
        return await self.repository.touch(sha256, now)

    async def register(self, sha256: str, document: str, org_id: uuid.UUID) -> None:
        """Store a document under its hash for ``org_id``, within its count; a concurrent
        registration of it is the same row. Over the size cap: not stored (refused earlier)."""
        if sha256 in self._cache or size_of(document) > self.max_bytes:
            return
        now = utcnow()
        await self._purge_if_due(now)
        try:
            async with self.db.write() as session:
                existing = await self.repository.load(session, sha256)
                if existing is not None:
                    existing.last_used_at = now  # registered again (say, after it expired): in use
                else:
                    for doomed in await self.repository.make_room(session, org_id, self.per_org):
                        self._forget(doomed)
                    self.repository.add(session, sha256, document, org_id, now)
        except IntegrityError:
            pass  # another request (or node) stored it between the check and the insert
        self._remember(sha256, document, now)

    async def _purge_if_due(self, now: datetime) -> None:
        if self._purged_at is not None and now - self._purged_at < PURGE_INTERVAL:
            return
        self._purged_at = now
        await self.purge(now)

    async def purge(self, now: datetime | None = None) -> int:
        """Delete the documents unused for the lifetime; how many went."""
        cutoff = (now or utcnow()) - self.unused_for
        gone = await self.repository.purge(cutoff)
        for sha256 in [s for s, held in self._cache.items() if held.used < cutoff]:
            self._forget(sha256)
        return gone
