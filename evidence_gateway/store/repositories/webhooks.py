"""Webhook endpoints and the record of every delivery attempt."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import bindparam, select

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import owned
from evidence_gateway.models import WebhookDelivery, WebhookEndpoint, WebhookMessage
from evidence_gateway.models.base import table_of
from evidence_gateway.resolvers.list_queries import ListQuery
from evidence_gateway.store.pages import NewestFirst, Page, PageWindow
from evidence_gateway.store.record_types import WebhookDeliveryRecord, WebhookEndpointRecord
from evidence_gateway.store.repository import Repository
from evidence_gateway.store.scoped import rows

_DELIVERY = table_of(WebhookDelivery)
_MESSAGES = table_of(WebhookMessage)
# The state of some messages (one page of attempts' worth), built once.
_STATES = select(_MESSAGES.c.id, _MESSAGES.c.status, _MESSAGES.c.next_attempt_at).where(
    owned(WebhookMessage), _MESSAGES.c.id.in_(bindparam("message_ids", expanding=True))
)


class WebhookEndpointRepository(Repository[WebhookEndpoint, WebhookEndpointRecord]):
    model = WebhookEndpoint
    record = WebhookEndpointRecord
    kind = "webhook_endpoint"


class WebhookDeliveryRepository(Repository[WebhookDelivery, WebhookDeliveryRecord]):
    model = WebhookDelivery
    record = WebhookDeliveryRecord
    kind = "webhook_delivery"

    _of_endpoint = NewestFirst(WebhookDelivery, _DELIVERY.c.endpoint_id == bindparam("endpoint_id"))
    # Test deliveries to a bare URL: what a key below admin may read of the log (attempts to
    # registered endpoints carry the endpoint's URL, often a capability, and its answers).
    _tests = NewestFirst(WebhookDelivery, _DELIVERY.c.endpoint_id.is_(None))

    async def page_of_endpoint(
        self, params: PageWindow, endpoint_id: uuid.UUID, query: ListQuery | None = None
    ) -> Page[WebhookDeliveryRecord]:
        if query is None or query.is_plain:
            return await self._of_endpoint.page(self.ctx, params, endpoint_id=endpoint_id)
        return await self.page(params, query, _DELIVERY.c.endpoint_id == endpoint_id)

    async def page_of_tests(self, params: PageWindow, query: ListQuery | None = None) -> Page[WebhookDeliveryRecord]:
        if query is None or query.is_plain:
            return await self._tests.page(self.ctx, params)
        return await self.page(params, query, _DELIVERY.c.endpoint_id.is_(None))


class WebhookMessageStates:
    """The caller's outbox messages as the delivery log shows them (the outbox's own claims and
    sends are the delivery worker's, webhooks/)."""

    def __init__(self, ctx: Ctx) -> None:
        self.ctx = ctx

    async def of(self, message_ids: list[uuid.UUID]) -> dict[uuid.UUID, tuple[str, datetime | None]]:
        """``{id: (status, next_attempt_at)}`` of the caller's messages among ``message_ids``."""
        if not message_ids:
            return {}
        found = await rows(self.ctx, _STATES, message_ids=message_ids)
        return {row.id: (row.status, row.next_attempt_at) for row in found}
