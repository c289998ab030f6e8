"""Sharing packs with data recipients (docs/ileap.md): recipients and their OAuth2 client
credentials, publications of packs to them.

Admin operations, as API keys are: GraphQL and REST act for the calling key's organisation and
need an ``admin`` key; the CLI names the organisation. Every creation, revocation, publication
and withdrawal is a unit of work with its event, and none of them ever carries the client
secret or its hash. A recipient sees exactly its live publications' packs (exchange/host.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import Field, StringConstraints
from sqlalchemy.exc import IntegrityError

from evidence_gateway.auth import Principal, Scope
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import as_aware, utcnow
from evidence_gateway.core.uow import unit_of_work
from evidence_gateway.errors import Conflict, InvalidInput, NotFound
from evidence_gateway.exchange import answers
from evidence_gateway.exchange.auth import hash_secret, new_client_id, new_client_secret
from evidence_gateway.models import DataRecipient, PackStatus, PactVersion, Publication
from evidence_gateway.packs.lookup import load_pack
from evidence_gateway.resolvers.validation import Name, OneOf, StrictInput, UUIDField, parse, parse_id
from evidence_gateway.settings import get_settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.keys import OrganizationRepository
from evidence_gateway.store.repositories.sharing import DataRecipientRepository, PublicationRepository
from evidence_gateway.webhooks import guard

# A pack may be shared once its files exist and until it failed: a draft is still rendering, an
# archived version was replaced before anyone acted on it.
PUBLISHABLE = frozenset({PackStatus.generated, PackStatus.in_review, PackStatus.approved, PackStatus.published})


class RecipientCreate(StrictInput):
    name: Name
    """The customer's name, as the organisation's people know it."""


HostUrl = Annotated[
    str,
    StringConstraints(min_length=1, max_length=guard.MAX_URL_LENGTH),
    Field(description="http or https; must resolve to public addresses.", json_schema_extra={"format": "uri"}),
]
Credential = Annotated[str, StringConstraints(min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$")]


class RecipientHost(StrictInput):
    url: HostUrl
    """The recipient's PACT host: its base URL (``/2/events``, ``/3/events``, ``/auth/token`` and
    ``/.well-known/openid-configuration`` below it)."""
    client_id: Credential
    """The client id the recipient's host issued to this organisation."""
    client_secret: Annotated[str, StringConstraints(min_length=1, max_length=500, pattern=r"^[\x21-\x7e]+$")]
    """Its client secret: stored to authenticate with, never shown again."""
    pact_version: Annotated[str, OneOf(PactVersion)] = "3"
    """The PACT major the host speaks: Published notices go to its ``/2/events`` or ``/3/events``
    (answers to a request use the request's own)."""


class PublicationCreate(StrictInput):
    recipient_id: UUIDField
    """The data recipient the pack is shared with."""
    pack_id: UUIDField
    """The pack whose iLEAP footprints and transport activity data the recipient may pull."""


@dataclass(frozen=True, slots=True)
class CreatedRecipient:
    """The stored recipient and the only copy of its client secret."""

    recipient: DataRecipient
    client_secret: str


def recipient_json(recipient: DataRecipient) -> dict[str, Any]:
    """A recipient in its events and answers: never the secret or its hash."""
    return {
        "id": recipient.id,
        "name": recipient.name,
        "client_id": recipient.client_id,
        "created_at": as_aware(recipient.created_at),
        "revoked_at": as_aware(recipient.revoked_at),
        "host": host_json(recipient),
    }


def host_json(recipient: DataRecipient) -> dict[str, str] | None:
    """Where answers to the recipient's requests go: its host's URL and the client id used there;
    never the client secret."""
    if recipient.host_url is None or recipient.host_client_id is None:
        return None
    return {
        "url": recipient.host_url,
        "client_id": recipient.host_client_id,
        "pact_version": recipient.host_pact_version or "3",
    }


def publication_json(publication: Publication) -> dict[str, Any]:
    return {
        "id": publication.id,
        "recipient_id": publication.recipient_id,
        "pack_id": publication.report_pack_id,
        "created_at": as_aware(publication.created_at),
        "withdrawn_at": as_aware(publication.withdrawn_at),
    }


# ---- recipients ----------------------------------------------------------------------------------


