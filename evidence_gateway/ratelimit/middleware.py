"""Rate limiting at the edge, before authentication (DESIGN.md §17).

- A request with a well-formed API key is counted against that key (by a digest of it, so no
  database lookup is needed and both transports are counted alike); one without is counted
  against its client address.
- A key that turns out wrong (401; on /graphql a 200 whose fields were refused, which carries
  ``WWW-Authenticate`` as a 401 does) is also counted against the address, in a small budget of
  its own: once an address has spent it, its requests are refused (429) until the window ends —
  except those with a key this node has verified in the last few minutes, so that a client
  sharing an address with a key-guesser keeps working.
- GraphQL documents spend their cost from a points budget as well (schema/rate_limit.py).

Every limited answer carries ``RateLimit`` and ``RateLimit-Policy``; a refusal is 429 with
``Retry-After``, in the REST error envelope or, on /graphql, as a GraphQL error. Probes
(/healthz, /readyz, /metrics) are never limited.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidence_gateway.jsoncodec import dumps
from evidence_gateway.ratelimit.limiter import Limiter, Policy, Verdict

EXEMPT = frozenset({"/healthz", "/readyz", "/metrics"})
_WELL_FORMED_KEY = re.compile(r"^[Bb]earer +(evk_[0-9a-f]{48})\s*$")
# How long a key verified on this node exempts its holder from its address's refusal.
VERIFIED_SECONDS = 600.0
_MAX_VERIFIED = 10_000


@dataclass
class RequestBudget:
    """The request's spending, in its scope state: the GraphQL extension adds its points."""

    limiter: Limiter
    identity: str
    verdicts: list[Verdict] = field(default_factory=list)


def budget_of(scope: Scope) -> RequestBudget | None:
    found = (scope.get("state") or {}).get("rate_limit")
    return found if isinstance(found, RequestBudget) else None


def _key_digest(scope: Scope) -> str | None:
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            match = _WELL_FORMED_KEY.match(value.decode("latin-1"))
            return hashlib.sha256(match.group(1).encode()).hexdigest()[:32] if match else None
    return None


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, limiter: Limiter, enabled: bool) -> None:
        self.app = app
        self.limiter = limiter
        self.enabled = enabled
        self._verified: dict[str, float] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.enabled or scope["type"] != "http" or scope.get("path") in EXEMPT:
            await self.app(scope, receive, send)
            return
        policies = self.limiter.policies
        address = (scope.get("client") or ("unknown",))[0]
        digest = _key_digest(scope)
        blocked = await self.limiter.spent(policies.auth_failures, address)
        if blocked is not None and not blocked.allowed and not self._recently_verified(digest):
            await _refuse(scope, send, blocked, [blocked])
            return
        policy, identity = (policies.key, f"key:{digest}") if digest else (policies.address, address)
        verdict = await self.limiter.hit(policy, identity)
        if verdict is not None and not verdict.allowed:
            await _refuse(scope, send, verdict, [verdict])
            return
        budget = RequestBudget(self.limiter, identity, [verdict] if verdict else [])
        scope.setdefault("state", {})["rate_limit"] = budget
        refused_key = False

        async def send_with_headers(message: Message) -> None:
            nonlocal refused_key
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                refused_key = message["status"] == 401 or "www-authenticate" in headers
                _add_headers(headers, budget.verdicts)
            await send(message)

        await self.app(scope, receive, send_with_headers)
        if refused_key:
            await self.limiter.hit(policies.auth_failures, address)
        elif digest is not None:
            self._remember(digest)

    def _recently_verified(self, digest: str | None) -> bool:
        return digest is not None and self._verified.get(digest, 0.0) > time.monotonic()

    def _remember(self, digest: str) -> None:
        if len(self._verified) >= _MAX_VERIFIED:
            self._verified.clear()
        self._verified[digest] = time.monotonic() + VERIFIED_SECONDS


def _add_headers(headers: MutableHeaders, verdicts: list[Verdict]) -> None:
    if verdicts:
        headers["RateLimit-Policy"] = ", ".join(v.policy.header() for v in verdicts)
        headers["RateLimit"] = ", ".join(v.header() for v in verdicts)


def refusal_message(policy: Policy, retry_after: int) -> str:
    what = {
        "key": "requests with this API key",
        "address": "requests without an API key from this address",
        "auth_failures": "failed authentications from this address",
        "graphql": "GraphQL points (document cost) with this API key or address",
    }[policy.name]
    return f"rate limit exceeded: {what} are limited to {policy.limit} per {policy.window} s; retry in {retry_after} s"


def refusal_details(verdict: Verdict) -> dict[str, Any]:
    retry_after = max(verdict.reset_seconds, 1)
    return {"policy": verdict.policy.name, "limit": verdict.policy.limit, "window_seconds": verdict.policy.window,
            "retry_after": retry_after}  # fmt: skip


async def _refuse(scope: Scope, send: Send, verdict: Verdict, shown: list[Verdict]) -> None:
    retry_after = max(verdict.reset_seconds, 1)
    message = refusal_message(verdict.policy, retry_after)
    details = refusal_details(verdict)
    if scope.get("path") == "/graphql":
        body = dumps(
            {"data": None, "errors": [{"message": message, "extensions": {"code": "RATE_LIMITED", **details}}]}
        )
    else:
        body = dumps({"error": message, "details": {"code": "rate_limited", **details}})
    start: Message = {"type": "http.response.start", "status": 429, "headers": []}
    headers = MutableHeaders(scope=start)
    headers["Content-Type"] = "application/json"
    headers["Content-Length"] = str(len(body))
    headers["Retry-After"] = str(retry_after)
    _add_headers(headers, shown)
    await send(start)
    await send({"type": "http.response.body", "body": body})
