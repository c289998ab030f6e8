"""Reference data every database needs (methodology profiles, emission factors)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidence_gateway.db import Database


async def seed_reference_data(db: Database) -> None:
    """Insert seeded reference rows that are missing; idempotent across restarts and workers."""
    return
