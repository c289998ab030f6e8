"""API keys of an organisation: create (the key is returned once), list, revoke.

Two callers: the CLI names the organisation (it runs as the operator), GraphQL acts for the
calling key's organisation and needs an ``admin`` key. Both end in the same functions here.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, StringConstraints
from sqlalchemy import ColumnElement, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.auth import KEY_PREFIX, Scope, generate_key, hash_key
from evidence_gateway.context import Ctx
from evidence_gateway.db import Database
from evidence_gateway.errors import InvalidInput, NotFound
from evidence_gateway.models import ApiKey, Organization
from evidence_gateway.resolvers.validation import StrictInput, parse, parse_id
from evidence_gateway.scoping import of_org, readable
from evidence_gateway.timeutil import as_aware, utcnow
from evidence_gateway.webhooks.signing import new_webhook_secret

# What `keys create` gives without --scope: what every key could do before scopes existed,
# so scripts written then keep working. Hand out narrower keys on purpose.
DEFAULT_SCOPE = Scope.ADMIN
# "evk_" and 6 hex digits: enough to tell a handful of keys apart, useless to an attacker.
DISPLAY_PREFIX_LENGTH = 10


def _future(value: datetime | None) -> datetime | None:
    value = as_aware(value)
    if value is not None and value <= utcnow():
        raise ValueError("must be in the future")
    return value


class KeyCreate(StrictInput):
    name: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = None
    scope: Literal["read", "write", "admin"] = DEFAULT_SCOPE.value
    expires_at: Annotated[datetime | None, AfterValidator(_future)] = None


@dataclass(frozen=True, slots=True)
class CreatedKey:
    """The stored key and the only copy of its secret."""

    api_key: ApiKey
    key: str


async def _org_named(session: AsyncSession, name: str) -> Organization | None:
    stmt = select(Organization).where(col(Organization.name) == name)
    return (await session.execute(stmt)).scalar_one_or_none()


def _new_key(org_id: uuid.UUID, p: KeyCreate) -> CreatedKey:
    key = generate_key()
    row = ApiKey(
        org_id=org_id,
        key_hash=hash_key(key),
        display_prefix=key[:DISPLAY_PREFIX_LENGTH],
        name=p.name or None,
        scope=Scope(p.scope).value,
        expires_at=p.expires_at,
    )
    return CreatedKey(row, key)


async def create_for_org(db: Database, org_name: str, data: Any, *, create_org: bool = True) -> CreatedKey:
    """For the CLI: a key of the named organisation (created first when new and allowed)."""
    p = parse(KeyCreate, data)
    async with db.write() as session:
        org = await _org_named(session, org_name)
        if org is None:
            if not create_org:
                raise NotFound(f"no organisation named {org_name!r}")
            org = Organization(name=org_name, webhook_signing_secret=new_webhook_secret())
            session.add(org)
            await session.flush()
        created = _new_key(org.id, p)
        session.add(created.api_key)
    return created


async def list_for_org(db: Database, org_name: str) -> list[ApiKey]:
    """For the CLI: every key of the named organisation, revoked ones included, oldest first."""
    async with db.read() as session:
        org = await _org_named(session, org_name)
        if org is None:
            raise NotFound(f"no organisation named {org_name!r}")
        return await _keys_of(session, org.id)


# What names a key on the command line besides its id: its display prefix (``evk_1a2b3c``) or
# the prefix log lines show (``key_prefix``: the 8 hex digits after ``evk_``, ``1a2b3c4d``), with
# or without ``evk_``. Only the display prefix is stored, so a longer one is matched on its
# first 6 digits and refused when two keys share them.
_KEY_PREFIX = re.compile(r"(?:evk_)?([0-9a-f]{6})[0-9a-f]{0,2}")


def _reference(reference: str) -> ColumnElement[bool]:
    try:
        return col(ApiKey.id) == uuid.UUID(reference)
    except ValueError:
        pass
    found = _KEY_PREFIX.fullmatch(reference.strip().lower())
    if found is None:
        raise InvalidInput(
            f"{reference!r} is neither a key id nor a key prefix (evk_1a2b3c, or the key_prefix of a log line)",
            fields={"key": "not an id or prefix"},
        )
    return col(ApiKey.display_prefix) == KEY_PREFIX + found.group(1)


async def revoke_by_reference(db: Database, reference: str, org_name: str | None = None) -> ApiKey:
    """For the CLI: revoke one key named by its id, its display prefix (``evk_1a2b3c``) or the
    ``key_prefix`` of a log line (``1a2b3c4d``).

    A prefix that several keys share is refused rather than guessed; the id is then needed.
    Revoking again changes nothing and is not an error.
    """
    where = _reference(reference)
    async with db.write() as session:
        stmt = select(ApiKey).where(where)
        if org_name is not None:
            org = await _org_named(session, org_name)
            if org is None:
                raise NotFound(f"no organisation named {org_name!r}")
            stmt = stmt.where(of_org(org.id, ApiKey))
        found = list((await session.execute(stmt.with_for_update())).scalars())
        if not found:
            raise NotFound(f"no API key with id or prefix {reference!r}")
        if len(found) > 1:
            raise InvalidInput(
                f"{len(found)} keys start with {found[0].display_prefix}, as {reference!r} does; "
                "revoke by id (keys list --org NAME)",
                fields={"key": "ambiguous prefix"},
            )
        key = found[0]
        if key.revoked_at is None:
            key.revoked_at = utcnow()
    return key


async def _keys_of(session: AsyncSession, org_id: uuid.UUID) -> list[ApiKey]:
    stmt = select(ApiKey).where(of_org(org_id, ApiKey)).order_by(col(ApiKey.created_at), col(ApiKey.id))
    return list((await session.execute(stmt)).scalars())


async def list_keys(ctx: Ctx) -> list[ApiKey]:
    """The caller's organisation's keys (never the secrets, which are not stored)."""
    ctx.require(Scope.ADMIN)
    async with ctx.db.read() as session:
        return await _keys_of(session, ctx.org_id)


async def create_key(ctx: Ctx, data: Any) -> CreatedKey:
    """A new key of the caller's organisation; an admin key can make keys of any scope."""
    ctx.require(Scope.ADMIN)
    p = parse(KeyCreate, data)
    created = _new_key(ctx.org_id, p)
    async with ctx.db.write() as session:
        session.add(created.api_key)
    return created


async def revoke_key(ctx: Ctx, key_id: Any) -> ApiKey:
    """Revoke one of the caller's organisation's keys (the calling key too, if asked).

    Every node refuses it once its key cache lapses (``EVIDENCE_AUTH_CACHE_SECONDS``).
    """
    ctx.require(Scope.ADMIN)
    kid = parse_id(key_id, "API key")
    async with ctx.db.write() as session:
        stmt = readable(ctx, ApiKey).where(col(ApiKey.id) == kid).with_for_update()
        key = (await session.execute(stmt)).scalar_one_or_none()
        if key is None:
            raise NotFound("API key not found", resource="api_key", id=str(key_id))
        if key.revoked_at is None:
            key.revoked_at = utcnow()
    return key
