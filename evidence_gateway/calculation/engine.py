"""Per-shipment TTW / WTT / WTW by ISO 14083, totals, exclusions and the numbers quality reads.

Decimal arithmetic from the rows' own values: every figure printed in an artifact (activity
distance, allocation share, derived intensity, per-row kg) is rounded to 6 decimals and that
rounded figure is what the next step uses, so totals are the exact sums of the printed rows
and an auditor can redo any line by hand. Deterministic: the same rows and factors always give
the same numbers in the same order. docs/methodology.md describes every rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, NamedTuple

from evidence_gateway.calculation import distance as dist
from evidence_gateway.calculation import flags as flag_ids

ENGINE_VERSION = "2"
# Contract row tiers (the four *_data_percent fields of an assessment), kept as they were.
TIERS = ("primary", "secondary", "default", "modelled")
# ISO 14083 data categories: primary data, or secondary data that is modelled (a carrier's own
# intensity) or default (a published factor).
CATEGORIES = ("primary", "secondary_modelled", "secondary_default")
# A carrier intensity more than 10x above or below the mode default is taken as a unit error.
INTENSITY_RATIO_LIMIT = Decimal(10)
Q6 = dist.Q6
ZERO = Decimal(0)
THOUSAND = Decimal(1000)


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
    carrier_intensity_basis: str | None = None
    vehicle_payload_tonnes: float | None = None
    fuel_allocation_share: float | None = None
    distance_type: str | None = None
    shipment_date: date | None = None


@dataclass(frozen=True, slots=True)
class Factor:
    """A published TTW/WTT pair (g CO2e per tonne-km for modes, kg per unit for fuels)."""

    ttw: Decimal
    wtt: Decimal
    id: uuid.UUID | None = None

    @property
    def wtw(self) -> Decimal:
        return self.ttw + self.wtt


@dataclass(frozen=True, slots=True)
class FactorSet:
    """The factors of one version, and the profile's headline boundary (WTW or TTW)."""

    boundary: str
    modes: dict[str, Factor]
    fuels: dict[str, Factor]

    def canonical(self) -> dict[str, Any]:
        """For the rerun hash: every value, as exact decimal strings."""
        return {
            kind: {k: [str(f.ttw), str(f.wtt)] for k, f in sorted(table.items())}
            for kind, table in (("mode", self.modes), ("fuel", self.fuels))
        }


class RowResult(NamedTuple):
    """One stored result; field order = the insert column order after the run/org ids."""

    shipment_id: Any
    row_index: int
    included: bool
    data_tier: str | None
    tonne_km: float | None
    co2e_kg: float | None
    intensity_g_per_tkm: float | None
    flags: str | None
    co2e_ttw_kg: float | None = None
    co2e_wtt_kg: float | None = None
    co2e_wtw_kg: float | None = None
    data_category: str | None = None
    distance_type: str | None = None
    activity_distance_km: float | None = None
    allocation_share: float | None = None
    factor_id: uuid.UUID | None = None
    estimated_co2e_ttw_kg: float | None = None
    estimated_co2e_wtw_kg: float | None = None
    method_notes: str | None = None


@dataclass(slots=True)
class EngineResult:
    rows: list[RowResult]
    total_co2e_kg: float
    total_tonne_km: float
    usable_count: int
    missing_count: int
    flagged_count: int
    tier_counts: dict[str, int]
    totals_by_mode: dict[str, dict[str, Any]]
    flag_counts: dict[str, int] = field(default_factory=dict)
    note_counts: dict[str, int] = field(default_factory=dict)
    total_co2e_wtw_kg: float = 0.0
    total_co2e_ttw_kg: float = 0.0
    excluded_co2e_kg: float | None = None
    iso14083: dict[str, Any] = field(default_factory=dict)


def dec(value: float | int | Decimal) -> Decimal:
    """The decimal the caller wrote (shortest round-trip of the stored float)."""
    return value if isinstance(value, Decimal) else Decimal(repr(value))


def q6(value: Decimal) -> Decimal:
    return value.quantize(Q6)


def num(value: Decimal | None) -> float | None:
    """Stored/JSON number; every value here has at most 6 decimals, so repr() gives it back exactly."""
    return None if value is None else float(value)


@dataclass(slots=True)
class _Row:
    """What one included row contributes, in decimals."""

    ttw: Decimal
    wtt: Decimal
    tkm: Decimal
    category: str
    tier: str
    distance_type: str
    adjusted: bool
    factor_id: uuid.UUID | None
    activity_km: Decimal
    share: Decimal | None
    notes: list[str]
    flags: list[str]


