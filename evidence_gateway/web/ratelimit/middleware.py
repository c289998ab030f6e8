"""Rate limiting at the edge, before authentication (DESIGN.md §17).

- A request that presents a credential is counted against it: an API key by a digest of the key
  (no database lookup is needed, and both transports are counted alike), any other
  ``Authorization`` value by a digest of that value, a signed download link by its signature. A
  request without one is counted against its client address (evidence_gateway/web/proxies.py).
- A credential that turns out wrong (a 401; on /graphql, a key that did not authenticate; a
  signed link refused with 403) is also counted against the address, in a small budget of its
  own (``count_failed_authentication``, the one place every transport counts one). Once the
  address has spent it, wrong credentials from it are answered 429 instead of 401/403 until the
  window ends. A valid credential is never refused for it, and a request without one never
  counts: a client sharing its address (NAT, a load balancer) with a key-guesser keeps working.
- GraphQL documents spend their cost from a points budget as well (schema/rate_limit.py).

Every limited answer carries ``RateLimit`` and ``RateLimit-Policy``; a refusal is 429 with
``Retry-After``, in the REST error envelope or, on /graphql, as a GraphQL error. Probes
(/healthz, /readyz, /metrics) are never limited.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from starlette.datastructures import MutableHeaders, QueryParams
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.web.ratelimit.limiter import Limiter, Policy, Verdict

EXEMPT = frozenset({"/healthz", "/readyz", "/metrics"})
_WELL_FORMED_KEY = re.compile(r"^[Bb]earer +(evk_[0-9a-f]{48})\s*$")
# The one route a signed link opens (rest_compat/packs.py reads its signature parameters).
_DOWNLOAD = re.compile(r"^/api/v2/artifacts/[^/]+/download$")
# Set in the request's scope state by whoever refused a credential the answer does not show as
# refused (a GraphQL document of introspection alone, a signed link's 403): see refuse_credential.
_REFUSED = "credential_refused"


@dataclass
class RequestBudget:
    """The request's spending, in its scope state: the GraphQL extension adds its points."""

    limiter: Limiter
    identity: str
    verdicts: list[Verdict] = field(default_factory=list)


def budget_of(scope: Scope) -> RequestBudget | None:
    found = (scope.get("state") or {}).get("rate_limit")
    return found if isinstance(found, RequestBudget) else None


def client_address(scope: Scope) -> str:
    """The address budgets are kept for: the scope's client, as the edge decided it."""
    return str((scope.get("client") or ("unknown",))[0])


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:32]


def credential_of(scope: Scope) -> str | None:
    """The identity of the credential the request presents, or None for a request without one."""
    for name, value in scope.get("headers") or ():
        if name == b"authorization":
            text = value.decode("latin-1")
            match = _WELL_FORMED_KEY.match(text)
            return f"key:{_digest(match.group(1))}" if match else f"authorization:{_digest(text)}"
    if scope["type"] == "http" and _DOWNLOAD.match(scope.get("path") or ""):
        query = QueryParams(scope.get("query_string") or b"")
        if "signature" in query or "expires" in query:
            return f"link:{_digest(query.get('signature') or '')}"
    return None


def refuse_credential(scope: Scope) -> None:
    """Mark the request's credential as refused, for an answer that does not say so itself."""
    scope.setdefault("state", {})[_REFUSED] = True


async def count_failed_authentication(limiter: Limiter, scope: Scope) -> Verdict | None:
    """Count one wrong credential against the client address; the budget as it then stands
    (None: the store is down). Every transport counts a failure through here, once."""
    return await limiter.hit(limiter.policies.auth_failures, client_address(scope))


async def failed_authentications_exhausted(limiter: Limiter, scope: Scope) -> Verdict | None:
    """The failed-authentication budget of the client address when it is spent, else None."""
    verdict = await limiter.spent(limiter.policies.auth_failures, client_address(scope))
    return verdict if verdict is not None and not verdict.allowed else None


class RateLimitMiddleware:
    def __init__(self, app: ASGIApp, limiter: Limiter, enabled: bool) -> None:
        self.app = app
        self.limiter = limiter
        self.enabled = enabled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.enabled or scope["type"] != "http" or scope.get("path") in EXEMPT:
            await self.app(scope, receive, send)
            return
        policies = self.limiter.policies
        credential = credential_of(scope)
        policy, identity = (policies.key, credential) if credential else (policies.address, client_address(scope))
        verdict = await self.limiter.hit(policy, identity)
        if verdict is not None and not verdict.allowed:
            await _refuse(scope, send, verdict, [verdict])
            return
        # Known before the answer, so that a wrong credential's 401 can become a 429 in its place.
        exhausted = await failed_authentications_exhausted(self.limiter, scope) if credential else None
        budget = RequestBudget(self.limiter, identity, [verdict] if verdict else [])
        scope.setdefault("state", {})["rate_limit"] = budget
        refused = replaced = False

        async def send_with_headers(message: Message) -> None:
            nonlocal refused, replaced
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                refused = credential is not None and (
                    message["status"] == 401 or "www-authenticate" in headers or bool(scope["state"].get(_REFUSED))
                )
                if refused and exhausted is not None:
                    replaced = True
                    await _refuse(scope, send, exhausted, [exhausted])
                    return
                _add_headers(headers, budget.verdicts)
            elif replaced:
                return  # the body of the answer the 429 replaced
            await send(message)

        await self.app(scope, receive, send_with_headers)
        if refused or (credential is not None and scope["state"].get(_REFUSED)):
            await count_failed_authentication(self.limiter, scope)


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
