"""What one GraphQL WebSocket may cost (docs/events.md, "Limits"): the caps on open sockets and
live subscriptions, and the rate-limit budgets its messages spend.

- Open sockets are capped per client address (from the upgrade) and per API key (from the
  ``connection_init`` that names it); live subscriptions per API key and per client address,
  over all their sockets.
  The counts are this process's (as the key cache is): with N workers or nodes, N times as many.
- Every message, and the upgrade itself, spends one request from the budgets HTTP requests
  spend (ratelimit/limiter.py): the key's once the socket has one, else the address's. HTTP
  requests and socket messages with one key share its budget.
- A refused key counts against the address's failed-authentication budget, as a 401 does, through
  the one function HTTP counts with (ratelimit/middleware.py); once the address has spent it, a
  wrong key's socket is refused 4429 instead of 4403. A valid key is never refused for it, and a
  socket without any credential is neither counted nor refused by it (as over HTTP).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field

from starlette.websockets import WebSocket

from evidence_gateway.auth import Principal
from evidence_gateway.settings import Settings
from evidence_gateway.web.ratelimit.limiter import Limiter, Policy, key_identity
from evidence_gateway.web.ratelimit.middleware import (
    client_address,
    count_failed_authentication,
    failed_authentications_exhausted,
)

# How often an open socket's key is looked up again (the key cache answers most of these): a
# revoked key's socket is closed within this long, plus EVIDENCE_AUTH_CACHE_SECONDS.
RECHECK_SECONDS = 30.0
# A close frame's reason holds at most 123 bytes.
MAX_REASON_BYTES = 123


@dataclass(frozen=True, slots=True)
class Cap:
    """One count with a ceiling from the settings."""

    name: str  # as clients see it (extensions.policy)
    setting: str  # the Settings attribute
    what: str

    def limit(self, settings: Settings) -> int:
        value: int = getattr(settings, self.setting)
        return value

    def refusal(self, settings: Settings) -> str:
        return f"too many {self.what}: at most {self.limit(settings)} (EVIDENCE_{self.setting.upper()})"


CONNECTIONS_PER_ADDRESS = Cap(
    "ws_connections_per_address", "ws_max_connections_per_address", "open sockets from this address"
)
CONNECTIONS_PER_KEY = Cap("ws_connections_per_key", "ws_max_connections_per_key", "open sockets with this API key")
SUBSCRIPTIONS_PER_KEY = Cap(
    "ws_subscriptions_per_key", "ws_max_subscriptions_per_key", "live subscriptions with this API key"
)
SUBSCRIPTIONS_PER_ADDRESS = Cap(
    "ws_subscriptions_per_address", "ws_max_subscriptions_per_address", "live subscriptions from this address"
)


@dataclass
class Sockets:
    """This process's open sockets and live subscriptions, counted for the caps (``app.state.sockets``)."""

    recheck_seconds: float = RECHECK_SECONDS
    _counts: dict[str, Counter[Hashable]] = field(default_factory=dict)

    def take(self, cap: Cap, who: Hashable, settings: Settings) -> bool:
        """One more for ``who``, if under the cap (nothing is taken otherwise)."""
        counts = self._counts.setdefault(cap.name, Counter())
        if counts[who] >= cap.limit(settings):
            return False
        counts[who] += 1
        return True

    def give(self, cap: Cap, who: Hashable) -> None:
        counts = self._counts.setdefault(cap.name, Counter())
        counts[who] -= 1
        if counts[who] <= 0:
            del counts[who]

    def total(self, cap: Cap) -> int:
        """Held under ``cap`` by everyone (for operators and tests)."""
        return sum(self._counts.get(cap.name, Counter()).values())