def _boundaries(
    r: ShipmentInput, mode: str, tkm: Decimal, mass: Decimal, f: FactorSet, notes: list[str], flags: list[str]
) -> tuple[Decimal, Decimal, str, uuid.UUID | None, Decimal | None]:
    """(TTW kg, WTT kg, ISO category, factor id, allocation share) of one usable row."""
    default = f.modes[mode]
    fuel = f.fuels.get(r.fuel_type) if r.fuel_type is not None else None
    if fuel is not None and r.fuel_amount is not None:
        share = _allocation(r, mass, tkm, notes, flags)
        if share is not None:
            amount = dec(r.fuel_amount) * share
            return q6(amount * fuel.ttw), q6(amount * fuel.wtt), "primary", fuel.id, share
        notes.append(flag_ids.FUEL_NOT_ALLOCATED)
    carrier = r.carrier_intensity_g_per_tkm
    if carrier is not None:
        ci = dec(carrier)
        # Rows imported before the basis was required were calculated as WTW (the default profile).
        on_wtw = (r.carrier_intensity_basis or "wtw") == "wtw"
        basis = default.wtw if on_wtw else default.ttw
        if basis > 0 and not (basis / INTENSITY_RATIO_LIMIT <= ci <= basis * INTENSITY_RATIO_LIMIT):
            flags.append(flag_ids.INTENSITY_OUT_OF_RANGE)
        else:
            # The missing part from the mode's published WTT/TTW ratio, 6 decimals, marked derived.
            if on_wtw:
                ttw_g = q6(ci * default.ttw / default.wtw)
                wtt_g = ci - ttw_g
                notes.append(flag_ids.TTW_DERIVED)
            else:
                ttw_g = ci
                wtt_g = q6(ci * default.wtt / default.ttw) if default.ttw > 0 else ZERO
                notes.append(flag_ids.WTT_DERIVED)
            return q6(tkm * ttw_g / THOUSAND), q6(tkm * wtt_g / THOUSAND), "secondary_modelled", default.id, None
    return q6(tkm * default.ttw / THOUSAND), q6(tkm * default.wtt / THOUSAND), "secondary_default", default.id, None


def _allocation(r: ShipmentInput, mass: Decimal, tkm: Decimal, notes: list[str], flags: list[str]) -> Decimal | None:
    """ISO 14083 allocation of a vehicle's fuel to this shipment, or None (-> default intensity).

    The carrier's own share wins; else tonne-km on one trip: mass / vehicle payload. Zero
    tonne-km cannot carry any allocated fuel.
    """
    if tkm <= 0:
        return None
    if r.fuel_allocation_share is not None:
        notes.append("allocated_by_share")
        return dec(r.fuel_allocation_share)
    if r.vehicle_payload_tonnes is not None:
        payload = dec(r.vehicle_payload_tonnes)
        if payload < mass:
            flags.append(flag_ids.PAYLOAD_BELOW_MASS)
            return None
        notes.append("allocated_by_payload")
        return (mass / payload).quantize(Q6)
    return None


def _usable(
    r: ShipmentInput, mode: str, distance: Decimal, mass: Decimal, f: FactorSet, period: tuple[date | None, date | None]
) -> _Row:
    flags: list[str] = []
    notes: list[str] = []
    if distance == 0:
        flags.append(flag_ids.ZERO_DISTANCE)
    if mass == 0:
        flags.append(flag_ids.ZERO_MASS)
    start, end = period
    if r.shipment_date is not None and (
        (start is not None and r.shipment_date < start) or (end is not None and r.shipment_date > end)
    ):
        flags.append(flag_ids.OUTSIDE_PERIOD)
    dtype = r.distance_type or dist.default_type(mode, r.distance_source)
    activity_km, factor, surface_gcd = dist.activity_distance(distance, mode, dtype)
    if factor != 1:
        notes.append(flag_ids.DISTANCE_ADJUSTED)
    if surface_gcd:
        notes.append(flag_ids.GCD_SURFACE_MODE)
    tkm = activity_km * mass
    ttw, wtt, category, factor_id, share = _boundaries(r, mode, tkm, mass, f, notes, flags)
    if category == "primary":
        tier = "primary"
    elif category == "secondary_modelled":
        tier = "secondary"
    else:
        tier = "modelled" if r.distance_source == "modelled" else "default"
    return _Row(ttw, wtt, tkm, category, tier, dtype, factor != 1, factor_id, activity_km, share, notes, flags)


@dataclass(slots=True)
class _Sums:
    ttw: Decimal = ZERO
    wtt: Decimal = ZERO
    tkm: Decimal = ZERO
    rows: int = 0

    def add(self, ttw: Decimal, wtt: Decimal, tkm: Decimal) -> None:
        self.ttw += ttw
        self.wtt += wtt
        self.tkm += tkm
        self.rows += 1


