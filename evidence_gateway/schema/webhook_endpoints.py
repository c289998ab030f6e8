"""GraphQL for registered webhook endpoints (DESIGN.md §16): the same resolvers as REST."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.types import Info

from evidence_gateway.core.events import EventType
from evidence_gateway.models import WebhookEndpoint
from evidence_gateway.read_models.webhooks import endpoint_status
from evidence_gateway.resolvers import connections
from evidence_gateway.resolvers import webhook_endpoints as endpoints
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.schema.common import LOOKUP_RULE, PageArg, PaginationMeta, PerPageArg, or_null
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.convert import from_model, input_to_dict
from evidence_gateway.schema.list_inputs import (
    FILTER_HELP,
    ORDER_HELP,
    WebhookDeliveryFilter,
    WebhookDeliveryOrder,
    WebhookEndpointFilter,
    WebhookEndpointOrder,
    filters_of,
    order_of,
)
from evidence_gateway.schema.outputs import json_deprecation
from evidence_gateway.schema.relay import (
    After,
    Before,
    Connection,
    First,
    Last,
    connection,
    deprecated_for,
    nested_connection,
)
from evidence_gateway.schema.webhooks import WebhookDeliveryPage, WebhookDeliveryType
from evidence_gateway.store.record_types import WebhookEndpointRecord

GqlInfo = Info[GraphQLContext, None]


@strawberry.enum(description="Whether deliveries reach the endpoint.")
class WebhookEndpointStatus(enum.Enum):
    healthy = strawberry.enum_value("healthy", description="Its last attempt succeeded (or none was made).")
    failing = strawberry.enum_value("failing", description="Every attempt failed since failingSince; retries go on.")
    disabled = strawberry.enum_value(
        "disabled", description="Nothing is sent: disabled by its owner, or after 5 days of failures."
    )


@strawberry.type(name="WebhookEndpoint", description="A receiver of the organisation's events, signed with its secret.")
class WebhookEndpointType:
    id: uuid.UUID = strawberry.field(description="Endpoint id.")
    url: str = strawberry.field(description="Where events are POSTed (http or https, public hosts only).")
    description: str = strawberry.field(description="Free text for the people who run it.")
    event_types: list[str] = strawberry.field(
        description="Event types sent to it; empty: every type.",
        deprecation_reason=json_deprecation("subscribedEventTypes"),
    )
    enabled: bool = strawberry.field(description="False: nothing is sent (set by its owner, or after failures).")
    status: WebhookEndpointStatus = strawberry.field(description="healthy, failing or disabled.")
    failing_since: datetime | None = strawberry.field(description="First failed attempt since the last success.")
    disabled_reason: str | None = strawberry.field(description="Why it was disabled automatically.")
    previous_secret_expires_at: datetime | None = strawberry.field(
        description="Until then the secret replaced by the last rotation signs alongside the new one."
    )
    created_at: datetime = strawberry.field(description="When it was registered.")
    updated_at: datetime = strawberry.field(description="When it last changed.")

    @strawberry.field(description="Event types sent to it, typed; empty: every type.")
    def subscribed_event_types(self) -> list[EventType]:
        return [EventType(t) for t in self.event_types]

    @strawberry.field(
        description="Attempts to this endpoint, newest first (or in orderBy's order), narrowed by filter, by cursor."
    )
    async def deliveries_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[WebhookDeliveryFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[WebhookDeliveryOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[WebhookDeliveryType]:
        convert = lambda d: from_model(WebhookDeliveryType, d)  # noqa: E731
        return await nested_connection(
            info,
            "endpoint.deliveries",
            self.id,
            convert,
            first,
            after,
            last,
            before,
            filters_of(filter),
            order_of(order_by),
        )

    @strawberry.field(
        description="Attempts to this endpoint, newest first.",
        deprecation_reason=deprecated_for("deliveriesConnection"),
    )
    async def deliveries(self, info: GqlInfo, page: PageArg = 1, per_page: PerPageArg = 20) -> WebhookDeliveryPage:
        result = await endpoints.list_endpoint_deliveries(info.context.ctx, self.id, page_params(page, per_page))
        return WebhookDeliveryPage(
            items=[from_model(WebhookDeliveryType, d) for d in result.items], pagination=PaginationMeta.of(result)
        )


def endpoint_type(endpoint: WebhookEndpoint | WebhookEndpointRecord) -> WebhookEndpointType:
    return WebhookEndpointType(
        id=endpoint.id,
        url=endpoint.url,
        description=endpoint.description,
        event_types=list(endpoint.event_types),
        enabled=endpoint.enabled,
        status=WebhookEndpointStatus(endpoint_status(endpoint)),
        failing_since=endpoint.failing_since,
        disabled_reason=endpoint.disabled_reason,
        previous_secret_expires_at=endpoint.previous_secret_expires_at,
        created_at=endpoint.created_at,
        updated_at=endpoint.updated_at,
    )


@strawberry.type(description="An endpoint with its signing secret: answered only by create and rotate.")
class WebhookEndpointWithSecret:
    endpoint: WebhookEndpointType = strawberry.field(description="The endpoint.")
    secret: str | None = strawberry.field(
        description="Its whsec_ signing secret. Store it: it is not shown again. Null in an Idempotency-Key "
        "replay (listed in the response's extensions.withheld): the secret is never stored with the answer."
    )


@strawberry.type(description="One page of webhook endpoints.")
class WebhookEndpointPage:
    items: list[WebhookEndpointType] = strawberry.field(description="Endpoints on this page, newest first.")
    pagination: PaginationMeta = strawberry.field(description="Page position and total.")


@strawberry.type(description="What was deleted.")
class DeletedWebhookEndpoint:
    id: uuid.UUID = strawberry.field(description="Id of the deleted endpoint.")


@strawberry.input(description="A receiver to register.")
class CreateWebhookEndpointInput:
    url: str = strawberry.field(description="Absolute http or https URL; it must resolve to public addresses.")
    description: str | None = strawberry.field(default=None, description="Free text (at most 500 characters).")
    event_types: list[str] | None = strawberry.field(
        default=None, description="Event types to send (docs/events.md); omitted or empty: every type."
    )
    enabled: bool | None = strawberry.field(default=None, description="Default true.")


@strawberry.input(description="Fields to change; omitted or null ones stay as they are.")
class UpdateWebhookEndpointInput:
    url: str | None = strawberry.field(default=None, description="New URL (checked like at registration).")
    description: str | None = strawberry.field(default=None, description="New description.")
    event_types: list[str] | None = strawberry.field(default=None, description="New event types; empty: every type.")
    enabled: bool | None = strawberry.field(
        default=None, description="true resumes from the newest event and forgets past failures."
    )


def _with_secret(result: endpoints.EndpointWithSecret) -> WebhookEndpointWithSecret:
    return WebhookEndpointWithSecret(endpoint=endpoint_type(result.endpoint), secret=result.secret)


@strawberry.type
class Query:
    @strawberry.field(
        description="The organisation's webhook endpoints, newest first (or in orderBy's order), narrowed by "
        "filter, by cursor."
    )
    async def webhook_endpoints_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[WebhookEndpointFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[WebhookEndpointOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[WebhookEndpointType]:
        found = await connections.webhook_endpoints(
            info.context.ctx,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, endpoint_type)

    @strawberry.field(
        description="The organisation's webhook endpoints, newest first.",
        deprecation_reason=deprecated_for("webhookEndpointsConnection"),
    )
    async def webhook_endpoints(
        self, info: GqlInfo, page: PageArg = 1, per_page: PerPageArg = 20
    ) -> WebhookEndpointPage:
        result = await endpoints.list_endpoints(info.context.ctx, page_params(page, per_page))
        return WebhookEndpointPage(items=[endpoint_type(e) for e in result.items], pagination=PaginationMeta.of(result))

    @strawberry.field(description=f"One webhook endpoint; {LOOKUP_RULE}.")
    async def webhook_endpoint(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Webhook endpoint id.")]
    ) -> WebhookEndpointType | None:
        found = await or_null(endpoints.get_endpoint(info.context.ctx, id))
        return None if found is None else endpoint_type(found)


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Register a webhook endpoint; the answer holds its secret, shown this once.")
    async def create_webhook_endpoint(
        self,
        info: GqlInfo,
        input: Annotated[CreateWebhookEndpointInput, strawberry.argument(description="The receiver to register.")],
    ) -> WebhookEndpointWithSecret:
        return _with_secret(await endpoints.create_endpoint(info.context.ctx, input_to_dict(input)))

    @strawberry.mutation(description="Change a webhook endpoint's URL, description, event types or enabled flag.")
    async def update_webhook_endpoint(
        self,
        info: GqlInfo,
        id: Annotated[uuid.UUID, strawberry.argument(description="Webhook endpoint id.")],
        input: Annotated[UpdateWebhookEndpointInput, strawberry.argument(description="Fields to change.")],
    ) -> WebhookEndpointType:
        return endpoint_type(await endpoints.update_endpoint(info.context.ctx, id, input_to_dict(input)))

    @strawberry.mutation(description="Delete a webhook endpoint; its recorded attempts stay in the delivery log.")
    async def delete_webhook_endpoint(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Webhook endpoint id.")]
    ) -> DeletedWebhookEndpoint:
        endpoint = await endpoints.delete_endpoint(info.context.ctx, id)
        return DeletedWebhookEndpoint(id=endpoint.id)

    @strawberry.mutation(description="A new secret for the endpoint; the old one keeps signing beside it for 24 h.")
    async def rotate_webhook_endpoint_secret(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Webhook endpoint id.")]
    ) -> WebhookEndpointWithSecret:
        return _with_secret(await endpoints.rotate_secret(info.context.ctx, id))

    @strawberry.mutation(
        description="Send the event of a recorded attempt to its endpoint again, now; returns the new attempt "
        "(delivered: false is an answer, not an error)."
    )
    async def retry_webhook_delivery(
        self,
        info: GqlInfo,
        id: Annotated[uuid.UUID, strawberry.argument(description="Id of a recorded delivery attempt to an endpoint.")],
    ) -> WebhookDeliveryType:
        return from_model(WebhookDeliveryType, await endpoints.retry_delivery(info.context.ctx, id))
