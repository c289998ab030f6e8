"""Webhooks per organisation: registered endpoints, the events owed to each (messages) and every
delivery attempt with its outcome, test deliveries included (DESIGN.md §8, §16)."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Column, Index, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import counter_field, created_field, id_field, json_field, org_fk


class MessageStatus(enum.StrEnum):
    pending = "pending"  # owed: an attempt is due at next_attempt_at
    delivered = "delivered"  # a 2xx answer came
    failed = "failed"  # the retry schedule ran out (a hand retry may still deliver it)


class WebhookEndpoint(SQLModel, table=True):
    """A receiver registered by an organisation, with its own signing secret."""

    __tablename__ = "webhook_endpoint"
    __table_args__ = (Index("ix_webhook_endpoint_org_created", "org_id", "created_at", "id"),)

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    url: str = Field(max_length=2000, nullable=False)
    description: str = Field(default="", max_length=500, nullable=False)
    # Event types sent to this endpoint; empty: every type.
    event_types: list[str] = json_field(default_factory=list)
    enabled: bool = Field(default=True, nullable=False)
    secret: str = Field(max_length=100, nullable=False)
    # After a rotation the old secret signs alongside the new one until this time.
    previous_secret: str | None = Field(default=None, max_length=100)
    previous_secret_expires_at: datetime | None = None
    # The organisation's last event sequence already turned into messages for this endpoint.
    event_cursor: int = counter_field(big=True)
    # First failed attempt since the last success; None while healthy.
    failing_since: datetime | None = None
    disabled_reason: str | None = Field(default=None, max_length=200)
    api_key_id: uuid.UUID | None = Field(default=None, foreign_key="api_key.id")
    created_at: datetime = created_field()
    updated_at: datetime = created_field()


class WebhookMessage(SQLModel, table=True):
    """One event owed to one endpoint: the unit the dispatcher claims, attempts and retries."""

    __tablename__ = "webhook_message"
    __table_args__ = (
        UniqueConstraint("endpoint_id", "event_id", name="uq_webhook_message_endpoint_event"),
        Index("ix_webhook_message_due", "status", "next_attempt_at"),
    )

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    endpoint_id: uuid.UUID = Field(foreign_key="webhook_endpoint.id", ondelete="CASCADE", nullable=False)
    event_id: uuid.UUID = Field(foreign_key="event.id", nullable=False)
    event_type: str = Field(max_length=64, nullable=False)
    status: str = Field(default=MessageStatus.pending.value, max_length=16, nullable=False)
    attempts: int = counter_field()
    next_attempt_at: datetime | None = None
    # The node sending it right now, until when (a node that dies mid-attempt lets it go).
    claimed_by: str | None = Field(default=None, max_length=120)
    claimed_until: datetime | None = None
    created_at: datetime = created_field()
    delivered_at: datetime | None = None


class WebhookDelivery(SQLModel, table=True):
    """One attempt: a test delivery, or one try of a message to an endpoint."""

    __tablename__ = "webhook_delivery"
    __table_args__ = (
        Index("ix_webhook_delivery_org_created", "org_id", "created_at", "id"),
        Index("ix_webhook_delivery_endpoint_created", "endpoint_id", "created_at", "id"),
    )

    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    # The Standard Webhooks message id sent in the `webhook-id` header.
    webhook_id: str = Field(max_length=64, nullable=False)
    target_url: str = Field(max_length=2000, nullable=False)
    event_type: str = Field(max_length=200, nullable=False)
    delivered: bool = Field(nullable=False)
    # None when the target never answered over HTTP (DNS failure, refused, timeout).
    http_status: int | None = None
    error: str | None = Field(default=None, max_length=2000)
    response_excerpt: str = Field(default="", sa_column=Column(Text, nullable=False))
    payload: dict[str, Any] = json_field()
    # The acting key, for the audit trail.
    api_key_id: uuid.UUID | None = Field(default=None, foreign_key="api_key.id")
    created_at: datetime = created_field()
    # Set for endpoint deliveries; kept (as null) when the endpoint is deleted.
    endpoint_id: uuid.UUID | None = Field(default=None, foreign_key="webhook_endpoint.id", ondelete="SET NULL")
    message_id: uuid.UUID | None = Field(default=None, foreign_key="webhook_message.id", ondelete="SET NULL")
    event_id: uuid.UUID | None = None
    # 1 for the first try of a message, 2 for the first retry …; None for test deliveries.
    attempt: int | None = None
    duration_ms: int | None = None
