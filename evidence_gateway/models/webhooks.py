"""Webhook deliveries: every test delivery attempt with its outcome, per organisation."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import Column, Index, Text
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, json_field, org_fk


class WebhookDelivery(SQLModel, table=True):
    __tablename__ = "webhook_delivery"
    __table_args__ = (Index("ix_webhook_delivery_org_created", "org_id", "created_at", "id"),)

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
