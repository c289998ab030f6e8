"""GraphQL for the organisation's API keys (an admin key's business): the same resolvers as
the CLI's ``keys`` commands."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.types import Info

from evidence_gateway.core.timeutil import as_aware
from evidence_gateway.models import ApiKey
from evidence_gateway.resolvers import keys
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.convert import input_to_dict
from evidence_gateway.store.record_types import ApiKeyRecord

GqlInfo = Info[GraphQLContext, None]


@strawberry.enum(description="What a key may do; each scope includes the ones before it.")
class ApiKeyScope(enum.Enum):
    read = strawberry.enum_value("read", description="Read everything of the organisation; change nothing.")
    write = strawberry.enum_value("write", description="Read and write data; no secrets, endpoints or keys.")
    admin = strawberry.enum_value("admin", description="Everything: webhook signing secrets and endpoints, API keys.")


@strawberry.type(name="ApiKey", description="An API key of the organisation. The key itself is never shown again.")
class ApiKeyType:
    id: uuid.UUID = strawberry.field(description="Key id (revokeApiKey takes it).")
    display_prefix: str = strawberry.field(description="The key's first characters (evk_ and 6 hex digits).")
    name: str | None = strawberry.field(description="A label for people; null: none given.")
    scope: ApiKeyScope = strawberry.field(description="read, write or admin.")
    created_at: datetime = strawberry.field(description="When it was made.")
    last_used_at: datetime | None = strawberry.field(
        description="Its last use, to the minute (recorded at most once a minute); null: never used."
    )
    expires_at: datetime | None = strawberry.field(description="After this it is refused; null: never expires.")
    revoked_at: datetime | None = strawberry.field(description="When it was revoked; null: not revoked.")


def key_type(key: ApiKey | ApiKeyRecord) -> ApiKeyType:
    return ApiKeyType(
        id=key.id,
        display_prefix=key.display_prefix,
        name=key.name,
        scope=ApiKeyScope(key.scope),
        created_at=as_aware(key.created_at) or key.created_at,
        last_used_at=as_aware(key.last_used_at),
        expires_at=as_aware(key.expires_at),
        revoked_at=as_aware(key.revoked_at),
    )


@strawberry.input(description="A new API key.")
class CreateApiKeyInput:
    name: str | None = strawberry.field(default=None, description="A label for people (at most 200 characters).")
    scope: ApiKeyScope = strawberry.field(default=ApiKeyScope.admin, description="What it may do (default admin).")
    expires_at: datetime | None = strawberry.field(
        default=None, description="When it stops working (in the future); null: never."
    )


@strawberry.type(description="A new key and its only copy of the secret.")
class CreatedApiKey:
    api_key: ApiKeyType = strawberry.field(description="The stored key.")
    key: str | None = strawberry.field(
        description="The key (evk_…). Store it: it is not shown again. Null in an Idempotency-Key replay "
        "(listed in the response's extensions.withheld): the key is never stored with the answer."
    )


@strawberry.type
class Query:
    @strawberry.field(description="The organisation's API keys, revoked ones included, oldest first. Admin key.")
    async def api_keys(self, info: GqlInfo) -> list[ApiKeyType]:
        return [key_type(k) for k in await keys.list_keys(info.context.ctx)]


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Make an API key of the organisation (admin key). The key is answered once.")
    async def create_api_key(
        self,
        info: GqlInfo,
        input: Annotated[CreateApiKeyInput, strawberry.argument(description="Name, scope and expiry of the new key.")],
    ) -> CreatedApiKey:
        created = await keys.create_key(info.context.ctx, input_to_dict(input))
        return CreatedApiKey(api_key=key_type(created.api_key), key=created.key)

    @strawberry.mutation(
        description="Revoke an API key of the organisation (admin key). Every node refuses it "
        "within EVIDENCE_AUTH_CACHE_SECONDS. Revoking a revoked key changes nothing."
    )
    async def revoke_api_key(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="API key id.")]
    ) -> ApiKeyType:
        return key_type(await keys.revoke_key(info.context.ctx, id))