class SocketRefused(Exception):
    """Ends a socket: it is closed with ``code`` and ``reason`` once its operations have stopped."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(f"{code} {reason}")
        self.code = code
        self.reason = close_reason(reason)


# Close codes (graphql-transport-ws's, and RFC 6455's 1009).
BAD_REQUEST = 4400
FORBIDDEN = 4403
TOO_MANY = 4429  # a rate limit or a cap (the protocol's code for too many requests)
MESSAGE_TOO_BIG = 1009


def close_reason(text: str) -> str:
    """``text`` cut to what a close frame holds."""
    encoded = text.encode()
    if len(encoded) <= MAX_REASON_BYTES:
        return text
    return encoded[: MAX_REASON_BYTES - 3].decode(errors="ignore") + "..."


class SocketLimits:
    """One socket's standing against the caps and budgets; ``release`` when it closes."""

    def __init__(self, websocket: WebSocket, sockets: Sockets, limiter: Limiter, settings: Settings) -> None:
        self.sockets = sockets
        self.limiter = limiter
        self.settings = settings
        self.scope = websocket.scope
        self.address = client_address(websocket.scope)
        # Whom messages are charged to: the address until a key is accepted.
        self._policy: Policy = limiter.policies.address
        self._identity = self.address
        self._key: Hashable = None
        self._held: list[tuple[Cap, Hashable]] = []

    def _take(self, cap: Cap, who: Hashable) -> None:
        if not self.sockets.take(cap, who, self.settings):
            raise SocketRefused(TOO_MANY, cap.refusal(self.settings))
        self._held.append((cap, who))

    async def opened(self) -> None:
        """The upgrade: the address's socket cap, and one request from its budget."""
        self._take(CONNECTIONS_PER_ADDRESS, self.address)
        await self.message()

    async def received(self, data: str | bytes) -> None:
        """A message read off the socket, before it is parsed: at most the HTTP body ceiling
        (1009 above it), and one request from the budget."""
        ceiling = self.settings.max_body_bytes
        if _larger(data, ceiling):
            raise SocketRefused(MESSAGE_TOO_BIG, f"message larger than {ceiling} bytes (EVIDENCE_MAX_BODY_BYTES)")
        await self.message()

    async def message(self) -> None:
        """One message from the budget of the socket's key (the address's before it has one)."""
        if not self.settings.rate_limits:
            return
        verdict = await self.limiter.hit(self._policy, self._identity)
        if verdict is not None and not verdict.allowed:
            raise SocketRefused(TOO_MANY, self._spent(self._policy, verdict.reset_seconds))

    async def authentication_failed(self, presented: bool) -> None:
        """A key refused (unknown, revoked, expired, malformed). A presented credential counts
        against the address's failed-authentication budget, as a wrong key over HTTP does;
        SocketRefused (4429) when that budget was already spent, as HTTP answers 429 for 401."""
        if not (presented and self.settings.rate_limits):
            return
        exhausted = await failed_authentications_exhausted(self.limiter, self.scope)
        await count_failed_authentication(self.limiter, self.scope)
        if exhausted is not None:
            raise SocketRefused(TOO_MANY, self._spent(exhausted.policy, exhausted.reset_seconds))

    def authenticated(self, principal: Principal, token: str) -> None:
        """The key's socket cap; from now on messages spend from the key's budget."""
        key = principal.key_id if principal.key_id is not None else principal.org_id
        self._take(CONNECTIONS_PER_KEY, key)
        self._key = key
        self._policy, self._identity = self.limiter.policies.key, key_identity(token)

    def take_subscription(self) -> Cap | None:
        """A slot for one more live subscription of the socket's key and of its address; the cap
        that refused it (nothing taken) when one is full."""
        if not self.sockets.take(SUBSCRIPTIONS_PER_KEY, self._key, self.settings):
            return SUBSCRIPTIONS_PER_KEY
        if not self.sockets.take(SUBSCRIPTIONS_PER_ADDRESS, self.address, self.settings):
            self.sockets.give(SUBSCRIPTIONS_PER_KEY, self._key)
            return SUBSCRIPTIONS_PER_ADDRESS
        return None

    def release_subscription(self) -> None:
        self.sockets.give(SUBSCRIPTIONS_PER_KEY, self._key)
        self.sockets.give(SUBSCRIPTIONS_PER_ADDRESS, self.address)

    def release(self) -> None:
        """The socket closed: its slots go back."""
        for cap, who in self._held:
            self.sockets.give(cap, who)
        self._held.clear()

    def _spent(self, policy: Policy, reset_seconds: int) -> str:
        what = {
            "key": "messages with this API key",
            "address": "messages without an API key from this address",
            "auth_failures": "failed authentications from this address",
        }.get(policy.name, policy.name)
        retry = max(reset_seconds, 1)
        return f"rate limit exceeded: {what}, {policy.limit} per {policy.window} s; retry in {retry} s"


def _larger(data: str | bytes, ceiling: int) -> bool:
    """Whether ``data`` is larger than ``ceiling`` bytes (text as UTF-8, encoded only when it may be)."""
    if len(data) > ceiling:
        return True
    if isinstance(data, bytes) or len(data) * 4 <= ceiling:
        return False
    return len(data.encode(errors="surrogatepass")) > ceiling
