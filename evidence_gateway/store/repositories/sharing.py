"""Data recipients, their publications, the packs those publish, and the exchange's signing key.

Two kinds of caller: the organisation's admin (``Ctx``: its own recipients and publications, by
construction), and a recipient's access token, which is checked before there is a context (the
lookups by client id and by recipient id, not org-scoped: they are how the organisation is found).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Table, and_, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core.scoping import owned
from evidence_gateway.models import (
    ArtifactStatus,
    ArtifactType,
    DataRecipient,
    ExchangeSigningKey,
    Organization,
    PackArtifact,
    Publication,
    ReportPack,
    Workspace,
)
from evidence_gateway.models.base import table_of
from evidence_gateway.store import artifact_files
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import DataRecipientRecord, PackArtifactRecord, PublicationRecord
from evidence_gateway.store.repository import Repository
from evidence_gateway.store.scoped import rows

_RECIPIENT: Table = table_of(DataRecipient)
_PUBLICATION: Table = table_of(Publication)
_PACK: Table = table_of(ReportPack)
_WORKSPACE: Table = table_of(Workspace)
_ORG: Table = table_of(Organization)
_ARTIFACT: Table = table_of(PackArtifact)
_KEY: Table = table_of(ExchangeSigningKey)

_LIVE_BY_CLIENT = select(*_RECIPIENT.c).where(
    _RECIPIENT.c.client_id == bindparam("client_id"), _RECIPIENT.c.revoked_at.is_(None)
)
_LIVE_BY_ID = select(*_RECIPIENT.c).where(
    _RECIPIENT.c.id == bindparam("recipient_id"), _RECIPIENT.c.revoked_at.is_(None)
)
# What a recipient may see: its live publications' packs, each with the iLEAP document's
# artifact row, the workspace's reporting period and the publishing organisation's name. The
# organisation is bound (owned) like every scoped read, so a recipient id of another
# organisation finds nothing.
_PUBLISHED = (
    select(
        _PACK.c.id.label("pack_id"),
        _PACK.c.version_number,
        _PACK.c.pack_hash,
        _PACK.c.created_at,
        _WORKSPACE.c.reporting_period_start,
        _WORKSPACE.c.reporting_period_end,
        _ORG.c.id.label("organization_id"),
        _ORG.c.name.label("organization_name"),
        *(c.label(f"artifact_{c.key}") for c in _ARTIFACT.c),
    )
    .select_from(_PUBLICATION)
    .join(_PACK, _PACK.c.id == _PUBLICATION.c.report_pack_id)
    .join(_WORKSPACE, _WORKSPACE.c.id == _PACK.c.workspace_id)
    .join(_ORG, _ORG.c.id == _PUBLICATION.c.org_id)
    .join(
        _ARTIFACT,
        and_(
            _ARTIFACT.c.report_pack_id == _PACK.c.id,
            _ARTIFACT.c.artifact_type == ArtifactType.ileap_shipment_footprints.value,
            _ARTIFACT.c.status == ArtifactStatus.generated.value,
        ),
    )
    .where(
        owned(_PUBLICATION),
        _PUBLICATION.c.recipient_id == bindparam("recipient_id"),
        _PUBLICATION.c.withdrawn_at.is_(None),
        _PACK.c.org_id == _PUBLICATION.c.org_id,
    )
    .order_by(_PUBLICATION.c.created_at, _PUBLICATION.c.id)
)


@dataclass(frozen=True, slots=True)
class PublishedPack:
    """A pack a recipient may read, with what the exchange mapping needs besides its document."""

    pack_id: uuid.UUID
    version_number: int
    pack_hash: str | None
    created_at: datetime
    period_start: date | None
    period_end: date | None
    organization_id: uuid.UUID
    organization_name: str
    artifact: PackArtifactRecord


class DataRecipientRepository(Repository[DataRecipient, DataRecipientRecord]):
    model = DataRecipient
    record = DataRecipientRecord
    kind = "data_recipient"

    async def listed(self, session: AsyncSession) -> list[DataRecipient]:
        """Every recipient of the caller's organisation, revoked ones included, oldest first."""
        stmt = self.get_readable_statement().order_by(col(DataRecipient.created_at), col(DataRecipient.id))
        return list((await session.execute(stmt)).scalars())

    @staticmethod
    async def live_by_client_id(db: Database, client_id: str) -> DataRecipientRecord | None:
        """The unrevoked recipient with this OAuth2 client id, of whichever organisation."""
        found = await db.fetch(_LIVE_BY_CLIENT, {"client_id": client_id})
        return DataRecipientRecord._make(found[0]) if found else None

    @staticmethod
    async def live_by_id(db: Database, recipient_id: uuid.UUID) -> DataRecipientRecord | None:
        """The recipient an access token names, unless revoked since the token was issued."""
        found = await db.fetch(_LIVE_BY_ID, {"recipient_id": recipient_id})
        return DataRecipientRecord._make(found[0]) if found else None


