"""Webhook endpoints and the record of every delivery attempt."""

from __future__ import annotations

import uuid

from sqlalchemy import bindparam

from evidence_gateway.models import WebhookDelivery, WebhookEndpoint
from evidence_gateway.models.base import table_of
from evidence_gateway.store.pages import NewestFirst, Page, PageWindow
from evidence_gateway.store.record_types import WebhookDeliveryRecord, WebhookEndpointRecord
from evidence_gateway.store.repository import Repository

_DELIVERY = table_of(WebhookDelivery)


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

    async def page_of_endpoint(self, params: PageWindow, endpoint_id: uuid.UUID) -> Page[WebhookDeliveryRecord]:
        return await self._of_endpoint.page(self.ctx, params, endpoint_id=endpoint_id)

    async def page_of_tests(self, params: PageWindow) -> Page[WebhookDeliveryRecord]:
        return await self._tests.page(self.ctx, params)
