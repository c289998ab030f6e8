"""Distance types, the ISO 14083 activity distance and the distance an intensity is per km of.

ISO 14083:2023 takes one distance basis for transport activity: the shortest feasible distance
(SFD) for surface modes and the great-circle distance (GCD) for air. Every row therefore gets:

- an **activity distance** (SFD, air GCD): what ``tonne_km`` and every g/t·km are on;
- an **actual distance**: given by the row, or estimated from the activity distance;
- an **emission distance**: the distance the intensity used is per km of. DESNZ freight
  intensities are per tonne-km actually driven or sailed (surface) and per great-circle
  tonne-km (air, with an 8 % uplift built in); a carrier intensity declares its basis.

Conversions (GLEC Framework v3 distance adjustment factors; CLECAT/UBA *Guide to ISO 14083*):
actual = SFD x DAF for surface modes (road 1.05, sea 1.15, rail and inland waterway 1.00:
there the route is the network, actual ~ SFD); air: GCD = actual - 95 km. A GCD given for a
surface mode is taken as its SFD and the run says so (``gcd_surface_mode``). Sources and the
rule are in docs/methodology.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from evidence_gateway.models import DistanceType

Q6 = Decimal("0.000001")

# GLEC Framework v3 distance adjustment factors: actual ~ SFD x DAF.
DAF: dict[str, Decimal] = {
    "road": Decimal("1.05"),
    "rail": Decimal("1.00"),
    "inland_waterway": Decimal("1.00"),
    "sea": Decimal("1.15"),
}
# GLEC Framework v3 / ISO 14083 for air: actual flown ~ GCD + 95 km.
AIR_GCD_CORRECTION_KM = Decimal(95)
# Which distance the activity is on, per mode (the ISO 14083 short report lists it).
ACTIVITY_BASIS: dict[str, str] = {
    "road": "sfd",
    "rail": "sfd",
    "inland_waterway": "sfd",
    "sea": "sfd",
    "air": "gcd",
}


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


@dataclass(frozen=True, slots=True)
class Distances:
    """The distances of one row (km, 6 decimals)."""

    activity: Decimal  # ISO 14083 activity distance: SFD (surface) or GCD (air)
    actual: Decimal  # given, or estimated from the activity distance
    actual_given: bool
    factor: Decimal  # DAF of the mode (air: 1; the 95 km correction is not a factor)
    surface_gcd: bool  # a GCD was given for a surface mode (taken as its SFD)
    air_too_short: bool  # an actual flight of 95 km or less: taken as its own GCD


def distances(distance: Decimal, mode: str, distance_type: str) -> Distances:
    actual_given = distance_type == DistanceType.actual.value
    if mode == "air":
        if actual_given:
            if distance > AIR_GCD_CORRECTION_KM:
                return Distances(distance - AIR_GCD_CORRECTION_KM, distance, True, Decimal(1), False, False)
            return Distances(distance, distance, True, Decimal(1), False, True)
        return Distances(distance, distance + AIR_GCD_CORRECTION_KM, False, Decimal(1), False, False)
    daf = DAF.get(mode, Decimal(1))
    if actual_given:
        sfd = distance if daf == 1 else (distance / daf).quantize(Q6)
        return Distances(sfd, distance, True, daf, False, False)
    actual = distance if daf == 1 else (distance * daf).quantize(Q6)
    return Distances(distance, actual, False, daf, distance_type == DistanceType.gcd.value, False)


def emission_distance(d: Distances, basis: str) -> Decimal:
    """The distance an intensity on ``basis`` is per km of: ``actual`` or ``sfd`` (air: the GCD).

    DESNZ mode defaults are on ``default_basis(mode)``.
    """
    return d.actual if basis == "actual" else d.activity


def default_basis(mode: str) -> str:
    """DESNZ freight intensities: per actual tonne-km (surface), per great-circle tonne-km (air)."""
    return "sfd" if mode == "air" else "actual"
