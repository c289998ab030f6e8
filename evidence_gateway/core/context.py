"""What every resolver receives: the caller, the database, the settings and the request's terms."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from evidence_gateway.auth import Principal, Scope
from evidence_gateway.core.idempotency import Claim
from evidence_gateway.errors import InsufficientScope
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database


@dataclass(frozen=True, slots=True)
class Ctx:
    db: Database
    settings: Settings
    principal: Principal
    # X-Request-ID of the request (or generated): written into every event it causes.
    request_id: str | None = None
    # The Idempotency-Key this request holds; the unit of work stores the answer with the change.
    idempotency: Claim | None = None
    # If-Match of the request: a write refuses (412) when the resource moved on.
    if_match: str | None = None
    # Prefer: respond-async (RFC 7240): long work is queued and answered 202.
    respond_async: bool = False

    @property
    def org_id(self) -> uuid.UUID:
        return self.principal.org_id

    @property
    def actor(self) -> uuid.UUID | None:
        return self.principal.key_id

    def require(self, needed: Scope) -> None:
        """The one scope check, for both transports: every write passes it in the unit of work;
        secrets and webhook endpoints ask for ``admin`` themselves."""
        have = self.principal.scope
        if not have.allows(needed):
            raise InsufficientScope(
                f"this API key has scope '{have}'; this operation needs '{needed}'",
                required_scope=str(needed),
                key_scope=str(have),
            )
