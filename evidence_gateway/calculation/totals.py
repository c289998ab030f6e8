"""Sums of a run: per mode, per ISO 14083 data category and distance type, the estimate of the
excluded rows, the ISO 14083 summary, and percentages that add up to exactly 100.

ISO 14083 wants exclusions quantified and reported, never silently dropped: the estimate lives
here beside the sums it is compared with (coverage), not in the per-row rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from evidence_gateway.calculation import distance as dist
from evidence_gateway.calculation import flags as flag_ids
from evidence_gateway.calculation.factors import DEFAULT_EMPTY_RUNNING
from evidence_gateway.calculation.records import THOUSAND, ZERO, FactorSet, RowResult, ShipmentInput, dec, num, q6


@dataclass(slots=True)
class Sums:
    ttw: Decimal = ZERO
    wtt: Decimal = ZERO
    tkm: Decimal = ZERO
    rows: int = 0

    def add(self, ttw: Decimal, wtt: Decimal, tkm: Decimal) -> None:
        self.ttw += ttw
        self.wtt += wtt
        self.tkm += tkm
        self.rows += 1


def mode_totals(s: Sums, headline_wtw: bool) -> dict[str, Any]:
    wtw = s.ttw + s.wtt
    return {
        "co2e_kg": float(wtw if headline_wtw else s.ttw),
        "tonne_km": float(q6(s.tkm)),
        "shipment_count": s.rows,
        "co2e_ttw_kg": float(s.ttw),
        "co2e_wtt_kg": float(s.wtt),
        "co2e_wtw_kg": float(wtw),
        "intensity_ttw_g_per_tkm": num(q6(s.ttw * THOUSAND / s.tkm)) if s.tkm > 0 else None,
        "intensity_wtw_g_per_tkm": num(q6(wtw * THOUSAND / s.tkm)) if s.tkm > 0 else None,
    }


def estimate_excluded(
    excluded: list[tuple[int, ShipmentInput]],
    out: list[RowResult | None],
    factors: FactorSet,
    measures: dict[str, list[Decimal]],
    included: Sums,
    headline_wtw: bool,
) -> Sums | None:
    """Excluded rows estimated with the default factor of their mode (ISO 14083: exclusions are
    quantified and reported, never silently dropped).

    A missing distance or mass is the mean of the included rows of that mode (else of all
    included rows; distances on the activity basis, SFD / air GCD); a given distance is read with
    the row's own distance type. The default factor applies to its own basis (actual km for
    surface modes), the tonne-km reported is on the activity basis. A missing or unknown mode
    takes the run's average TTW/WTT intensity per activity tonne-km. Fuel a row carries is not
    used: without a mass it cannot be allocated. None: nothing to estimate from (no included
    rows at all).
    """
    total_rows = sum(int(m[2]) for m in measures.values())
    if not excluded:
        return Sums()
    if total_rows == 0 or included.tkm <= 0:
        for i, r in excluded:
            out[i] = RowResult(r.id, r.row_index, False, None, None, None, None, flag_ids.MISSING_FLAG)
        return None
    all_d = sum((m[0] for m in measures.values()), ZERO) / total_rows
    all_m = sum((m[1] for m in measures.values()), ZERO) / total_rows
    est = Sums()
    for i, r in excluded:
        acc = measures.get(r.mode or "")
        mean_d, mean_m = (acc[0] / acc[2], acc[1] / acc[2]) if acc else (all_d, all_m)
        m = dec(r.mass_tonnes) if r.mass_tonnes is not None else q6(mean_m)
        factor = factors.modes.get(r.mode or "")
        if r.distance_km is not None:
            d, dtype = dec(r.distance_km), r.distance_type or dist.default_type(r.mode or "", r.distance_source)
        else:
            d, dtype = q6(mean_d), dist.ACTIVITY_BASIS.get(r.mode or "", "sfd")
        if factor is not None and r.mode is not None:
            distances = dist.distances(d, r.mode, dtype)
            tkm = distances.activity * m
            em_tkm = dist.emission_distance(distances, dist.default_basis(r.mode)) * m
            ttw, wtt = q6(em_tkm * factor.ttw / THOUSAND), q6(em_tkm * factor.wtt / THOUSAND)
        else:
            tkm = d * m
            ttw, wtt = q6(tkm * included.ttw / included.tkm), q6(tkm * included.wtt / included.tkm)
        est.add(ttw, wtt, tkm)
        out[i] = RowResult(
            r.id, r.row_index, False, None, None, None, None, flag_ids.MISSING_FLAG,
            estimated_co2e_ttw_kg=num(ttw), estimated_co2e_wtw_kg=num(ttw + wtt),
            factor_id=factor.id if factor is not None else None, method_notes="estimated_default_factor",
        )  # fmt: skip
    return est


def _pct(part: Decimal, whole: Decimal) -> float:
    return 0.0 if whole <= 0 else float((part * 100 / whole).quantize(Decimal("0.01")))


def summary(
    boundary: str,
    by_category: dict[str, Sums],
    by_distance: dict[str, Sums],
    included: Sums,
    est: Sums | None,
    excluded_rows: int,
    note_counts: dict[str, int],
) -> dict[str, Any]:
    """The ISO 14083 figures of a run (docs/methodology.md "ISO 14083 summary")."""
    wtw = included.ttw + included.wtt
    primary = by_category["primary"]
    est_tkm = est.tkm if est is not None else ZERO
    return {
        "headline_boundary": boundary.upper(),
        "data_categories": {
            c: {
                "rows": s.rows,
                "co2e_ttw_kg": float(s.ttw),
                "co2e_wtw_kg": float(s.ttw + s.wtt),
                "tonne_km": float(q6(s.tkm)),
            }
            for c, s in by_category.items()
        },
        # Every tonne-km and g/t·km of a run is on this basis (ISO 14083: SFD, air GCD).
        "activity_distance_basis": dict(sorted(dist.ACTIVITY_BASIS.items())),
        "distance_adjustment_factors": {m: str(v) for m, v in sorted(dist.DAF.items())},
        "air_gcd_correction_km": str(dist.AIR_GCD_CORRECTION_KM),
        "distance_types": {t: {"rows": s.rows, "tonne_km": float(q6(s.tkm))} for t, s in sorted(by_distance.items())},
        "empty_running": {
            "fuel_rows": "the empty km's fuel (empty_distance_km, or empty_running_share of all km) is added at the "
            "loaded km's fuel per km, then allocated by tonne-km share; rows without either: loaded km only",
            "fuel_rows_with_empty_running": note_counts.get(flag_ids.EMPTY_RUNNING_ADDED, 0),
            "fuel_rows_without_empty_running": note_counts.get(flag_ids.EMPTY_RUNNING_NOT_DECLARED, 0),
            "default_intensities": dict(sorted(DEFAULT_EMPTY_RUNNING.items())),
        },
        "primary_data_share": {
            "by_emissions_wtw_percent": _pct(primary.ttw + primary.wtt, wtw),
            "by_rows_percent": _pct(Decimal(primary.rows), Decimal(included.rows)),
        },
        "coverage_tonne_km_percent": _pct(included.tkm, included.tkm + est_tkm) if included.tkm + est_tkm > 0 else 0.0,
        "excluded": {
            "rows": excluded_rows,
            "estimated": est is not None,
            "tonne_km": None if est is None else float(q6(est.tkm)),
            "co2e_ttw_kg": None if est is None else float(est.ttw),
            "co2e_wtw_kg": None if est is None else float(est.ttw + est.wtt),
        },
        "method_notes": dict(sorted(note_counts.items())),
    }


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
