"""API keys and the organisations they belong to."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.scoping import of_org
from evidence_gateway.models import ApiKey, Organization
from evidence_gateway.models.base import table_of
from evidence_gateway.store.record_types import ApiKeyRecord, OrganizationRecord
from evidence_gateway.store.records import new_record
from evidence_gateway.store.repositories.key_lookup import ApiKeyLookup
from evidence_gateway.store.repository import Repository


class ApiKeyRepository(ApiKeyLookup, Repository[ApiKey, ApiKeyRecord]):
    model = ApiKey
    record = ApiKeyRecord
    kind = "api_key"

    async def listed(self, session: AsyncSession) -> list[ApiKey]:
        """Every key of the caller's organisation, revoked ones included, oldest first."""
        stmt = self.get_readable_statement().order_by(col(ApiKey.created_at), col(ApiKey.id))
        return list((await session.execute(stmt)).scalars())

    @staticmethod
    async def named_by(
        session: AsyncSession, *, key_id: uuid.UUID | None, display_prefix: str | None, org_id: uuid.UUID | None
    ) -> list[ApiKey]:
        """The keys with this id or display prefix, within ``org_id`` when given: the operator's
        command line names a key before it knows the organisation, so this is not org-scoped."""
        stmt = select(ApiKey)
        if key_id is not None:
            stmt = stmt.where(col(ApiKey.id) == key_id)
        else:
            stmt = stmt.where(col(ApiKey.display_prefix) == display_prefix)
        if org_id is not None:
            stmt = stmt.where(of_org(org_id, ApiKey))
        return list((await session.execute(stmt)).scalars())


class OrganizationRepository:
    """Organisations are the scope itself, not rows in one: the operator's command line and
    start-up find them by name, across every organisation.

    Read and created as records by Core statements: ``serve`` makes the demo organisation and
    its key at start-up, and an ORM entity there would configure every mapper (about 1.5 MB) in
    a process that never needs them."""

    @staticmethod
    async def named(session: AsyncSession, name: str) -> OrganizationRecord | None:
        orgs = table_of(Organization)
        row = (await session.execute(select(*orgs.c).where(orgs.c.name == name))).first()
        return None if row is None else OrganizationRecord._make(row)

    @staticmethod
    async def named_for_change(session: AsyncSession, name: str) -> Organization | None:
        """The organisation as an entity, to change in ``session`` (its webhook signing secret)."""
        stmt = select(Organization).where(col(Organization.name) == name)
        return (await session.execute(stmt)).scalar_one_or_none()

    @staticmethod
    async def of_caller(session: AsyncSession, ctx: Ctx) -> Organization:
        """The caller's own organisation (its name and webhook signing secrets)."""
        stmt = select(Organization).where(col(Organization.id) == ctx.org_id)
        org: Organization = (await session.execute(stmt)).scalar_one()
        return org

    @staticmethod
    async def insert(session: AsyncSession, **values: Any) -> OrganizationRecord:
        record: OrganizationRecord = new_record(Organization, values)
        await session.execute(insert(table_of(Organization)).values(**record._asdict()))
        return record

    @staticmethod
    async def count(session: AsyncSession) -> int:
        stmt = select(func.count()).select_from(table_of(Organization))
        return int((await session.execute(stmt)).scalar_one())