async def create_recipient(ctx: Ctx, data: Any) -> CreatedRecipient:
    """A new recipient of the caller's organisation with fresh client credentials."""
    ctx.require(Scope.ADMIN)
    p = parse(RecipientCreate, data)
    secret = new_client_secret()
    recipient = DataRecipient(
        org_id=ctx.org_id, name=p.name, client_id=new_client_id(), secret_hash=hash_secret(secret)
    )
    async with unit_of_work(ctx) as uow:
        uow.session.add(recipient)
        uow.emit(EventType.data_recipient_created, "data_recipient", recipient.id, recipient_json(recipient))
        created = CreatedRecipient(recipient, secret)
        uow.respond(created, shown_once=(secret,))
    return created


async def list_recipients(ctx: Ctx) -> list[DataRecipient]:
    """The caller's organisation's recipients, revoked ones included, oldest first."""
    ctx.require(Scope.ADMIN)
    async with ctx.db.read() as session:
        return await DataRecipientRepository(ctx).listed(session)


async def revoke_recipient(ctx: Ctx, recipient_id: Any) -> DataRecipient:
    """Revoke a recipient's credentials: no new token, and its tokens already issued are refused
    from the next request. Revoking again changes nothing and is not an error."""
    ctx.require(Scope.ADMIN)
    rid = parse_id(recipient_id, "data recipient")
    async with unit_of_work(ctx) as uow:
        recipient = await DataRecipientRepository(ctx).load(uow.session, rid, for_update=True)
        if recipient is None:
            raise NotFound("data recipient not found", resource="data_recipient", id=str(recipient_id))
        if recipient.revoked_at is None:
            recipient.revoked_at = utcnow()
            uow.emit(EventType.data_recipient_revoked, "data_recipient", recipient.id, recipient_json(recipient))
        uow.respond(recipient)
    return recipient


async def set_recipient_host(ctx: Ctx, recipient_id: Any, data: Any) -> DataRecipient:
    """Register the recipient's own PACT host and the credentials this organisation holds for it:
    the answers to its requests (RequestFulfilled / RequestRejected) are sent there. Replaces what
    was set; the URL passes the webhooks' SSRF rules."""
    ctx.require(Scope.ADMIN)  # the secret authenticates elsewhere, and footprints go out
    rid = parse_id(recipient_id, "data recipient")
    p = parse(RecipientHost, data)
    try:
        await guard.checked(guard.parse_target_url(p.url, "url"), ctx.settings, "url")
    except InvalidInput as exc:
        raise InvalidInput("invalid recipient host URL", fields=exc.fields) from None
    async with unit_of_work(ctx) as uow:
        recipient = await _live(ctx, uow.session, rid, recipient_id)
        recipient.host_url = p.url.rstrip("/")
        recipient.host_client_id = p.client_id
        recipient.host_client_secret = p.client_secret
        recipient.host_pact_version = p.pact_version
        uow.emit(EventType.data_recipient_host_changed, "data_recipient", recipient.id, recipient_json(recipient))
        uow.respond(recipient)
    return recipient


async def clear_recipient_host(ctx: Ctx, recipient_id: Any) -> DataRecipient:
    """Forget the recipient's host and its credentials: its requests are no longer answered.
    Clearing a host that is not set changes nothing."""
    ctx.require(Scope.ADMIN)
    rid = parse_id(recipient_id, "data recipient")
    async with unit_of_work(ctx) as uow:
        recipient = await DataRecipientRepository(ctx).load(uow.session, rid, for_update=True)
        if recipient is None:
            raise NotFound("data recipient not found", resource="data_recipient", id=str(recipient_id))
        if recipient.host_url is not None:
            recipient.host_url = recipient.host_client_id = recipient.host_client_secret = None
            recipient.host_pact_version = None
            uow.emit(EventType.data_recipient_host_changed, "data_recipient", recipient.id, recipient_json(recipient))
        uow.respond(recipient)
    return recipient


async def _live(ctx: Ctx, session: Any, rid: Any, raw: Any) -> DataRecipient:
    recipient = await DataRecipientRepository(ctx).load(session, rid, for_update=True)
    if recipient is None:
        raise NotFound("data recipient not found", resource="data_recipient", id=str(raw))
    if recipient.revoked_at is not None:
        raise Conflict("the data recipient's credentials are revoked", recipient_id=str(recipient.id))
    return recipient


# ---- publications --------------------------------------------------------------------------------


