"""Registered webhook endpoints (DESIGN.md §16): the organisation's receivers of its events.

The secret is returned only by create and rotate. Every URL passes the SSRF guard when it is
registered or changed (and again at every delivery, in ``webhooks.delivery``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.auth import Scope
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import UnitOfWork, unit_of_work
from evidence_gateway.errors import InvalidInput, NotFound
from evidence_gateway.models import WebhookEndpoint
from evidence_gateway.read_models.representation import webhook_endpoint_json
from evidence_gateway.resolvers.delivery_log import LoggedAttempt, with_message_state
from evidence_gateway.resolvers.list_queries import WEBHOOK_DELIVERIES, WEBHOOK_ENDPOINTS, parse_list_query
from evidence_gateway.resolvers.organizations import new_webhook_secret
from evidence_gateway.resolvers.pagination import Page, PageParams
from evidence_gateway.resolvers.validation import OneOf, StrictInput, parse, parse_id
from evidence_gateway.store.record_types import WebhookEndpointRecord
from evidence_gateway.store.repositories.events import EventRepository
from evidence_gateway.store.repositories.webhooks import WebhookDeliveryRepository, WebhookEndpointRepository
from evidence_gateway.webhooks import delivery, guard, signing

MAX_EVENT_TYPES = 50

EventTypeName = Annotated[str, OneOf(EventType)]


def _printable(value: str) -> str:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError("must not contain control characters")
    return value


def _distinct(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("must not repeat an event type")
    if len(values) > MAX_EVENT_TYPES:
        raise ValueError(f"at most {MAX_EVENT_TYPES} event types")
    return values


Url = Annotated[
    str,
    StringConstraints(min_length=1, max_length=guard.MAX_URL_LENGTH),
    Field(description="http or https; must resolve to public addresses.", json_schema_extra={"format": "uri"}),
]
Description = Annotated[str, StringConstraints(max_length=500), AfterValidator(_printable)]
EventTypes = Annotated[
    list[EventTypeName],
    AfterValidator(_distinct),
    Field(description="Empty: every type.", json_schema_extra={"uniqueItems": True, "maxItems": MAX_EVENT_TYPES}),
]


def _null_refused(schema: dict[str, Any]) -> None:
    """An update takes what is given, and null is refused (``update_endpoint``): each field of the
    schema is its type alone."""
    for name, field in list(schema["properties"].items()):
        branches = [b for b in field.pop("anyOf") if b != {"type": "null"}]
        field.pop("default", None)
        schema["properties"][name] = {**branches[0], **field}


class EndpointCreate(StrictInput):
    url: Url
    # null reads as absent, as for every optional field.
    description: Description | None = None
    # Empty: every event type, including types added later.
    event_types: EventTypes | None = None
    enabled: bool | None = None


class EndpointUpdate(StrictInput):
    model_config = ConfigDict(json_schema_extra=_null_refused)

    url: Url | None = None
    description: Description | None = None
    event_types: EventTypes | None = None
    enabled: bool | None = None


@dataclass(frozen=True, slots=True)
class EndpointWithSecret:
    """Create and rotate answer with the secret: the only time it is shown."""

    endpoint: WebhookEndpoint
    secret: str


async def _vetted_url(ctx: Ctx, raw: str) -> str:
    await guard.checked(guard.parse_target_url(raw, "url"), ctx.settings, "url")
    return raw


async def create_endpoint(ctx: Ctx, data: Any) -> EndpointWithSecret:
    """Register a receiver; it is sent every matching event from this one on (its own
    ``webhook_endpoint.created`` included, a first sign that deliveries work)."""
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    p = parse(EndpointCreate, data)
    url = await _vetted_url(ctx, p.url)
    now = utcnow()
    secret = new_webhook_secret()
    async with unit_of_work(ctx) as uow:
        endpoint = WebhookEndpoint(
            org_id=ctx.org_id,
            url=url,
            description=p.description or "",
            event_types=list(p.event_types or []),
            enabled=p.enabled is not False,
            secret=secret,
            event_cursor=await EventRepository(ctx).last_sequence(uow.session),
            api_key_id=ctx.actor,
            created_at=now,
            updated_at=now,
        )
        uow.session.add(endpoint)
        _emit(uow, EventType.webhook_endpoint_created, endpoint)
        result = EndpointWithSecret(endpoint, secret)
        uow.respond(result, shown_once=(secret,))
    return result


async def list_endpoints(
    ctx: Ctx, params: PageParams, filters: Any = None, order: Any = None
) -> Page[WebhookEndpointRecord]:
    """Newest first (or in ``order``), narrowed by ``filters`` (list_queries.WEBHOOK_ENDPOINTS)."""
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    query = parse_list_query(WEBHOOK_ENDPOINTS, filters, order)
    return await WebhookEndpointRepository(ctx).page(params, query)


async def get_endpoint(ctx: Ctx, endpoint_id: Any) -> WebhookEndpoint:
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    async with ctx.db.read() as session:
        return await load_endpoint(session, ctx, endpoint_id)


async def load_endpoint(
    session: AsyncSession, ctx: Ctx, endpoint_id: Any, *, for_write: bool = False
) -> WebhookEndpoint:
    """The only way to reach an endpoint: another organisation's id is simply not found."""
    eid = parse_id(endpoint_id, "webhook endpoint")
    endpoint = await WebhookEndpointRepository(ctx).load(session, eid, for_update=for_write)
    if endpoint is None:
        raise NotFound("webhook endpoint not found", resource="webhook_endpoint", id=str(endpoint_id))
    return endpoint


