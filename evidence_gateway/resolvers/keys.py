"""API keys of an organisation: create (the key is returned once), list, revoke.

Two callers: the CLI names the organisation (it runs as the operator), GraphQL acts for the
calling key's organisation and needs an ``admin`` key. Both end in the same functions here, and
every creation and revocation is a unit of work with its event (``api_key.created``,
``api_key.revoked``: never the key or its hash).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, StringConstraints

from evidence_gateway.auth import KEY_PREFIX, Principal, Scope, generate_key, hash_key
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import as_aware, utcnow
from evidence_gateway.core.uow import UnitOfWork, unit_of_work
from evidence_gateway.errors import InvalidInput, NotFound
from evidence_gateway.models import ApiKey
from evidence_gateway.resolvers.validation import StrictInput, parse, parse_id
from evidence_gateway.settings import get_settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import ApiKeyRecord
from evidence_gateway.store.repositories.keys import ApiKeyRepository, OrganizationRepository
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

    api_key: ApiKeyRecord
    key: str


def _add_key(uow: UnitOfWork, org_id: uuid.UUID, p: KeyCreate) -> CreatedKey:
    """A new key in ``uow``, as a record: ``serve`` makes the demo key at start-up, and an ORM
    entity would configure every mapper in the serving process (store/repositories/keys.py)."""
    secret = generate_key()
    key: ApiKeyRecord = uow.insert(
        ApiKey,
        org_id=org_id,
        key_hash=hash_key(secret),
        display_prefix=secret[:DISPLAY_PREFIX_LENGTH],
        name=p.name or None,
        scope=Scope(p.scope).value,
        expires_at=p.expires_at,
    )
    created = CreatedKey(key, secret)
    uow.emit(EventType.api_key_created, "api_key", key.id, api_key_json(key))
    uow.respond(created, shown_once=(secret,))
    return created


async def create_for_org(db: Database, org_name: str, data: Any, *, create_org: bool = True) -> CreatedKey:
    """For the CLI: a key of the named organisation (created first, in the same unit of work,
    when new and allowed)."""
    p = parse(KeyCreate, data)
    async with db.read() as session:
        org = await OrganizationRepository.named(session, org_name)
    if org is None and not create_org:
        raise NotFound(f"no organisation named {org_name!r}")
    org_id = org.id if org is not None else uuid.uuid4()
    async with unit_of_work(_operator(db, org_id)) as uow:
        if org is None:
            await OrganizationRepository.insert(
                uow.session, id=org_id, name=org_name, webhook_signing_secret=new_webhook_secret()
            )
        return _add_key(uow, org_id, p)


def _operator(db: Database, org_id: uuid.UUID) -> Ctx:
    """The command line acting on an organisation: no key, so events show ``actor`` null."""
    return Ctx(db=db, settings=get_settings(), principal=Principal(org_id=org_id, key_id=None))


def api_key_json(key: ApiKey | ApiKeyRecord) -> dict[str, Any]:
    """An API key in its events: what tells it apart and what it may do, never the key or its hash."""
    return {
        "id": key.id,
        "display_prefix": key.display_prefix,
        "scope": key.scope,
        "expires_at": as_aware(key.expires_at),
        "created_at": as_aware(key.created_at),
        "revoked_at": as_aware(key.revoked_at),
    }


async def list_for_org(db: Database, org_name: str) -> list[ApiKey]:
    """For the CLI: every key of the named organisation, revoked ones included, oldest first."""
    async with db.read() as session:
        org = await OrganizationRepository.named(session, org_name)
        if org is None:
            raise NotFound(f"no organisation named {org_name!r}")
        return await ApiKeyRepository(_operator(db, org.id)).listed(session)


# What names a key on the command line besides its id: its display prefix (``evk_1a2b3c``) or
# the prefix log lines show (``key_prefix``: the 8 hex digits after ``evk_``, ``1a2b3c4d``), with
# or without ``evk_``. Only the display prefix is stored, so a longer one is matched on its
# first 6 digits and refused when two keys share them.
_KEY_PREFIX = re.compile(r"(?:evk_)?([0-9a-f]{6})[0-9a-f]{0,2}")


def _reference(reference: str) -> tuple[uuid.UUID | None, str | None]:
    """The key id, or else the display prefix, a reference names."""
    try:
        return uuid.UUID(reference), None
    except ValueError:
        pass
    found = _KEY_PREFIX.fullmatch(reference.strip().lower())
    if found is None:
        raise InvalidInput(
            f"{reference!r} is neither a key id nor a key prefix (evk_1a2b3c, or the key_prefix of a log line)",
            fields={"key": "not an id or prefix"},
        )
    return None, KEY_PREFIX + found.group(1)


async def revoke_by_reference(db: Database, reference: str, org_name: str | None = None) -> ApiKey:
    """For the CLI: revoke one key named by its id, its display prefix (``evk_1a2b3c``) or the
    ``key_prefix`` of a log line (``1a2b3c4d``).

    A prefix that several keys share is refused rather than guessed; the id is then needed.
    Revoking again changes nothing and is not an error.
    """
    key_id, display_prefix = _reference(reference)
    async with db.read() as session:
        org_id = None
        if org_name is not None:
            org = await OrganizationRepository.named(session, org_name)
            if org is None:
                raise NotFound(f"no organisation named {org_name!r}")
            org_id = org.id
        found = await ApiKeyRepository.named_by(session, key_id=key_id, display_prefix=display_prefix, org_id=org_id)
        if not found:
            raise NotFound(f"no API key with id or prefix {reference!r}")
        if len(found) > 1:
            raise InvalidInput(
                f"{len(found)} keys start with {found[0].display_prefix}, as {reference!r} does; "
                "revoke by id (keys list --org NAME)",
                fields={"key": "ambiguous prefix"},
            )
    return await _revoke(_operator(db, found[0].org_id), found[0].id)


async def list_keys(ctx: Ctx) -> list[ApiKey]:
    """The caller's organisation's keys (never the secrets, which are not stored)."""
    ctx.require(Scope.ADMIN)
    async with ctx.db.read() as session:
        return await ApiKeyRepository(ctx).listed(session)


async def create_key(ctx: Ctx, data: Any) -> CreatedKey:
    """A new key of the caller's organisation; an admin key can make keys of any scope."""
    ctx.require(Scope.ADMIN)
    p = parse(KeyCreate, data)
    async with unit_of_work(ctx) as uow:
        return _add_key(uow, ctx.org_id, p)


async def revoke_key(ctx: Ctx, key_id: Any) -> ApiKey:
    """Revoke one of the caller's organisation's keys (the calling key too, if asked).

    Every node refuses it once its key cache lapses (``EVIDENCE_AUTH_CACHE_SECONDS``).
    """
    ctx.require(Scope.ADMIN)
    return await _revoke(ctx, parse_id(key_id, "API key"), key_id)


async def _revoke(ctx: Ctx, kid: uuid.UUID, given: Any = None) -> ApiKey:
    """Revoking a revoked key changes nothing: no event, the key as it is."""
    async with unit_of_work(ctx) as uow:
        key = await ApiKeyRepository(ctx).load(uow.session, kid, for_update=True)
        if key is None:
            raise NotFound("API key not found", resource="api_key", id=str(given if given is not None else kid))
        if key.revoked_at is None:
            key.revoked_at = utcnow()
            uow.emit(EventType.api_key_revoked, "api_key", key.id, api_key_json(key))
        uow.respond(key)
    return key