async def publish(ctx: Ctx, data: Any) -> Publication:
    """Share a pack with a recipient. Publishing a pack already published to it changes nothing;
    one withdrawn before is published again (the same publication, a new event)."""
    ctx.require(Scope.ADMIN)
    p = parse(PublicationCreate, data)
    try:
        return await _publish(ctx, p)
    except IntegrityError:
        # Two requests published the same pair at once; the unique (recipient, pack) kept one.
        # Again, the row is there: the answer is the one publication, with no second event.
        return await _publish(ctx, p)


async def _publish(ctx: Ctx, p: PublicationCreate) -> Publication:
    async with unit_of_work(ctx) as uow:
        recipient = await DataRecipientRepository(ctx).load(uow.session, p.recipient_id)
        if recipient is None:
            raise InvalidInput(fields={"recipient_id": "no such data recipient"})
        if recipient.revoked_at is not None:
            raise Conflict("the data recipient's credentials are revoked", recipient_id=str(recipient.id))
        try:
            pack = await load_pack(uow.session, ctx, p.pack_id)
        except NotFound:
            raise InvalidInput(fields={"pack_id": "no such pack"}) from None
        if pack.status not in PUBLISHABLE:
            raise Conflict(
                f"a pack with status '{pack.status}' cannot be published",
                status=pack.status,
                publishable=sorted(PUBLISHABLE),
            )
        publications = PublicationRepository(ctx)
        publication = await publications.of_pair(uow.session, recipient.id, pack.id, for_update=True)
        if publication is None:
            publication = Publication(org_id=ctx.org_id, recipient_id=recipient.id, report_pack_id=pack.id)
            uow.session.add(publication)
            # Now, not with the events: a concurrent publication of the pair fails here, as the
            # IntegrityError ``publish`` answers by reading the winner's row.
            await uow.session.flush()
            uow.emit(EventType.publication_created, "publication", publication.id, publication_json(publication))
            notified = _notify(ctx, uow.session, recipient, publication)
        elif publication.withdrawn_at is not None:
            publication.withdrawn_at = None
            publication.created_at = utcnow()
            uow.emit(EventType.publication_created, "publication", publication.id, publication_json(publication))
            notified = _notify(ctx, uow.session, recipient, publication)
        else:
            notified = False
        uow.respond(publication)
    if notified:
        answers.wake()
    return publication


def _notify(ctx: Ctx, session: Any, recipient: DataRecipient, publication: Publication) -> bool:
    """A Published notice for the recipient's host, when it has one (PACT: the data owner MAY)."""
    if recipient.host_url is None:
        return False
    session.add(
        answers.published_notice(recipient, publication.id, publication.report_pack_id, ctx.settings.public_base_url)
    )
    return True


async def withdraw(ctx: Ctx, publication_id: Any) -> Publication:
    """Stop sharing: the pack's footprints and activity data are gone for the recipient from the
    next request. Withdrawing again changes nothing."""
    ctx.require(Scope.ADMIN)
    pid = parse_id(publication_id, "publication")
    async with unit_of_work(ctx) as uow:
        publication = await PublicationRepository(ctx).load(uow.session, pid, for_update=True)
        if publication is None:
            raise NotFound("publication not found", resource="publication", id=str(publication_id))
        if publication.withdrawn_at is None:
            publication.withdrawn_at = utcnow()
            uow.emit(EventType.publication_withdrawn, "publication", publication.id, publication_json(publication))
        uow.respond(publication)
    return publication


async def list_publications(ctx: Ctx, recipient_id: Any = None) -> list[Publication]:
    """The caller's publications, withdrawn ones included, oldest first; of one recipient if given."""
    ctx.require(Scope.ADMIN)
    rid = None if recipient_id is None else parse_id(recipient_id, "data recipient")
    async with ctx.db.read() as session:
        return await PublicationRepository(ctx).listed(session, rid)


# ---- the command line ----------------------------------------------------------------------------


async def operator(db: Database, org_name: str) -> Ctx:
    """The command line acting for the named organisation: no key, so events show ``actor`` null."""
    async with db.read() as session:
        org = await OrganizationRepository.named(session, org_name)
    if org is None:
        raise NotFound(f"no organisation named {org_name!r}")
    return Ctx(db=db, settings=get_settings(), principal=Principal(org_id=org.id, key_id=None))
