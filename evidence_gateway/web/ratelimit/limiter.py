"""What is counted against whom: the policies, and a limiter that charges them.

A limiter that cannot reach its store lets requests through (and says so in the log, at most
once a minute): losing the rate limit for a while is better than losing the API with Redis.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, RateLimitItemPerSecond
from limits.aio.strategies import FixedWindowRateLimiter
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

    @property
    def item(self) -> RateLimitItem:
        return RateLimitItemPerSecond(self.limit, self.window)

    def header(self) -> str:
        """One item of RateLimit-Policy (draft-ietf-httpapi-ratelimit-headers)."""
        unit = f';qu="{self.unit}"' if self.unit else ""
        return f'"{self.name}";q={self.limit};w={self.window}{unit}'


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
        self._strategy = FixedWindowRateLimiter(storage_from_string(storage_uri(settings.redis_url)))
        self._complained = -math.inf

    async def hit(self, policy: Policy, identity: str, cost: int = 1) -> Verdict | None:
        """Spend ``cost`` if the budget has it (nothing is spent otherwise); None: store down."""
        try:
            allowed = await self._strategy.hit(policy.item, "evidence", policy.name, identity, cost=cost)
            stats = await self._strategy.get_window_stats(policy.item, "evidence", policy.name, identity)
        except Exception:
            self._complain()
            return None
        return Verdict(policy, allowed, max(stats.remaining, 0), _seconds_until(stats.reset_time), cost)

    async def spent(self, policy: Policy, identity: str) -> Verdict | None:
        """The budget as it stands, spending nothing; None: store down."""
        try:
            stats = await self._strategy.get_window_stats(policy.item, "evidence", policy.name, identity)
        except Exception:
            self._complain()
            return None
        remaining = max(stats.remaining, 0)
        return Verdict(policy, remaining > 0, remaining, _seconds_until(stats.reset_time), 0)

    def _complain(self) -> None:
        now = time.monotonic()
        if now - self._complained >= _COMPLAINT_SECONDS:
            self._complained = now
            log.exception("rate limit store unreachable: requests pass unlimited until it answers")


def _seconds_until(reset_time: float) -> int:
    return max(math.ceil(reset_time - time.time()), 0)
