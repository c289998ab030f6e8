"""What a data recipient may read: its live publications' packs, as PACT ProductFootprints and
iLEAP Transport Activity Data.

The caller is a recipient, never an API key: its context is its organisation's with ``read``
scope, so every statement is scoped to that organisation by construction, and the publications
read are that recipient's alone. A pack's stored iLEAP document never changes once generated
(its content hash names it), so what it maps to is kept per process, keyed by that hash.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import orjson

from evidence_gateway.auth import Principal, Scope
from evidence_gateway.core.context import Ctx
from evidence_gateway.exchange import auth
from evidence_gateway.exchange.footprints import Footprint, PackSource, product_footprints
from evidence_gateway.exchange.tad import row_facts_from_shipment_csv, transport_activity_data
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.sharing import (
    DataRecipientRepository,
    PublicationRepository,
    PublishedPack,
    artifact_bytes,
    rows_file,
)
from evidence_gateway.web.observability import access

# Mapped packs kept per process (each a list of footprints and activity rows).
CACHE_ENTRIES = 64


class PactError(Exception):
    """An error answer as PACT writes them: ``{"code": ..., "message": ...}`` with its status."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message

    def body(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


def bad_request(message: str) -> PactError:
    return PactError(400, "BadRequest", message)


def not_implemented(message: str) -> PactError:
    # PACT v2 and v3 both list NotImplemented with HTTP 400 in their error table.
    return PactError(400, "NotImplemented", message)


@dataclass(frozen=True, slots=True)
class Recipient:
    """The caller of the exchange routes, from a verified access token."""

    recipient_id: uuid.UUID
    org_id: uuid.UUID
    client_id: str
    # The recipient's own host (base URL), where answers to its requests go; None: not set.
    host_url: str | None = None


async def authenticate_client(db: Database, client_id: str, secret: str) -> Recipient | None:
    """The live recipient these client credentials belong to, or None: malformed, unknown,
    revoked and wrong-secret credentials are refused alike (one constant-time comparison)."""
    if not auth.well_formed_client(client_id, secret):
        return None
    row = await DataRecipientRepository.live_by_client_id(db, client_id)
    if row is None or not auth.secret_matches(secret, row.secret_hash):
        return None
    return Recipient(row.id, row.org_id, row.client_id, row.host_url)


async def live_recipient(db: Database, claims: auth.Claims) -> Recipient | None:
    """The recipient a verified token names, unless revoked since (or not the token's organisation's)."""
    row = await DataRecipientRepository.live_by_id(db, claims.recipient_id)
    if row is None or row.org_id != claims.org_id:
        return None
    return Recipient(row.id, row.org_id, row.client_id, row.host_url)


def note_caller(recipient: Recipient) -> None:
    """Log lines name the organisation and the client id's first hex digits, never a token."""
    access.note_caller(recipient.org_id, "rcp_" + recipient.client_id.removeprefix(auth.CLIENT_ID_PREFIX))


def recipient_ctx(db: Database, settings: Settings, recipient: Recipient, request_id: str | None) -> Ctx:
    """The recipient acting within the publishing organisation's scope, read-only."""
    principal = Principal(org_id=recipient.org_id, key_id=None, scope=Scope.READ)
    return Ctx(db=db, settings=settings, principal=principal, request_id=request_id)


@dataclass(frozen=True, slots=True)
class Mapped:
    footprints: list[Footprint]
    activity: list[dict[str, Any]]


_cache: OrderedDict[tuple[uuid.UUID, str, str], Mapped] = OrderedDict()


async def _mapped(ctx: Ctx, pack: PublishedPack) -> Mapped:
    key = (pack.pack_id, pack.artifact.content_sha256 or "", pack.organization_name)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    document = orjson.loads(await artifact_bytes(ctx.db, pack.artifact))
    shipments = await rows_file(ctx.db, pack)
    facts = row_facts_from_shipment_csv(await artifact_bytes(ctx.db, shipments)) if shipments else {}
    source = dataclasses.replace(pack_source(pack, document), rows=facts)
    made = Mapped(product_footprints(source), transport_activity_data(source))
    _cache[key] = made
    while len(_cache) > CACHE_ENTRIES:
        _cache.popitem(last=False)
    return made


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time.min, UTC)


def pack_source(pack: PublishedPack, document: dict[str, Any]) -> PackSource:
    """The mapping's input. The reference period is the workspace's reporting period, its end
    exclusive (midnight after the last day, as PACT's ``referencePeriodEnd`` is); a workspace
    without one is taken as the calendar year up to the pack's creation."""
    created = pack.created_at if pack.created_at.tzinfo else pack.created_at.replace(tzinfo=UTC)
    start = _midnight(pack.period_start) if pack.period_start else datetime(created.year, 1, 1, tzinfo=UTC)
    end = _midnight(pack.period_end) + timedelta(days=1) if pack.period_end else created
    if end <= start:
        end = start + timedelta(days=1)
    return PackSource(
        pack_id=pack.pack_id,
        pack_version=pack.version_number,
        pack_hash=pack.pack_hash or "",
        organization_id=pack.organization_id,
        organization_name=pack.organization_name,
        created=created,
        period_start=start,
        period_end=end,
        ileap=document,
    )


async def _all(ctx: Ctx, recipient: Recipient) -> list[Mapped]:
    packs = await PublicationRepository(ctx).published_packs(recipient.recipient_id)
    return [await _mapped(ctx, pack) for pack in packs]


async def footprints(ctx: Ctx, recipient: Recipient) -> list[Footprint]:
    """Every footprint the recipient may read, in publication order, each id once (a pack
    published twice is one pack)."""
    seen: set[uuid.UUID] = set()
    out: list[Footprint] = []
    for mapped in await _all(ctx, recipient):
        for footprint in mapped.footprints:
            if footprint.id not in seen:
                seen.add(footprint.id)
                out.append(footprint)
    return out


async def footprint(ctx: Ctx, recipient: Recipient, footprint_id: uuid.UUID) -> Footprint | None:
    """One footprint the recipient may read; another recipient's or organisation's is None."""
    return next((f for f in await footprints(ctx, recipient) if f.id == footprint_id), None)


async def pack_footprint_ids(ctx: Ctx, recipient: Recipient, pack_id: uuid.UUID) -> list[uuid.UUID] | None:
    """The ids of one pack's footprints, None when the pack is not (or no longer) published to it."""
    for pack in await PublicationRepository(ctx).published_packs(recipient.recipient_id):
        if pack.pack_id == pack_id:
            return [f.id for f in (await _mapped(ctx, pack)).footprints]
    return None


async def activity(ctx: Ctx, recipient: Recipient) -> list[dict[str, Any]]:
    """Every Transport Activity Data row of the recipient's published packs."""
    return [row for mapped in await _all(ctx, recipient) for row in mapped.activity]
