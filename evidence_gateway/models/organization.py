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
    created_at: datetime = created_field()


class ApiKey(SQLModel, table=True):
    __tablename__ = "api_key"

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    # SHA-256 hex of the whole key; the key itself is never stored.
    key_hash: str = Field(max_length=64, unique=True, nullable=False)
    display_prefix: str = Field(max_length=16, nullable=False)
    created_at: datetime = created_field()
    revoked_at: datetime | None = None
