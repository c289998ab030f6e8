"""Sharing with data recipients (iLEAP / PACT exchange, docs/ileap.md).

A data recipient is an organisation's customer that pulls footprints through the PACT API with
OAuth2 client credentials; a publication makes one pack visible to one recipient until it is
withdrawn. The host's token-signing key belongs to the installation, like its other secrets.
"""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import counter_field, created_field, id_field, json_field, org_fk


class PactVersion(enum.StrEnum):
    """The PACT major a recipient's host speaks (where Published notices go)."""

    v2 = "2"
    v3 = "3"


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
    # The recipient's own PACT host, where answers to its requests go (docs/ileap.md): its base
    # URL and the client credentials the data owner holds for it. The secret is kept as webhook
    # endpoint secrets are (it must be usable to authenticate); it is never read back out.
    host_url: str | None = Field(default=None, max_length=2000)
    host_client_id: str | None = Field(default=None, max_length=200)
    host_client_secret: str | None = Field(default=None, max_length=500)
    # The PACT major the host speaks ("2" or "3"): where Published notices go.
    host_pact_version: str | None = Field(default=None, max_length=1)


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


class ExchangeMessage(SQLModel, table=True):
    """A PACT event owed to a recipient's host: the answer to one of its requests (RequestFulfilled
    or RequestRejected, decided when it is sent) or a Published notice. Claimed, sent and retried
    as webhook messages are (exchange/outbox.py)."""

    __tablename__ = "exchange_message"
    __table_args__ = (
        # A request sent twice (its sender retried) is answered once: CloudEvents ids are unique per source.
        UniqueConstraint("recipient_id", "kind", "request_event_id"),
        Index("ix_exchange_message_due", "status", "next_attempt_at"),
    )

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    recipient_id: uuid.UUID = Field(foreign_key="data_recipient.id", nullable=False)
    # "request" (answer a RequestCreated event) or "published" (a pack was published to it).
    kind: str = Field(max_length=16, nullable=False)
    # The PACT major the answer is written in and sent to ("2": /2/events, "3": /3/events).
    major: str = Field(max_length=1, nullable=False)
    # The request's CloudEvent id (``requestEventId`` of the answer); the publication's id for a notice.
    request_event_id: str = Field(max_length=500, nullable=False)
    # The request's criteria (its ``data``), or ``{"pack_id"}`` for a notice.
    request: dict[str, Any] = json_field()
    # The ``source`` the answer names: this host's events URL as the request reached it.
    reply_source: str = Field(max_length=2000, nullable=False)
    status: str = Field(default="pending", max_length=16, nullable=False)
    attempts: int = counter_field()
    next_attempt_at: datetime | None = None
    claimed_by: str | None = Field(default=None, max_length=120)
    claimed_until: datetime | None = None
    # The last attempt: what was sent ("fulfilled", "rejected", "published") and how it went.
    answer: str | None = Field(default=None, max_length=16)
    last_status: int | None = None
    last_error: str | None = Field(default=None, max_length=2000)
    created_at: datetime = created_field()
    delivered_at: datetime | None = None
