"""Methodology profiles and their factor versions' factors: seeded reference data.

Not org-scoped, and so no ``Repository`` subclass: every organisation reads the same profiles
and factors (the tables have no organisation column); what an organisation chose is its
workspace's ``methodology_profile_id``, which is scoped where the workspace is read.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.core.context import Ctx
from evidence_gateway.models import EmissionFactor, FactorVersion, MethodologyProfile


async def all_profiles(ctx: Ctx) -> list[MethodologyProfile]:
    """Every profile: default first, then by code."""
    stmt = select(MethodologyProfile).order_by(col(MethodologyProfile.is_default).desc(), MethodologyProfile.code)
    async with ctx.db.read() as session:
        return list((await session.execute(stmt)).scalars())


async def exists(session: AsyncSession, profile_id: uuid.UUID) -> bool:
    found = await session.execute(select(col(MethodologyProfile.id)).where(col(MethodologyProfile.id) == profile_id))
    return found.scalar_one_or_none() is not None


async def by_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, MethodologyProfile]:
    async with ctx.db.read() as session:
        found = await session.execute(select(MethodologyProfile).where(col(MethodologyProfile.id).in_(ids)))
        return {p.id: p for p in found.scalars()}


async def get(session: AsyncSession, profile_id: Any) -> MethodologyProfile | None:
    """The profile by id, in the caller's session (a unit of work's snapshot)."""
    return await session.get(MethodologyProfile, profile_id)


async def factor_rows(session: AsyncSession, factor_version_id: uuid.UUID) -> list[tuple[Any, str, str, Any, Any]]:
    """(id, kind, key, wtw_value, ttw_value) of every factor of a factor version."""
    found = await session.execute(
        select(
            col(EmissionFactor.id),
            col(EmissionFactor.kind),
            col(EmissionFactor.key),
            col(EmissionFactor.wtw_value),
            col(EmissionFactor.ttw_value),
        ).where(col(EmissionFactor.factor_version_id) == factor_version_id)
    )
    return [tuple(row) for row in found]  # type: ignore[misc]


async def factor_version(session: AsyncSession, version_id: Any) -> FactorVersion | None:
    return await session.get(FactorVersion, version_id)


async def factors_of(session: AsyncSession, version_id: Any) -> list[EmissionFactor]:
    """Every factor of a factor version as entities, by kind then key (a pack's methodology file)."""
    found = await session.execute(
        select(EmissionFactor)
        .where(col(EmissionFactor.factor_version_id) == version_id)
        .order_by(col(EmissionFactor.kind), col(EmissionFactor.key))
    )
    return list(found.scalars())
