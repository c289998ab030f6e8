"""Organisations and keys for the CLI and start-up (the demo organisation)."""

from __future__ import annotations

from typing import Any

from evidence_gateway.resolvers.keys import create_for_org
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import OrganizationRecord
from evidence_gateway.store.repositories.keys import OrganizationRepository
from evidence_gateway.webhooks.signing import new_webhook_secret

__all__ = ["create_api_key", "get_or_create_org", "new_webhook_secret", "organization_count"]


async def get_or_create_org(db: Database, name: str) -> OrganizationRecord:
    async with db.write() as session:
        org = await OrganizationRepository.named(session, name)
        if org is None:
            org = await OrganizationRepository.insert(session, name=name, webhook_signing_secret=new_webhook_secret())
    return org


async def create_api_key(db: Database, org_name: str, **options: Any) -> str:
    """Creates the organisation if new; returns the only copy of the key. ``options``: name,
    scope, expires_at (resolvers/keys.py)."""
    created = await create_for_org(db, org_name, options)
    return created.key


async def organization_count(db: Database) -> int:
    async with db.read() as session:
        return await OrganizationRepository.count(session)
