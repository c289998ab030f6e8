"""The signed webhook test, its delivery log, and the organisation's signing secret."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
from pydantic import AfterValidator, Field, StringConstraints
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.auth import Scope
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import unit_of_work
from evidence_gateway.errors import InvalidInput, NotFound
from evidence_gateway.models.webhooks import WebhookDelivery, WebhookEndpoint
from evidence_gateway.resolvers.delivery_log import LoggedAttempt, with_message_state
from evidence_gateway.resolvers.evidence import resolve_workspace_refs
from evidence_gateway.resolvers.list_queries import WEBHOOK_DELIVERIES, parse_list_query
from evidence_gateway.resolvers.pagination import Page, PageParams
from evidence_gateway.resolvers.validation import NOT_BLANK, StrictInput, UUIDField, parse
from evidence_gateway.resolvers.webhook_endpoints import load_endpoint
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.keys import OrganizationRepository
from evidence_gateway.store.repositories.webhooks import WebhookDeliveryRepository
from evidence_gateway.webhooks import delivery, guard, sender, signing

DEFAULT_EVENT_TYPE = "pack.published"


def _printable(value: str) -> str:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValueError("must not contain control characters")
    return value


EventType = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(_printable),
    Field(json_schema_extra=NOT_BLANK),
]


TargetUrl = Annotated[str, StringConstraints(min_length=1), Field(json_schema_extra={"format": "uri"})]


class WebhookTestInput(StrictInput):
    # Required unless endpoint_id names a registered endpoint (then its URL and secret are used).
    target_url: TargetUrl | None = None
    """http or https; required without endpoint_id."""
    endpoint_id: UUIDField | None = None
    """A registered endpoint: its URL and its own secret (extension)."""
    event_type: EventType | None = None
    """Default pack.published."""
    workspace_id: UUIDField | None = None
    report_pack_id: UUIDField | None = None


@dataclass(frozen=True, slots=True)
class WebhookTestResult:
    """The contract's WebhookTestResult plus ``error``, ``webhook_id`` and ``delivery_id`` (extensions)."""

    delivered: bool
    target_url: str
    event_type: str
    http_status: int | None
    response_excerpt: str
    payload: dict[str, Any]
    error: str | None
    webhook_id: str
    delivery_id: uuid.UUID


@dataclass(frozen=True, slots=True)
class Viewer:
    org_id: uuid.UUID
    organization_name: str


def _iso(ts: Any) -> str:
    return str(ts.isoformat().replace("+00:00", "Z"))


async def send_test_webhook(ctx: Ctx, data: Any) -> WebhookTestResult:
    """Send one signed test event; every attempt that reached the network is recorded.

    Bad input, foreign references and refused targets raise InvalidInput and record nothing.
    """
    # The unit of work that records the attempt checks this too, but only after the send.
    ctx.require(Scope.WRITE)
    p = parse(WebhookTestInput, data)
    async with ctx.db.read() as session:
        endpoint = await _endpoint_ref(session, ctx, p.endpoint_id)
        workspace, pack, fields = await resolve_workspace_refs(session, ctx, p.workspace_id, p.report_pack_id)
        org = await OrganizationRepository.of_caller(session, ctx)
    target_url = p.target_url or (endpoint.url if endpoint else None)
    if target_url is None:
        fields = {"target_url": "field required", **fields}
    if fields:
        raise InvalidInput("invalid input", fields=fields)
    assert target_url is not None
    url = guard.parse_target_url(target_url)

    now = utcnow()
    event_type = p.event_type or DEFAULT_EVENT_TYPE
    payload = {
        "type": event_type,
        "timestamp": _iso(now),
        "data": {
            "test": True,
            "org_id": str(ctx.org_id),
            "workspace_id": str(workspace.id) if workspace else None,
            "report_pack_id": str(pack.id) if pack else None,
        },
    }
    # Serialised once: these exact bytes are signed, sent and (parsed) returned as `payload`.
    body = orjson.dumps(payload)
    msg_id = signing.new_message_id()
    if endpoint is not None:
        headers = delivery.headers_for(endpoint, msg_id, body, now)
    else:
        secrets = signing.live_secrets(
            org.webhook_signing_secret,
            org.previous_webhook_signing_secret,
            org.previous_webhook_signing_secret_expires_at,
            now,
        )
        headers = signing.signature_headers(secrets, msg_id, int(now.timestamp()), body)

    settings = ctx.settings
    target = guard.target_of(url)
    try:
        addresses = await guard.resolve(target, settings.webhook_connect_timeout_seconds)
    except guard.ResolutionFailed as exc:
        if not settings.webhook_allow_private_targets:
            # Refused like a private target, in the same words: no oracle of the internal DNS.
            raise InvalidInput("invalid webhook target", fields={"target_url": guard.REFUSED}) from None
        outcome = sender.failed(str(exc))
    else:
        vetted = guard.vet(target, addresses, allow_private=settings.webhook_allow_private_targets)
        outcome = await sender.post(
            vetted,
            body,
            headers,
            connect_timeout=settings.webhook_connect_timeout_seconds,
            read_timeout=settings.webhook_read_timeout_seconds,
        )

    record = WebhookDelivery(
        org_id=ctx.org_id,
        webhook_id=msg_id,
        target_url=target_url,
        event_type=event_type,
        delivered=outcome.delivered,
        http_status=outcome.http_status,
        error=outcome.error[:2000] if outcome.error else None,
        response_excerpt=outcome.response_excerpt,
        payload=payload,
        api_key_id=ctx.principal.key_id,
        created_at=now,
        endpoint_id=endpoint.id if endpoint else None,
    )
    result = WebhookTestResult(
        delivered=outcome.delivered,
        target_url=target_url,
        event_type=event_type,
        http_status=outcome.http_status,
        response_excerpt=outcome.response_excerpt,
        payload=payload,
        error=record.error,
        webhook_id=msg_id,
        delivery_id=record.id,
    )
    # A record of an outbound attempt, not a change of the organisation's data: no event.
    async with unit_of_work(ctx) as uow:
        uow.session.add(record)
        uow.respond(result)
    return result


