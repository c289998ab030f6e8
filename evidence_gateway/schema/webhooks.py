"""GraphQL for the webhook test, its delivery log and the caller's signing secret (issue 5)."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from evidence_gateway.resolvers import connections, webhooks
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.schema.common import PageArg, PaginationMeta, PerPageArg
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.convert import from_model, input_to_dict
from evidence_gateway.schema.list_inputs import (
    FILTER_HELP,
    ORDER_HELP,
    WebhookDeliveryFilter,
    WebhookDeliveryOrder,
    filters_of,
    order_of,
)
from evidence_gateway.schema.outputs import WebhookPayload, json_deprecation, webhook_payload
from evidence_gateway.schema.relay import After, Before, Connection, First, Last, connection, deprecated_for

GqlInfo = Info[GraphQLContext, None]


@strawberry.type(
    name="WebhookTestResult",
    description="Outcome of a signed test delivery; delivered is true only when the target answered 2xx.",
)
class WebhookTestResultType:
    delivered: bool = strawberry.field(description="The target answered with a 2xx status.")
    target_url: str = strawberry.field(description="The URL the payload was sent to.")
    event_type: str = strawberry.field(description="Event type sent (default pack.published).")
    http_status: int | None = strawberry.field(
        description="Status returned by the target; null when no HTTP answer came (DNS, refused, timeout)."
    )
    response_excerpt: str = strawberry.field(description="First 1 KiB of the response body (UTF-8, lossy).")
    payload: JSON = strawberry.field(
        description="The payload exactly as sent: {type, timestamp, data}.",
        deprecation_reason=json_deprecation("message"),
    )
    error: str | None = strawberry.field(description="Why it was not delivered (null when delivered).")
    webhook_id: str = strawberry.field(description="The webhook-id header sent (msg_…).")
    delivery_id: uuid.UUID = strawberry.field(description="Id of the recorded delivery attempt.")

    @strawberry.field(description="The payload as sent, typed.")
    def message(self) -> WebhookPayload:
        return webhook_payload(self.payload)


@strawberry.enum(description="Where the event an attempt carried stands now.")
class WebhookMessageStatus(enum.Enum):
    pending = strawberry.enum_value("pending", description="Owed: an attempt is due at nextAttemptAt.")
    delivered = strawberry.enum_value("delivered", description="A 2xx answer came.")
    failed = strawberry.enum_value(
        "failed", description="The retry schedule ran out; a hand retry may still deliver it."
    )


@strawberry.type(name="WebhookDelivery", description="One recorded webhook delivery attempt.")
class WebhookDeliveryType:
    id: uuid.UUID = strawberry.field(description="Delivery id.")
    webhook_id: str = strawberry.field(description="The webhook-id header sent (msg_…).")
    target_url: str = strawberry.field(description="Target URL.")
    event_type: str = strawberry.field(description="Event type sent.")
    delivered: bool = strawberry.field(description="The target answered 2xx.")
    http_status: int | None = strawberry.field(description="Status returned; null when no HTTP answer came.")
    error: str | None = strawberry.field(description="Why it was not delivered.")
    response_excerpt: str = strawberry.field(description="First 1 KiB of the response body.")
    payload: JSON = strawberry.field(description="The payload sent.", deprecation_reason=json_deprecation("message"))
    api_key_id: uuid.UUID | None = strawberry.field(description="The API key that asked for the delivery.")
    created_at: datetime = strawberry.field(description="When the attempt was made.")
    endpoint_id: uuid.UUID | None = strawberry.field(
        description="The registered endpoint it went to (null for a test to a bare URL, or once deleted)."
    )
    event_id: uuid.UUID | None = strawberry.field(
        description="The event delivered; also the webhook-id header of every attempt of it."
    )
    attempt: int | None = strawberry.field(description="1 for the first try of an event to an endpoint, 2 …")
    duration_ms: int | None = strawberry.field(description="How long the attempt took, in milliseconds.")
    message_status: WebhookMessageStatus | None = strawberry.field(
        description="Where the event stands now for its endpoint; null for a test to a bare URL or once the "
        "endpoint is deleted."
    )
    next_attempt_at: datetime | None = strawberry.field(
        description="When the event is next tried while messageStatus is PENDING; null otherwise."
    )

    @strawberry.field(description="The payload sent, typed.")
    def message(self) -> WebhookPayload:
        return webhook_payload(self.payload)


@strawberry.type(description="One page of webhook delivery attempts.")
class WebhookDeliveryPage:
    items: list[WebhookDeliveryType] = strawberry.field(description="Attempts on this page, newest first.")
    pagination: PaginationMeta = strawberry.field(description="Page position and total.")


@strawberry.type(name="Viewer", description="The organisation the API key belongs to.")
class ViewerType:
    org_id: uuid.UUID = strawberry.field(description="Organisation id.")
    organization_name: str = strawberry.field(description="Organisation name.")

    @strawberry.field(
        description="Standard Webhooks signing secret (whsec_…) that signs this organisation's webhooks. "
        "Needs an admin key (FORBIDDEN otherwise)."
    )
    async def webhook_signing_secret(self, info: GqlInfo) -> str:
        return await webhooks.viewer_signing_secret(info.context.ctx)


@strawberry.input(description="A signed test webhook to send.")
class TestWebhookInput:
    target_url: str | None = strawberry.field(
        default=None, description="Absolute http or https URL of the receiver; required without endpointId."
    )
    endpoint_id: uuid.UUID | None = strawberry.field(
        default=None,
        description="A registered endpoint: its URL (unless targetUrl is given) and its own secret are used.",
    )
    event_type: str | None = strawberry.field(default=None, description="Event type (default pack.published).")
    workspace_id: uuid.UUID | None = strawberry.field(default=None, description="Workspace to reference in data.")
    report_pack_id: uuid.UUID | None = strawberry.field(
        default=None, description="Pack to reference in data (implies its workspace)."
    )


@strawberry.type
class Query:
    @strawberry.field(description="The calling organisation, with its webhook signing secret.")
    async def viewer(self, info: GqlInfo) -> ViewerType:
        return from_model(ViewerType, await webhooks.get_viewer(info.context.ctx))

    @strawberry.field(
        description="The caller's webhook delivery attempts, newest first (or in orderBy's order), narrowed by "
        "filter, by cursor (without an admin key: the tests sent to a bare URL only, as webhookDeliveries)."
    )
    async def webhook_deliveries_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[WebhookDeliveryFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[WebhookDeliveryOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[WebhookDeliveryType]:
        found = await connections.webhook_deliveries(
            info.context.ctx,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, lambda d: from_model(WebhookDeliveryType, d))

    @strawberry.field(
        description="The caller's webhook delivery attempts, newest first.",
        deprecation_reason=deprecated_for("webhookDeliveriesConnection"),
    )
    async def webhook_deliveries(
        self, info: GqlInfo, page: PageArg = 1, per_page: PerPageArg = 20
    ) -> WebhookDeliveryPage:
        result = await webhooks.list_webhook_deliveries(info.context.ctx, page_params(page, per_page))
        return WebhookDeliveryPage(
            items=[from_model(WebhookDeliveryType, d) for d in result.items], pagination=PaginationMeta.of(result)
        )


@strawberry.type
class Mutation:
    @strawberry.mutation(
        description="Send a signed test webhook. Delivery failures return delivered: false (not an error); "
        "invalid input, foreign references and refused targets are BAD_USER_INPUT."
    )
    async def test_webhook(
        self,
        info: GqlInfo,
        input: Annotated[TestWebhookInput, strawberry.argument(description="Where to send it and what to reference.")],
    ) -> WebhookTestResultType:
        result = await webhooks.send_test_webhook(info.context.ctx, input_to_dict(input))
        return from_model(WebhookTestResultType, result)