class PublicationRepository(Repository[Publication, PublicationRecord]):
    model = Publication
    record = PublicationRecord
    kind = "publication"

    async def listed(self, session: AsyncSession, recipient_id: uuid.UUID | None = None) -> list[Publication]:
        """The caller's publications (of one recipient when given), withdrawn ones included, oldest first."""
        stmt = self.get_readable_statement()
        if recipient_id is not None:
            stmt = stmt.where(col(Publication.recipient_id) == recipient_id)
        stmt = stmt.order_by(col(Publication.created_at), col(Publication.id))
        return list((await session.execute(stmt)).scalars())

    async def of_pair(
        self, session: AsyncSession, recipient_id: uuid.UUID, pack_id: uuid.UUID, *, for_update: bool = False
    ) -> Publication | None:
        """The one row of (recipient, pack), published or withdrawn."""
        stmt = self.get_readable_statement().where(
            col(Publication.recipient_id) == recipient_id, col(Publication.report_pack_id) == pack_id
        )
        if for_update:
            stmt = stmt.with_for_update().execution_options(populate_existing=True)
        found: Publication | None = (await session.execute(stmt)).scalar_one_or_none()
        return found

    async def published_packs(self, recipient_id: uuid.UUID) -> list[PublishedPack]:
        """The packs published to this recipient and not withdrawn, oldest publication first."""
        found = await rows(self.ctx, _PUBLISHED, recipient_id=recipient_id)
        return [_published(row) for row in found]


def _published(row: Any) -> PublishedPack:
    # By position: PostgreSQL's fast path answers plain rows, SQLite's SQLAlchemy rows.
    values = tuple(row)
    names = [f for f in PublishedPack.__dataclass_fields__ if f != "artifact"]
    return PublishedPack(**dict(zip(names, values, strict=False)), artifact=PackArtifactRecord._make(values[8:]))


_ROWS_FILE = select(*_ARTIFACT.c).where(
    _ARTIFACT.c.report_pack_id == bindparam("pack_id"),
    _ARTIFACT.c.artifact_type == ArtifactType.shipment_csv.value,
    _ARTIFACT.c.status == ArtifactStatus.generated.value,
)


async def rows_file(db: Database, pack: PublishedPack) -> PackArtifactRecord | None:
    """The shipment CSV of a pack ``published_packs`` gave (so already the recipient's to read):
    the places and dates of its rows, which the iLEAP file does not carry and TAD needs."""
    found = await db.fetch(_ROWS_FILE, {"pack_id": pack.pack_id})
    return PackArtifactRecord._make(tuple(found[0])) if found else None


async def artifact_bytes(db: Database, artifact: PackArtifactRecord) -> bytes:
    """A published pack's stored file, whatever its size (its document is parsed whole anyway)."""
    entity = PackArtifact(**artifact._asdict())
    if entity.size_bytes and entity.size_bytes <= artifact_files.WHOLE_BYTES:
        return await artifact_files.read_whole(db, entity)
    return b"".join([piece async for piece in _slices(db, entity)])


def _slices(db: Database, entity: PackArtifact) -> AsyncIterator[bytes]:
    return artifact_files.read_slices(db, entity)


async def signing_key(db: Database, name: str, kid: str, pem: str) -> tuple[str, str]:
    """The installation's key ``name`` as (kid, PEM), storing the candidate if none is kept yet;
    concurrent first calls race on the primary key and all read the winner's."""
    async with db.write() as session:
        await session.execute(db.insert_or_nothing(_KEY).values(name=name, kid=kid, private_key_pem=pem))
        stored = (await session.execute(select(_KEY.c.kid, _KEY.c.private_key_pem).where(_KEY.c.name == name))).one()
    return str(stored.kid), str(stored.private_key_pem)


async def stored_signing_key(db: Database, name: str) -> tuple[str, str] | None:
    """The key ``name`` if one is kept (no write: the JWKS endpoint reads)."""
    found = await db.fetch(
        select(_KEY.c.kid, _KEY.c.private_key_pem).where(_KEY.c.name == bindparam("name")), {"name": name}
    )
    return (str(found[0].kid), str(found[0].private_key_pem)) if found else None
