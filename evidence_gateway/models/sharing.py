"""Sharing with data recipients (iLEAP / PACT exchange, docs/ileap.md).

A data recipient is an organisation's customer that pulls footprints through the PACT API with
OAuth2 client credentials; a publication makes one pack visible to one recipient until it is
withdrawn. The host's token-signing key belongs to the installation, like its other secrets.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, org_fk


class DataRecipient(SQLModel, table=True):
    __tablename__ = "data_recipient"
    __table_args__ = (Index("ix_data_recipient_org_created", "org_id", "created_at"),)

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    # A label for people: the customer's name.
    name: str = Field(max_length=200, nullable=False)
    # OAuth2 client id: public, what the recipient sends as the Basic auth user name.
    client_id: str = Field(max_length=64, unique=True, nullable=False)
    # SHA-256 hex of the client secret; the secret itself is shown once and never stored.
    secret_hash: str = Field(max_length=64, nullable=False)
    created_at: datetime = created_field()
    # Set once: the credentials are refused from then on, and so are tokens issued before.
    revoked_at: datetime | None = None


class Publication(SQLModel, table=True):
    """One pack visible to one recipient; withdrawn ones stay as the record of what was shared."""

    __tablename__ = "publication"
    __table_args__ = (
        # One row per (recipient, pack): publishing again after a withdrawal reopens it.
        UniqueConstraint("recipient_id", "report_pack_id"),
        Index("ix_publication_org_created", "org_id", "created_at"),
    )

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    recipient_id: uuid.UUID = Field(foreign_key="data_recipient.id", nullable=False)
    report_pack_id: uuid.UUID = Field(foreign_key="report_pack.id", nullable=False)
    created_at: datetime = created_field()
    # None while published.
    withdrawn_at: datetime | None = None


class ExchangeSigningKey(SQLModel, table=True):
    """The private key that signs access tokens (RS256), shared by every node: made on first
    use, like instance_secret, but a PEM key is longer than that table's values."""

    __tablename__ = "exchange_signing_key"

    name: str = Field(primary_key=True, max_length=64)
    kid: str = Field(max_length=64, nullable=False)
    private_key_pem: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = created_field()
