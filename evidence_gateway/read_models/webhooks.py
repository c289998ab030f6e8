"""Registered webhook endpoints, recorded delivery attempts and the webhook test's answer."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from evidence_gateway.read_models.base import EXTENSION, ReadModel, Uri, ext


class WebhookEndpointStatus(enum.StrEnum):
    """Whether deliveries reach the endpoint (one named enum, so generated clients make one class)."""

    healthy = "healthy"
    failing = "failing"
    disabled = "disabled"


def endpoint_status(endpoint: Any) -> WebhookEndpointStatus:
    """disabled (by its owner or after days of failures), failing (since its last failed attempt), healthy."""
    if not endpoint.enabled:
        return WebhookEndpointStatus.disabled
    return WebhookEndpointStatus.failing if endpoint.failing_since is not None else WebhookEndpointStatus.healthy


class WebhookEndpoint(ReadModel):
    """A registered receiver of the organisation's events (docs/webhooks.md). Never shows its secret."""

    internal = frozenset({"org_id", "api_key_id", "secret", "previous_secret", "event_cursor"})
    model_config = ConfigDict(json_schema_extra=EXTENSION)
    derived = frozenset({"status"})

    id: uuid.UUID
    url: Uri
    description: str = Field(max_length=500)
    event_types: list[str] = Field(description="Event types sent; empty: every type.")
    enabled: bool
    status: WebhookEndpointStatus
    failing_since: datetime | None = Field(description="First failed attempt since the last success.")
    disabled_reason: str | None
    previous_secret_expires_at: datetime | None = Field(
        description="Until then the secret replaced by the last rotation also signs."
    )
    created_at: datetime
    updated_at: datetime

    @classmethod
    def derive(cls, obj: Any) -> dict[str, Any]:
        return {"status": endpoint_status(obj)}


class WebhookEndpointWithSecret(WebhookEndpoint):
    """An endpoint with its signing secret."""

    secret: str | None = Field(
        pattern="^whsec_",
        description="Shown only by create and rotate; null in an Idempotency-Key replay (secret_withheld).",
    )
    secret_withheld: bool = ext(
        "true in an Idempotency-Key replay: the secret was shown once, in the first answer, and is not "
        "stored with it (rotate the secret if that answer was lost)."
    )

    @classmethod
    def render_with_secret(cls, result: Any) -> dict[str, Any]:
        return {**WebhookEndpoint.render(result.endpoint), "secret": result.secret, "secret_withheld": False}


class WebhookMessageStatus(enum.StrEnum):
    """Where the event an attempt carried stands now (one named enum, so generated clients make one class)."""

    pending = "pending"
    delivered = "delivered"
    failed = "failed"


class WebhookDelivery(ReadModel):
    """A recorded webhook attempt: a test, or one try of an event to a registered endpoint."""

    internal = frozenset({"message_id"})
    model_config = ConfigDict(json_schema_extra=EXTENSION)
    # Read from the attempt's message by the delivery log (resolvers/delivery_log.py); null elsewhere.
    derived = frozenset({"message_status", "next_attempt_at"})

    id: uuid.UUID
    org_id: uuid.UUID
    webhook_id: str
    target_url: str
    event_type: str
    delivered: bool
    http_status: int | None
    error: str | None
    response_excerpt: str
    payload: dict[str, Any] = Field(description="The payload that was sent.")
    api_key_id: uuid.UUID | None
    created_at: datetime
    endpoint_id: uuid.UUID | None = ext("The registered endpoint; null for a bare test URL.")
    event_id: uuid.UUID | None = ext("The event sent (also the webhook-id header).")
    attempt: int | None = ext("1 for the first try of an event, 2 …", ge=1)
    duration_ms: int | None = ext("How long the attempt took.", ge=0)
    message_status: WebhookMessageStatus | None = ext(
        "The event's delivery to the endpoint as of this read: pending (tried again at next_attempt_at), "
        "delivered, or failed (the retry schedule ran out; a hand retry may still deliver it). Null for a "
        "test to a bare URL and once the endpoint is deleted."
    )
    next_attempt_at: datetime | None = ext(
        "When the event is next tried while message_status is pending; null otherwise."
    )

    @classmethod
    def derive(cls, obj: Any) -> dict[str, Any]:
        return {
            "message_status": getattr(obj, "message_status", None),
            "next_attempt_at": getattr(obj, "next_attempt_at", None),
        }


class WebhookTestResult(ReadModel):
    """What a webhook test sent and how the target answered."""

    delivered: bool
    target_url: Uri
    event_type: str
    http_status: int | None = Field(description="Status returned by the target; null if none answered.")
    response_excerpt: str
    payload: dict[str, Any] = Field(description="The payload that was sent.")
    error: str | None = ext("Why the delivery failed (connection, timeout, non-2xx).")
    webhook_id: str = ext("The `webhook-id` header sent (Standard Webhooks).")
    delivery_id: uuid.UUID = ext("The stored delivery record.")
