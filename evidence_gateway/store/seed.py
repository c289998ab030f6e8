"""Reference data every database needs (methodology profiles, emission factors)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table, update

from evidence_gateway.calculation import factors as f
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import EmissionFactor, FactorVersion, MethodologyProfile
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database
from evidence_gateway.store.dialect_insert import insert_for


def _rows() -> list[tuple[Table, list[dict[str, Any]]]]:
    now = utcnow()
    version = {
        "id": f.FACTOR_VERSION_ID,
        "code": f.FACTOR_VERSION_CODE,
        "name": f.FACTOR_VERSION_NAME,
        "source": f.FACTOR_VERSION_SOURCE,
        "published_on": f.FACTOR_VERSION_PUBLISHED_ON,
        "created_at": now,
    }
    factor_rows = [
        {
            "id": f.factor_id(row.kind, row.key),
            "factor_version_id": f.FACTOR_VERSION_ID,
            "kind": row.kind,
            "key": row.key,
            "unit": row.unit,
            "wtw_value": float(row.wtw),
            "ttw_value": float(row.ttw),
            "source": row.source,
            "note": row.note,
            "dataset": row.dataset,
            "dataset_version": row.dataset_version,
            "source_row_id": row.source_row_id,
        }
        for row in f.ALL_FACTORS
    ]
    profiles = [
        {
            "id": p.id,
            "code": p.code,
            "name": p.name,
            "description": p.description,
            "boundary": p.boundary,
            "factor_version_id": f.FACTOR_VERSION_ID,
            "is_default": p.is_default,
            "created_at": now,
        }
        for p in f.PROFILES
    ]
    return [
        (table_of(FactorVersion), [version]),
        (table_of(EmissionFactor), factor_rows),
        (table_of(MethodologyProfile), profiles),
    ]


async def seed_reference_data(db: Database) -> None:
    """Insert seeded reference rows that are missing; idempotent across restarts and workers."""
    dialect_insert = insert_for(db.is_sqlite)
    async with db.write() as session:
        for table, rows in _rows():
            # Fixed ids + ON CONFLICT DO NOTHING: concurrent workers insert the same rows once.
            await session.execute(dialect_insert(table).on_conflict_do_nothing(), rows)
        # A new factor edition moves the seeded profiles onto it; runs keep the version they used.
        # A Core statement on the table: an ORM one would configure every mapper at start-up.
        profiles = table_of(MethodologyProfile)
        for profile in f.PROFILES:
            await session.execute(
                update(profiles)
                .where(profiles.c.id == profile.id)
                .values(factor_version_id=f.FACTOR_VERSION_ID, description=profile.description)
            )
