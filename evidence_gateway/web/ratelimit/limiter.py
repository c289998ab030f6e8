"""What is counted against whom: the policies, and a limiter that charges them.

A limiter that cannot reach its store lets requests through (and says so in the log, at most
once a minute): losing the rate limit for a while is better than losing the API with Redis.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass, field
from typing import Any

from limits import RateLimitItem, RateLimitItemPerSecond
from limits.storage import storage_from_string

from evidence_gateway.settings import Settings

log = logging.getLogger(__name__)

# Quiet period between two "store unreachable" lines.
_COMPLAINT_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Policy:
    """One budget: ``limit`` units per ``window`` seconds, in a fixed window."""

    name: str
    limit: int
    window: int
    unit: str | None = None  # RateLimit-Policy's quota unit when it is not requests
    # Built once: every limited request charges one or two policies and names them in a header.
    _item: RateLimitItem = field(init=False, repr=False, compare=False)
    _header: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        unit = f';qu="{self.unit}"' if self.unit else ""
        object.__setattr__(self, "_item", RateLimitItemPerSecond(self.limit, self.window))
        object.__setattr__(self, "_header", f'"{self.name}";q={self.limit};w={self.window}{unit}')

    @property
    def item(self) -> RateLimitItem:
        return self._item

    def header(self) -> str:
        """One item of RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers)."""
        return self._header


@dataclass(frozen=True, slots=True)
class Verdict:
    policy: Policy
    allowed: bool
    remaining: int
    reset_seconds: int
    cost: int = 1

    def header(self) -> str:
        """One item of RateLimit: what is left and when the window resets."""
        return f'"{self.policy.name}";r={self.remaining};t={self.reset_seconds}'


@dataclass(frozen=True, slots=True)
class Policies:
    key: Policy
    address: Policy
    auth_failures: Policy
    graphql: Policy

    @classmethod
    def from_settings(cls, settings: Settings) -> Policies:
        window = settings.rate_limit_window_seconds
        return cls(
            key=Policy("key", settings.rate_limit_per_key, window),
            address=Policy("address", settings.rate_limit_per_address, window),
            auth_failures=Policy("auth_failures", settings.rate_limit_auth_failures, window),
            graphql=Policy("graphql", settings.rate_limit_graphql_points, window, unit="graphql-points"),
        )


def storage_uri(redis_url: str) -> str:
    """limits' URI for the asyncio store: Redis when configured, else this process's memory."""
    if not redis_url:
        return "async+memory://"
    scheme, _, rest = redis_url.partition("://")
    return f"async+{scheme}://{rest}" if scheme in ("redis", "rediss") else redis_url


def key_identity(token: str) -> str:
    """Whom a request bearing this well-formed API key is counted against: a digest of the key,
    so no lookup is needed. The same for an HTTP request and a WebSocket message (the key comes
    in its ``connection_init``), so both spend one budget."""
    return "key:" + hashlib.sha256(token.encode()).hexdigest()[:32]


class Limiter:
    def __init__(self, settings: Settings) -> None:
        self.policies = Policies.from_settings(settings)
        self.shared = bool(settings.redis_url)
        # limits' fixed window (``FixedWindowRateLimiter``), its storage called directly: see ``hit``.
        self._storage: Any = storage_from_string(storage_uri(settings.redis_url))
        self._complained = -math.inf

    async def hit(self, policy: Policy, identity: str, cost: int = 1) -> Verdict | None:
        """Spend ``cost`` if the budget has it (nothing is spent otherwise); None: store down.

        What ``FixedWindowRateLimiter.hit`` and ``get_window_stats`` do, the same storage calls in
        the same order, with the counter's key built once instead of three times."""
        item = policy.item
        key = item.key_for("evidence", policy.name, identity)
        try:
            allowed = await self._storage.incr(key, item.get_expiry(), amount=cost) <= item.amount
            remaining, reset_time = await self._window(item, key)
        except Exception:
            self._complain()
            return None
        return Verdict(policy, allowed, remaining, _seconds_until(reset_time), cost)

    async def spent(self, policy: Policy, identity: str) -> Verdict | None:
        """The budget as it stands, spending nothing; None: store down."""
        item = policy.item
        try:
            remaining, reset_time = await self._window(item, item.key_for("evidence", policy.name, identity))
        except Exception:
            self._complain()
            return None
        return Verdict(policy, remaining > 0, remaining, _seconds_until(reset_time), 0)

    async def _window(self, item: RateLimitItem, key: str) -> tuple[int, float]:
        """``FixedWindowRateLimiter.get_window_stats``: what is left (never below 0) and when the
        window ends."""
        remaining = max(0, item.amount - await self._storage.get(key))
        return remaining, await self._storage.get_expiry(key)

    def _complain(self) -> None:
        now = time.monotonic()
        if now - self._complained >= _COMPLAINT_SECONDS:
            self._complained = now
            log.exception("rate limit store unreachable: requests pass unlimited until it answers")


def _seconds_until(reset_time: float) -> int:
    return max(math.ceil(reset_time - time.time()), 0)
