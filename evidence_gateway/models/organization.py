"""Organisations and their API keys."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, org_fk


class Organization(SQLModel, table=True):
    id: uuid.UUID = id_field()
    name: str = Field(max_length=200, unique=True, nullable=False)
    # Standard Webhooks signing secret ("whsec_" + base64), created with the org.
    webhook_signing_secret: str = Field(nullable=False)
    # After `webhooks secret --rotate` the old secret signs beside the new one until this time,
    # as an endpoint's does (webhooks/signing.py).
    previous_webhook_signing_secret: str | None = Field(default=None, max_length=100)
    previous_webhook_signing_secret_expires_at: datetime | None = None
    created_at: datetime = created_field()


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_key"

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    # SHA-256 hex of the whole key; the key itself is never stored.
    key_hash: str = Field(max_length=64, unique=True, nullable=False)
    display_prefix: str = Field(max_length=16, nullable=False)
    # A label for people ("ci deploy", "alice laptop"); keys are told apart by it and the prefix.
    name: str | None = Field(default=None, max_length=200)
    # read < write < admin (auth.Scope). Keys made before scopes existed could do everything.
    scope: str = Field(default="admin", max_length=8, nullable=False, sa_column_kwargs={"server_default": "admin"})
    created_at: datetime = created_field()
    # None: the key does not expire.
    expires_at: datetime | None = None
    # Written at most once a minute per key (auth.LAST_USED_RESOLUTION), not per request.
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None
