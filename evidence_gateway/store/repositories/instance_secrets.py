"""The installation's own secrets (core/instance_secrets.py). Not org-scoped: a secret belongs
to the installation, shared by every organisation, worker and node."""

from __future__ import annotations

from sqlalchemy import select

from evidence_gateway.models import InstanceSecret
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database

_TABLE = table_of(InstanceSecret)


async def keep_first(db: Database, name: str, candidate: str) -> tuple[str, bool]:
    """The secret ``name``, storing ``candidate`` if none is kept yet; and whether it was stored.
    Concurrent first calls race on the primary key: the first insert wins, the others read it."""
    async with db.write() as session:
        made = await session.execute(db.insert_or_nothing(_TABLE).values(name=name, value=candidate))
        stored = await session.execute(select(_TABLE.c.value).where(_TABLE.c.name == name))
        value = str(stored.scalar_one())
    return value, bool(getattr(made, "rowcount", 0))
