"""Methodology profiles and their factor sets (seeded reference data, shared by all organisations)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.calculation import Factor, FactorSet
from evidence_gateway.calculation.engine import dec
from evidence_gateway.calculation.factors import DEFAULT_PROFILE_ID
from evidence_gateway.core.context import Ctx
from evidence_gateway.errors import InternalError
from evidence_gateway.models import MethodologyProfile
from evidence_gateway.store.repositories import methodology as profiles


async def list_profiles(ctx: Ctx) -> list[MethodologyProfile]:
    """Default profile first, then by code."""
    return await profiles.all_profiles(ctx)


async def profile_exists(session: AsyncSession, profile_id: uuid.UUID) -> bool:
    return await profiles.exists(session, profile_id)


async def profiles_by_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, MethodologyProfile]:
    return await profiles.by_ids(ctx, ids)


async def resolve_profile(session: AsyncSession, profile_id: Any) -> MethodologyProfile:
    """The workspace's profile, else the seeded default."""
    wanted = profile_id or DEFAULT_PROFILE_ID
    profile = await profiles.get(session, wanted)
    if profile is None:
        profile = await profiles.get(session, DEFAULT_PROFILE_ID)
    if profile is None:  # reference data missing: a deployment fault, not the caller's
        raise InternalError("methodology reference data is missing")
    return profile


async def load_factor_set(session: AsyncSession, profile: MethodologyProfile) -> FactorSet:
    """Both columns of every factor of the profile's version, as the decimals that were seeded."""
    tables: dict[str, dict[str, Factor]] = {"mode": {}, "fuel": {}, "grid": {}}
    for factor_id, kind, key, wtw_value, ttw_value in await profiles.factor_rows(session, profile.factor_version_id):
        ttw = dec(ttw_value)
        tables.get(kind, tables["fuel"])[key] = Factor(ttw=ttw, wtt=dec(wtw_value) - ttw, id=factor_id)
    return FactorSet(
        boundary=headline_boundary(profile.boundary),
        modes=tables["mode"],
        fuels=tables["fuel"],
        grids=tables["grid"],
    )


def headline_boundary(boundary: str) -> str:
    """A profile's headline boundary: WTW, or TTW for anything else."""
    return "WTW" if boundary.upper() == "WTW" else "TTW"
