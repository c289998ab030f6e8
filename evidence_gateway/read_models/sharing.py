"""Data recipients and publications (docs/ileap.md) as /api/sharing answers them."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from evidence_gateway.models import PactVersion
from evidence_gateway.read_models.base import EXTENSION, ReadModel


class RecipientHost(ReadModel):
    """The recipient's own PACT host, where answers to its requests go. Never the client secret."""

    url: str = Field(description="Its base URL (/2/events, /3/events, /auth/token below it).")
    client_id: str = Field(description="The client id its host issued to the data owner.")
    pact_version: PactVersion = Field(description="The PACT major it speaks: where Published notices go.")


class DataRecipient(ReadModel):
    """A customer that pulls the organisation's published footprints over PACT / iLEAP with OAuth2
    client credentials. Never shows its client secret (or its host's)."""

    internal = frozenset(
        {"org_id", "secret_hash", "host_url", "host_client_id", "host_client_secret", "host_pact_version"}
    )
    model_config = ConfigDict(json_schema_extra=EXTENSION)
    derived = frozenset({"host", "revoked"})

    id: uuid.UUID
    name: str = Field(min_length=1, max_length=200)
    client_id: str = Field(pattern="^evci_[0-9a-f]{24}$", description="OAuth2 client id: the Basic auth user.")
    created_at: datetime
    revoked_at: datetime | None = Field(description="When its credentials were revoked; null: live.")
    host: RecipientHost | None = Field(description="Where answers to its requests go; null: not set.")
    revoked: bool

    @classmethod
    def derive(cls, obj: Any) -> dict[str, Any]:
        host = None
        if obj.host_url is not None and obj.host_client_id is not None:
            host = {"url": obj.host_url, "client_id": obj.host_client_id, "pact_version": obj.host_pact_version or "3"}
        return {"host": host, "revoked": obj.revoked_at is not None}


class DataRecipientWithSecret(DataRecipient):
    """A new recipient with its client secret, shown this once."""

    client_secret: str | None = Field(
        pattern="^evcs_[0-9a-f]{48}$",
        description="The client secret; null in an Idempotency-Key replay (it is not stored).",
    )


class Publication(ReadModel):
    """A pack shared with one data recipient; withdrawn ones stay as the record of what was shared."""

    internal = frozenset({"org_id", "report_pack_id"})
    model_config = ConfigDict(json_schema_extra=EXTENSION)
    derived = frozenset({"pack_id", "published"})

    id: uuid.UUID
    recipient_id: uuid.UUID
    pack_id: uuid.UUID
    created_at: datetime = Field(description="When it was (last) published.")
    withdrawn_at: datetime | None = Field(description="When it was withdrawn; null: published.")
    published: bool

    @classmethod
    def derive(cls, obj: Any) -> dict[str, Any]:
        return {"pack_id": obj.report_pack_id, "published": obj.withdrawn_at is None}
