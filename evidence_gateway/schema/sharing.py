"""GraphQL for sharing packs with data recipients over PACT / iLEAP (an admin key's business):
the same resolvers as REST's /api/sharing and the CLI's ``recipients`` commands."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.types import Info

from evidence_gateway.core.timeutil import as_aware
from evidence_gateway.models import DataRecipient, Publication
from evidence_gateway.resolvers import sharing
from evidence_gateway.schema.context import GraphQLContext

GqlInfo = Info[GraphQLContext, None]


@strawberry.type(
    name="RecipientHost",
    description="The recipient's own PACT host, where answers to its requests go (the client secret is never shown).",
)
class RecipientHostType:
    url: str = strawberry.field(description="Its base URL (/2/events, /3/events, /auth/token below it).")
    client_id: str = strawberry.field(description="The client id its host issued to this organisation.")
    pact_version: str = strawberry.field(description="The PACT major it speaks (2 or 3): where Published notices go.")


@strawberry.type(
    name="DataRecipient",
    description="A customer that pulls the organisation's published footprints over PACT / iLEAP "
    "(docs/ileap.md) with OAuth2 client credentials. The client secret is never shown again.",
)
class DataRecipientType:
    id: uuid.UUID = strawberry.field(description="Recipient id (publishPack and revokeDataRecipient take it).")
    name: str = strawberry.field(description="The customer's name.")
    client_id: str = strawberry.field(description="OAuth2 client id (evci_…): the Basic auth user at /auth/token.")
    created_at: datetime = strawberry.field(description="When it was made.")
    revoked_at: datetime | None = strawberry.field(
        description="When its credentials were revoked (its tokens stop working too); null: not revoked."
    )
    host: RecipientHostType | None = strawberry.field(
        description="Where answers to its PACT requests are sent; null: not set (its requests are not answered)."
    )


@strawberry.type(name="Publication", description="A pack shared with one data recipient.")
class PublicationType:
    id: uuid.UUID = strawberry.field(description="Publication id (withdrawPublication takes it).")
    recipient_id: uuid.UUID = strawberry.field(description="The data recipient it is shared with.")
    pack_id: uuid.UUID = strawberry.field(description="The pack shared.")
    created_at: datetime = strawberry.field(description="When it was (last) published.")
    withdrawn_at: datetime | None = strawberry.field(description="When it was withdrawn; null: published.")


def recipient_type(recipient: DataRecipient) -> DataRecipientType:
    return DataRecipientType(
        id=recipient.id,
        name=recipient.name,
        client_id=recipient.client_id,
        created_at=as_aware(recipient.created_at) or recipient.created_at,
        revoked_at=as_aware(recipient.revoked_at),
        host=RecipientHostType(**found) if (found := sharing.host_json(recipient)) else None,
    )


def publication_type(publication: Publication) -> PublicationType:
    return PublicationType(
        id=publication.id,
        recipient_id=publication.recipient_id,
        pack_id=publication.report_pack_id,
        created_at=as_aware(publication.created_at) or publication.created_at,
        withdrawn_at=as_aware(publication.withdrawn_at),
    )


@strawberry.type(description="A new data recipient and the only copy of its client secret.")
class CreatedDataRecipient:
    recipient: DataRecipientType = strawberry.field(description="The stored recipient.")
    client_secret: str | None = strawberry.field(
        description="The client secret (evcs_…). Hand it to the customer: it is not shown again. Null in an "
        "Idempotency-Key replay (listed in the response's extensions.withheld)."
    )


@strawberry.type
class Query:
    @strawberry.field(description="The organisation's data recipients, revoked ones included, oldest first. Admin key.")
    async def data_recipients(self, info: GqlInfo) -> list[DataRecipientType]:
        return [recipient_type(r) for r in await sharing.list_recipients(info.context.ctx)]

    @strawberry.field(
        description="The organisation's publications (of one recipient when given), withdrawn ones included, "
        "oldest first. Admin key."
    )
    async def publications(
        self,
        info: GqlInfo,
        recipient_id: Annotated[
            uuid.UUID | None, strawberry.argument(description="Only this recipient's publications.")
        ] = None,
    ) -> list[PublicationType]:
        return [publication_type(p) for p in await sharing.list_publications(info.context.ctx, recipient_id)]


@strawberry.type
class Mutation:
    @strawberry.mutation(
        description="Make a data recipient with OAuth2 client credentials (admin key). The secret is answered once."
    )
    async def create_data_recipient(
        self, info: GqlInfo, name: Annotated[str, strawberry.argument(description="The customer's name.")]
    ) -> CreatedDataRecipient:
        created = await sharing.create_recipient(info.context.ctx, {"name": name})
        return CreatedDataRecipient(recipient=recipient_type(created.recipient), client_secret=created.client_secret)

    @strawberry.mutation(
        description="Revoke a data recipient's credentials (admin key): no new token, and its tokens are refused "
        "from the next request. Revoking again changes nothing."
    )
    async def revoke_data_recipient(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Data recipient id.")]
    ) -> DataRecipientType:
        return recipient_type(await sharing.revoke_recipient(info.context.ctx, id))

    @strawberry.mutation(
        description="Register the recipient's own PACT host and the client credentials this organisation holds for "
        "it (admin key): answers to its requests (RequestFulfilled / RequestRejected events) are sent there. The "
        "secret is stored to authenticate with and never shown again."
    )
    async def set_data_recipient_host(
        self,
        info: GqlInfo,
        id: Annotated[uuid.UUID, strawberry.argument(description="Data recipient id.")],
        url: Annotated[str, strawberry.argument(description="The host's base URL (http or https, public).")],
        client_id: Annotated[str, strawberry.argument(description="The client id its host issued to you.")],
        client_secret: Annotated[str, strawberry.argument(description="Its client secret.")],
        pact_version: Annotated[
            str | None, strawberry.argument(description="The PACT major it speaks: 2 or 3 (default 3).")
        ] = None,
    ) -> DataRecipientType:
        data = {"url": url, "client_id": client_id, "client_secret": client_secret}
        if pact_version is not None:
            data["pact_version"] = pact_version
        return recipient_type(await sharing.set_recipient_host(info.context.ctx, id, data))

    @strawberry.mutation(
        description="Forget the recipient's host and its credentials (admin key): its requests are no longer answered."
    )
    async def clear_data_recipient_host(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Data recipient id.")]
    ) -> DataRecipientType:
        return recipient_type(await sharing.clear_recipient_host(info.context.ctx, id))

    @strawberry.mutation(
        description="Share a pack with a data recipient (admin key): its iLEAP footprints and transport activity "
        "data become readable by that recipient. Publishing a published pack changes nothing."
    )
    async def publish_pack(
        self,
        info: GqlInfo,
        recipient_id: Annotated[uuid.UUID, strawberry.argument(description="The data recipient.")],
        pack_id: Annotated[uuid.UUID, strawberry.argument(description="The pack to share.")],
    ) -> PublicationType:
        data = {"recipient_id": str(recipient_id), "pack_id": str(pack_id)}
        return publication_type(await sharing.publish(info.context.ctx, data))

    @strawberry.mutation(
        description="Withdraw a publication (admin key): the pack is gone for the recipient from the next request."
    )
    async def withdraw_publication(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Publication id.")]
    ) -> PublicationType:
        return publication_type(await sharing.withdraw(info.context.ctx, id))
