"""Distance types and the ISO 14083 / GLEC distance adjustment.

A default intensity is an average per tonne-km of a particular distance basis, so the activity
must be on that basis too (ISO 14083 calls the activity and the intensity "consistent"):

- road, rail, sea, inland waterway: DESNZ intensities are per tonne-km actually driven or
  sailed. An actual distance is used as it is; a shortest feasible distance (SFD) is raised by
  the GLEC distance adjustment factor (DAF) of the mode; a great-circle distance (GCD) is not a
  surface-transport basis, so it is treated like an SFD and the run says so (``gcd_surface_mode``).
- air: DESNZ freight-flight factors are per great-circle tonne-km and already include an 8 %
  uplift for indirect routing and stacking (DESNZ methodology paper, aviation). A GCD (or an
  SFD, which for a flight is the great circle) is used as it is; an actual flown distance is
  divided by 1.08 so that the uplift is not counted twice.

The factors are documented with their sources in docs/methodology.md.
"""

from __future__ import annotations

from decimal import Decimal

from evidence_gateway.models import DistanceType

Q6 = Decimal("0.000001")

# GLEC Framework v3 distance adjustment factors for a shortest feasible distance.
SFD_ADJUSTMENT: dict[str, Decimal] = {
    "road": Decimal("1.05"),
    "rail": Decimal("1.05"),
    "inland_waterway": Decimal("1.05"),
    "sea": Decimal("1.15"),
}
# Built into the DESNZ air freight factors (per great-circle km).
AIR_UPLIFT = Decimal("1.08")


def default_type(mode: str, distance_source: str | None) -> str:
    """The distance type a row without ``distance_type`` is taken to have.

    Air legs are conventionally exchanged as great-circle distances (airport to airport); other
    modes: a measured distance is the actual route, a modelled one a shortest feasible distance.
    """
    if mode == "air":
        return DistanceType.gcd.value
    if distance_source == "modelled":
        return DistanceType.sfd.value
    return DistanceType.actual.value


def adjustment(mode: str, distance_type: str) -> tuple[Decimal, bool]:
    """(multiplier onto the factor's basis, whether a surface mode was given a GCD)."""
    if mode == "air":
        if distance_type == DistanceType.actual.value:
            return Decimal(1) / AIR_UPLIFT, False
        return Decimal(1), False
    if distance_type == DistanceType.actual.value:
        return Decimal(1), False
    return SFD_ADJUSTMENT.get(mode, Decimal(1)), distance_type == DistanceType.gcd.value


def activity_distance(distance: Decimal, mode: str, distance_type: str) -> tuple[Decimal, Decimal, bool]:
    """The distance on the factor's basis (6 decimals, the value printed and used), its factor,
    and the GCD-on-a-surface-mode warning."""
    factor, surface_gcd = adjustment(mode, distance_type)
    if factor == 1:
        return distance, factor, surface_gcd
    return (distance * factor).quantize(Q6), factor, surface_gcd