async def update_endpoint(ctx: Ctx, endpoint_id: Any, data: Any) -> WebhookEndpoint:
    """Change what was given. Enabling again starts from the newest event (what happened while it
    was disabled stays readable in the event log) and forgets past failures."""
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    p = parse(EndpointUpdate, data)
    changes = {name: getattr(p, name) for name in p.model_fields_set}
    if any(value is None for value in changes.values()):
        nulls = {name: "must not be null" for name, value in changes.items() if value is None}
        raise InvalidInput(fields=nulls)
    if "url" in changes:
        await _vetted_url(ctx, changes["url"])
    async with unit_of_work(ctx) as uow:
        endpoint = await load_endpoint(uow.session, ctx, endpoint_id, for_write=True)
        if changes.get("enabled") and not endpoint.enabled:
            endpoint.event_cursor = await EventRepository(ctx).last_sequence(uow.session)
            endpoint.failing_since = None
            endpoint.disabled_reason = None
        for name, value in changes.items():
            setattr(endpoint, name, list(value) if name == "event_types" else value)
        endpoint.updated_at = utcnow()
        _emit(uow, EventType.webhook_endpoint_updated, endpoint)
        uow.respond(endpoint)
    return endpoint


async def delete_endpoint(ctx: Ctx, endpoint_id: Any) -> WebhookEndpoint:
    """Gone with its pending messages; its recorded attempts stay in the delivery log."""
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    async with unit_of_work(ctx) as uow:
        endpoint = await load_endpoint(uow.session, ctx, endpoint_id, for_write=True)
        _emit(uow, EventType.webhook_endpoint_deleted, endpoint)
        await uow.session.delete(endpoint)
        uow.respond(endpoint)
    return endpoint


async def rotate_secret(ctx: Ctx, endpoint_id: Any) -> EndpointWithSecret:
    """A new secret; the old one keeps signing beside it for 24 hours."""
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    async with unit_of_work(ctx) as uow:
        endpoint = await load_endpoint(uow.session, ctx, endpoint_id, for_write=True)
        now = utcnow()
        rotation = signing.rotate(endpoint.secret, now)
        secret = endpoint.secret = rotation.secret
        endpoint.previous_secret = rotation.previous_secret
        endpoint.previous_secret_expires_at = rotation.previous_secret_expires_at
        endpoint.updated_at = now
        _emit(uow, EventType.webhook_endpoint_secret_rotated, endpoint)
        result = EndpointWithSecret(endpoint, secret)
        uow.respond(result, shown_once=(secret,))
    return result


async def list_endpoint_deliveries(
    ctx: Ctx, endpoint_id: Any, params: PageParams, filters: Any = None, order: Any = None
) -> Page[LoggedAttempt]:
    """Every attempt to this endpoint, newest first (or in ``order``), narrowed by ``filters``
    (list_queries.WEBHOOK_DELIVERIES)."""
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    query = parse_list_query(WEBHOOK_DELIVERIES, filters, order)
    endpoint = await WebhookEndpointRepository(ctx).get(parse_id(endpoint_id, "webhook endpoint"))
    if endpoint is None:
        raise NotFound("webhook endpoint not found", resource="webhook_endpoint", id=str(endpoint_id))
    page = await WebhookDeliveryRepository(ctx).page_of_endpoint(params, endpoint.id, query)
    return await with_message_state(ctx, page)


async def retry_delivery(ctx: Ctx, delivery_id: Any) -> LoggedAttempt:
    """Send the event of a recorded attempt to its endpoint again, now, and return the new attempt.

    Allowed whatever the message's state (a receiver that is back can be checked by hand); a
    success marks the message delivered. Test deliveries to a bare URL have no event to resend.
    """
    ctx.require(Scope.ADMIN)  # endpoints hold secrets and send data out
    attempt = await WebhookDeliveryRepository(ctx).get(parse_id(delivery_id, "webhook delivery"))
    if attempt is None or attempt.message_id is None:
        # A test delivery, or its endpoint was deleted: nothing to send again.
        raise NotFound("webhook delivery not found", resource="webhook_delivery", id=str(delivery_id))
    retried = await delivery.attempt(ctx.db, ctx.settings, attempt.message_id, claimed_by=None, api_key_id=ctx.actor)
    if retried is None:
        raise NotFound("webhook delivery not found", resource="webhook_delivery", id=str(delivery_id))
    return (await with_message_state(ctx, Page(items=[retried], page=1, per_page=1, total=1))).items[0]


def _emit(uow: UnitOfWork, type_: EventType, endpoint: WebhookEndpoint) -> None:
    uow.emit(type_, "webhook_endpoint", endpoint.id, webhook_endpoint_json(endpoint))
