"""Per-shipment CO2e by the best data available, totals, and the data-quality assessment.

Plain Python over tuples: 50,000 rows take a fraction of a second. Deterministic: the
same rows and factors always give the same numbers in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from evidence_gateway.calculation import quality

ENGINE_VERSION = "1"
TIERS = ("primary", "secondary", "default", "modelled")
# A carrier intensity more than 10x above or below the mode default is taken as a unit error.
INTENSITY_RATIO_LIMIT = 10.0


class ShipmentInput(NamedTuple):
    """One stored shipment row, in the column order the resolver selects."""

    id: Any
    row_index: int
    mode: str | None
    distance_km: float | None
    mass_tonnes: float | None
    fuel_type: str | None
    fuel_amount: float | None
    carrier_intensity_g_per_tkm: float | None
    distance_source: str | None


@dataclass(frozen=True, slots=True)
class FactorSet:
    """Factors of one boundary (WTW or TTW): g CO2e/tkm per mode, kg CO2e/unit per fuel."""

    boundary: str
    mode_g_per_tkm: dict[str, float]
    fuel_kg_per_unit: dict[str, float]


@dataclass(slots=True)
class EngineResult:
    # Per row: (shipment_id, row_index, included, tier, tonne_km, co2e_kg, intensity_g_per_tkm, flags)
    rows: list[tuple[Any, int, bool, str | None, float | None, float | None, float | None, str | None]]
    total_co2e_kg: float
    total_tonne_km: float
    usable_count: int
    missing_count: int
    flagged_count: int
    tier_counts: dict[str, int]
    totals_by_mode: dict[str, dict[str, float | int]]
    flag_counts: dict[str, int] = field(default_factory=dict)


def calculate(rows: Iterable[ShipmentInput], factors: FactorSet) -> EngineResult:
    modes = factors.mode_g_per_tkm
    fuels = factors.fuel_kg_per_unit
    out: list[tuple[Any, int, bool, str | None, float | None, float | None, float | None, str | None]] = []
    tier_counts = dict.fromkeys(TIERS, 0)
    flag_counts: dict[str, int] = {}
    by_mode: dict[str, list[float]] = {}
    total_co2e = 0.0
    total_tkm = 0.0
    usable = missing = flagged = 0
    append = out.append
    for r in rows:
        mode, distance, mass = r.mode, r.distance_km, r.mass_tonnes
        if mode is None or distance is None or mass is None or mode not in modes:
            missing += 1
            append((r.id, r.row_index, False, None, None, None, None, quality.MISSING_FLAG))
            continue
        flags: list[str] = []
        if distance == 0:
            flags.append(quality.ZERO_DISTANCE)
        if mass == 0:
            flags.append(quality.ZERO_MASS)
        tkm = distance * mass
        default = modes[mode]
        carrier = r.carrier_intensity_g_per_tkm
        if r.fuel_type is not None and r.fuel_amount is not None and r.fuel_type in fuels:
            tier = "primary"
            co2e = r.fuel_amount * fuels[r.fuel_type]
        elif (
            carrier is not None
            and default > 0
            and not (default / INTENSITY_RATIO_LIMIT <= carrier <= default * INTENSITY_RATIO_LIMIT)
        ):
            # Far outside the mode's range: flagged, and the mode default is used instead.
            flags.append(quality.INTENSITY_OUT_OF_RANGE)
            tier = "modelled" if r.distance_source == "modelled" else "default"
            co2e = tkm * default / 1000.0
        elif carrier is not None:
            tier = "secondary"
            co2e = tkm * carrier / 1000.0
        else:
            tier = "modelled" if r.distance_source == "modelled" else "default"
            co2e = tkm * default / 1000.0
        usable += 1
        tier_counts[tier] += 1
        if flags:
            flagged += 1
            for f in flags:
                flag_counts[f] = flag_counts.get(f, 0) + 1
        total_co2e += co2e
        total_tkm += tkm
        acc = by_mode.get(mode)
        if acc is None:
            acc = by_mode[mode] = [0.0, 0.0, 0]
        acc[0] += co2e
        acc[1] += tkm
        acc[2] += 1
        intensity = co2e * 1000.0 / tkm if tkm > 0 else None
        append((r.id, r.row_index, True, tier, tkm, co2e, intensity, ",".join(flags) or None))
    totals_by_mode = {
        m: {"co2e_kg": round(v[0], 6), "tonne_km": round(v[1], 6), "shipment_count": int(v[2])}
        for m, v in sorted(by_mode.items())
    }
    return EngineResult(
        rows=out,
        total_co2e_kg=round(total_co2e, 6),
        total_tonne_km=round(total_tkm, 6),
        usable_count=usable,
        missing_count=missing,
        flagged_count=flagged,
        tier_counts=tier_counts,
        totals_by_mode=totals_by_mode,
        flag_counts=flag_counts,
    )


def largest_remainder_percentages(counts: Sequence[int], decimals: int = 2) -> list[float]:
    """Shares of ``sum(counts)`` that add up to exactly 100 at ``decimals`` places (0s when empty)."""
    total = sum(counts)
    if total == 0:
        return [0.0 for _ in counts]
    scale = 100 * 10**decimals
    exact = [c * scale / total for c in counts]
    floors = [int(x) for x in exact]
    short = scale - sum(floors)
    # Largest remainder first; ties go to the earlier (better) tier, so the result is deterministic.
    order = sorted(range(len(counts)), key=lambda i: (-(exact[i] - floors[i]), i))
    for i in order[:short]:
        floors[i] += 1
    return [f / 10**decimals for f in floors]
