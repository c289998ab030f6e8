"""What every resolver receives: the caller, the database and the settings."""

from __future__ import annotations

from dataclasses import dataclass

from evidence_gateway.auth import Principal
from evidence_gateway.db import Database
from evidence_gateway.settings import Settings


@dataclass(frozen=True, slots=True)
class Ctx:
    db: Database
    settings: Settings
    principal: Principal

    @property
    def org_id(self):  # type: ignore[no-untyped-def]
        return self.principal.org_id