def calculate(
    rows: Iterable[ShipmentInput], factors: FactorSet, period: tuple[date | None, date | None] = (None, None)
) -> EngineResult:
    headline_wtw = factors.boundary.upper() == "WTW"
    out: list[RowResult | None] = []
    excluded: list[tuple[int, ShipmentInput]] = []
    tier_counts = dict.fromkeys(TIERS, 0)
    flag_counts: dict[str, int] = {}
    note_counts: dict[str, int] = {}
    by_mode: dict[str, _Sums] = {}
    by_category = {c: _Sums() for c in CATEGORIES}
    by_distance: dict[str, _Sums] = {}
    measures: dict[str, list[Decimal]] = {}  # raw distance and mass sums per mode, for estimates
    flagged = 0
    for r in rows:
        mode = r.mode
        if mode is None or r.distance_km is None or r.mass_tonnes is None or mode not in factors.modes:
            excluded.append((len(out), r))
            out.append(None)
            continue
        row = _usable(r, mode, dec(r.distance_km), dec(r.mass_tonnes), factors, period)
        tier_counts[row.tier] += 1
        if row.flags:
            flagged += 1
            for name in row.flags:
                flag_counts[name] = flag_counts.get(name, 0) + 1
        for name in row.notes:
            note_counts[name] = note_counts.get(name, 0) + 1
        by_mode.setdefault(mode, _Sums()).add(row.ttw, row.wtt, row.tkm)
        by_category[row.category].add(row.ttw, row.wtt, row.tkm)
        by_distance.setdefault(row.distance_type, _Sums()).add(row.ttw, row.wtt, row.tkm)
        acc = measures.setdefault(mode, [ZERO, ZERO, ZERO])
        acc[0] += dec(r.distance_km)
        acc[1] += dec(r.mass_tonnes)
        acc[2] += 1
        wtw = row.ttw + row.wtt
        headline = wtw if headline_wtw else row.ttw
        tkm6 = q6(row.tkm)
        out.append(
            RowResult(
                r.id, r.row_index, True, row.tier, num(tkm6), num(headline),
                num(q6(headline * THOUSAND / row.tkm)) if row.tkm > 0 else None,
                ",".join(row.flags) or None,
                num(row.ttw), num(row.wtt), num(wtw), row.category, row.distance_type, num(row.activity_km),
                num(row.share), row.factor_id, None, None, ",".join(row.notes) or None,
            )
        )  # fmt: skip
    included = _Sums()
    for s in by_mode.values():
        included.ttw += s.ttw
        included.wtt += s.wtt
        included.tkm += s.tkm
        included.rows += s.rows
    est = _estimate_excluded(excluded, out, factors, measures, included, headline_wtw)
    result_rows = [r for r in out if r is not None]
    total_wtw = included.ttw + included.wtt
    return EngineResult(
        rows=result_rows,
        total_co2e_kg=float(total_wtw if headline_wtw else included.ttw),
        total_tonne_km=float(q6(included.tkm)),
        usable_count=included.rows,
        missing_count=len(excluded),
        flagged_count=flagged,
        tier_counts=tier_counts,
        totals_by_mode={m: _mode_totals(s, headline_wtw) for m, s in sorted(by_mode.items())},
        flag_counts=flag_counts,
        note_counts=note_counts,
        total_co2e_wtw_kg=float(total_wtw),
        total_co2e_ttw_kg=float(included.ttw),
        excluded_co2e_kg=None if est is None else float(est.ttw + est.wtt if headline_wtw else est.ttw),
        iso14083=_summary(factors.boundary, by_category, by_distance, included, est, len(excluded), note_counts),
    )


def _mode_totals(s: _Sums, headline_wtw: bool) -> dict[str, Any]:
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


def _estimate_excluded(
    excluded: list[tuple[int, ShipmentInput]],
    out: list[RowResult | None],
    factors: FactorSet,
    measures: dict[str, list[Decimal]],
    included: _Sums,
    headline_wtw: bool,
) -> _Sums | None:
    """Excluded rows estimated with the default factor of their mode (ISO 14083: exclusions are
    quantified and reported, never silently dropped).

    A missing distance or mass is the mean of the included rows of that mode (else of all
    included rows); a missing or unknown mode takes the run's average TTW/WTT intensity. Fuel
    a row carries is not used: without a mass it cannot be allocated. None: nothing to estimate
    from (no included rows at all).
    """
    total_rows = sum(int(m[2]) for m in measures.values())
    if not excluded:
        return _Sums()
    if total_rows == 0 or included.tkm <= 0:
        for i, r in excluded:
            out[i] = RowResult(r.id, r.row_index, False, None, None, None, None, flag_ids.MISSING_FLAG)
        return None
    all_d = sum((m[0] for m in measures.values()), ZERO) / total_rows
    all_m = sum((m[1] for m in measures.values()), ZERO) / total_rows
    est = _Sums()
    for i, r in excluded:
        acc = measures.get(r.mode or "")
        mean_d, mean_m = (acc[0] / acc[2], acc[1] / acc[2]) if acc else (all_d, all_m)
        d = dec(r.distance_km) if r.distance_km is not None else q6(mean_d)
        m = dec(r.mass_tonnes) if r.mass_tonnes is not None else q6(mean_m)
        tkm = d * m
        factor = factors.modes.get(r.mode or "")
        if factor is not None:
            ttw, wtt = q6(tkm * factor.ttw / THOUSAND), q6(tkm * factor.wtt / THOUSAND)
        else:
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


def _summary(
    boundary: str,
    by_category: dict[str, _Sums],
    by_distance: dict[str, _Sums],
    included: _Sums,
    est: _Sums | None,
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
        "distance_types": {t: {"rows": s.rows, "tonne_km": float(q6(s.tkm))} for t, s in sorted(by_distance.items())},
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