async def _endpoint_ref(session: AsyncSession, ctx: Ctx, endpoint_id: uuid.UUID | None) -> WebhookEndpoint | None:
    if endpoint_id is None:
        return None
    # A registered endpoint's URL and secrets are admin business, as its deliveries are.
    ctx.require(Scope.ADMIN)
    try:
        return await load_endpoint(session, ctx, endpoint_id)
    except NotFound:
        raise InvalidInput(fields={"endpoint_id": "unknown webhook endpoint"}) from None


async def list_webhook_deliveries(
    ctx: Ctx, params: PageParams, filters: Any = None, order: Any = None
) -> Page[LoggedAttempt]:
    """The caller's delivery attempts, newest first (or in ``order``), narrowed by ``filters``
    (list_queries.WEBHOOK_DELIVERIES): with an admin key all of them, else only the tests sent to
    a bare URL (registered endpoints are admin business), whatever the filter names."""
    query = parse_list_query(WEBHOOK_DELIVERIES, filters, order)
    deliveries = WebhookDeliveryRepository(ctx)
    admin = ctx.principal.scope.allows(Scope.ADMIN)
    page = await deliveries.page(params, query) if admin else await deliveries.page_of_tests(params, query)
    return await with_message_state(ctx, page)


async def get_viewer(ctx: Ctx) -> Viewer:
    """The calling organisation (its signing secret: ``viewer_signing_secret``)."""
    async with ctx.db.read() as session:
        org = await OrganizationRepository.of_caller(session, ctx)
    return Viewer(org_id=org.id, organization_name=org.name)


async def viewer_signing_secret(ctx: Ctx) -> str:
    """The organisation's webhook signing secret: whoever holds it can forge our webhooks."""
    ctx.require(Scope.ADMIN)
    async with ctx.db.read() as session:
        return (await OrganizationRepository.of_caller(session, ctx)).webhook_signing_secret


async def signing_secret(db: Database, org_name: str, *, rotate: bool = False) -> str:
    """For the CLI: the organisation's secret, replaced by a new one first when ``rotate`` (the
    old one keeps signing beside it for ``signing.ROTATION_OVERLAP``, as an endpoint's does)."""
    async with db.write() as session:
        org = await OrganizationRepository.named_for_change(session, org_name)
        if org is None:
            raise NotFound(f"no organisation named {org_name!r}")
        if rotate:
            rotation = signing.rotate(org.webhook_signing_secret, utcnow())
            org.webhook_signing_secret = rotation.secret
            org.previous_webhook_signing_secret = rotation.previous_secret
            org.previous_webhook_signing_secret_expires_at = rotation.previous_secret_expires_at
        return org.webhook_signing_secret
