"""API keys: generation, hashing, scopes, and resolving a Bearer header to a Principal."""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from sqlalchemy.exc import SQLAlchemyError

from evidence_gateway.core.timeutil import as_aware, utcnow
from evidence_gateway.errors import Unauthenticated
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.key_lookup import ApiKeyLookup
from evidence_gateway.web.observability import access

log = logging.getLogger(__name__)

KEY_PREFIX = "evk_"
_KEY_RE = re.compile(r"^evk_[0-9a-f]{48}$")
# How often a key's last-used time is written: a write per request would put every read on
# the write path (and, on SQLite, behind its one writer).
LAST_USED_RESOLUTION = timedelta(minutes=1)


class Scope(StrEnum):
    """What a key may do. Each scope includes the ones before it: admin > write > read."""

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    def allows(self, needed: Scope) -> bool:
        order = list(Scope)
        return order.index(self) >= order.index(needed)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: built once per request, passed explicitly to every resolver."""

    org_id: uuid.UUID
    # None for work nobody's key asked for (the CLI, the sweeper).
    key_id: uuid.UUID | None
    # Work the system does itself (the CLI, the sweeper, queued work a key was allowed to
    # start) is not limited by a key's scope.
    scope: Scope = Scope.ADMIN
    # When the key stops working (None: never); a long-lived WebSocket is closed then.
    expires_at: datetime | None = None


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


@dataclass
class KeyCache:
    """Recently verified keys, per process, for a few seconds; and when this process last
    recorded each key's use.

    The key lookup is a whole session and statement per request (PERFORMANCE-NOTES: ~600 µs
    through the async adapter); most traffic repeats one key. The price: a revoked key keeps
    working on a node for at most ``ttl`` seconds (an expiring key never outlives its expiry).
    Only valid keys are cached, so guessing keys cannot fill it.
    """

    ttl: float
    # The cache's clock (tests pass their own, so a slow machine cannot stretch a window).
    clock: Callable[[], float] = time.monotonic
    _entries: dict[str, tuple[Principal, float]] = field(default_factory=dict)
    _touched: dict[uuid.UUID, float] = field(default_factory=dict)

    MAX_ENTRIES = 10_000

    def get(self, key_hash: str) -> Principal | None:
        hit = self._entries.get(key_hash)
        if hit is None:
            return None
        if hit[1] < self.clock():
            del self._entries[key_hash]
            return None
        return hit[0]

    def put(self, key_hash: str, principal: Principal, expires_at: datetime | None = None) -> None:
        ttl = self.ttl
        if expires_at is not None:
            ttl = min(ttl, (expires_at - utcnow()).total_seconds())
        if ttl <= 0:
            return
        if len(self._entries) >= self.MAX_ENTRIES:
            self._entries.clear()
        self._entries[key_hash] = (principal, self.clock() + ttl)

    def due_for_touch(self, key_id: uuid.UUID) -> bool:
        """True at most once per ``LAST_USED_RESOLUTION`` per key in this process."""
        now = self.clock()
        last = self._touched.get(key_id)
        if last is not None and now - last < LAST_USED_RESOLUTION.total_seconds():
            return False
        if len(self._touched) >= self.MAX_ENTRIES:
            self._touched.clear()
        self._touched[key_id] = now
        return True


async def authenticate(db: Database, authorization: str | None, cache: KeyCache | None = None) -> Principal:
    """One indexed lookup; malformed keys are refused before touching the database. Unknown,
    revoked and expired keys are refused alike, so a caller learns nothing from the answer."""
    token = bearer_token(authorization)
    if token is None or not _KEY_RE.fullmatch(token):
        raise Unauthenticated()
    key_hash = hash_key(token)
    cache = cache if cache is not None else KeyCache(0)
    principal, expires_at, cached = cache.get(key_hash), None, True
    if principal is None:
        (principal, expires_at), cached = await _look_up(db, key_hash), False
    if principal.key_id is not None and cache.due_for_touch(principal.key_id):
        await _touch(db, principal.key_id)
    if not cached:
        # Trusted from now, not from before the touch: the window is the cache's, whatever a write cost.
        cache.put(key_hash, principal, expires_at)
    access.note_caller(principal.org_id, token)
    return principal


async def _look_up(db: Database, key_hash: str) -> tuple[Principal, datetime | None]:
    row = await ApiKeyLookup.live_by_hash(db, key_hash)
    if row is None:
        raise Unauthenticated()
    expires_at = as_aware(row.expires_at)
    if expires_at is not None and expires_at <= utcnow():
        raise Unauthenticated()
    return Principal(org_id=row.org_id, key_id=row.id, scope=Scope(row.scope), expires_at=expires_at), expires_at


async def _touch(db: Database, key_id: uuid.UUID) -> None:
    """Record the key's use; the condition keeps N nodes from each writing it every minute.
    A failure costs only the timestamp, never the request."""
    try:
        await ApiKeyLookup.touch(db, key_id, utcnow(), LAST_USED_RESOLUTION)
    except SQLAlchemyError:
        log.warning("could not record the last use of API key %s", key_id, exc_info=True)
