"""Per-shipment TTW / WTT / WTW by ISO 14083, totals, exclusions and the numbers quality reads.

Decimal arithmetic from the rows' own values: every figure printed in an artifact (activity
distance, allocation share, derived intensity, per-row kg) is rounded to 6 decimals and that
rounded figure is what the next step uses, so totals are the exact sums of the printed rows
and an auditor can redo any line by hand. Deterministic: the same rows and factors always give
the same numbers in the same order. docs/methodology.md describes every rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from evidence_gateway.calculation import distance as dist
from evidence_gateway.calculation import flags as flag_ids
from evidence_gateway.calculation.records import (
    CATEGORIES,
    ENGINE_VERSION,
    INTENSITY_RATIO_LIMIT,
    Q6,
    THOUSAND,
    TIERS,
    ZERO,
    EngineResult,
    Factor,
    FactorSet,
    RowResult,
    ShipmentInput,
    dec,
    num,
    q6,
)
from evidence_gateway.calculation.totals import (
    Sums,
    estimate_excluded,
    largest_remainder_percentages,
    mode_totals,
    summary,
)

__all__ = [
    "ENGINE_VERSION",
    "TIERS",
    "EngineResult",
    "Factor",
    "FactorSet",
    "RowResult",
    "ShipmentInput",
    "calculate",
    "dec",
    "largest_remainder_percentages",
]


@dataclass(slots=True)
class _Row:
    """What one included row contributes, in decimals."""

    ttw: Decimal
    wtt: Decimal
    tkm: Decimal  # ISO 14083 activity tonne-km (SFD, air GCD)
    category: str
    tier: str
    distance_type: str
    distances: dist.Distances
    emission_km: Decimal | None  # the distance the intensity used is per km of (None: fuel-based)
    trip_fuel: Decimal | None  # fuel of the whole trip, empty running included (primary rows)
    factor_id: uuid.UUID | None
    share: Decimal | None
    notes: list[str]
    flags: list[str]


@dataclass(slots=True)
class _Emissions:
    ttw: Decimal
    wtt: Decimal
    category: str
    factor_id: uuid.UUID | None
    share: Decimal | None = None
    emission_km: Decimal | None = None
    trip_fuel: Decimal | None = None


def _boundaries(
    r: ShipmentInput,
    mode: str,
    d: dist.Distances,
    mass: Decimal,
    f: FactorSet,
    notes: list[str],
    flags: list[str],
) -> _Emissions:
    """TTW and WTT kg, ISO category, factor and allocation share of one usable row."""
    default = f.modes[mode]
    tkm = d.activity * mass
    fuel = _fuel_factor(r, f, notes)
    if fuel is not None and r.fuel_amount is not None:
        share = _allocation(r, mass, d, tkm, notes, flags)
        if share is not None:
            trip = _trip_fuel(r, d, notes)
            amount = trip * share
            return _Emissions(q6(amount * fuel.ttw), q6(amount * fuel.wtt), "primary", fuel.id, share, trip_fuel=trip)
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
            # Rows stored before the distance basis existed were calculated per actual tonne-km.
            km = dist.emission_distance(d, r.carrier_intensity_distance_basis or "actual")
            em_tkm = km * mass
            # A carrier TOC built from measured data of the same operations is primary data (ISO 14083).
            category = "primary" if r.carrier_intensity_category == "measured" else "secondary_modelled"
            return _Emissions(
                q6(em_tkm * ttw_g / THOUSAND), q6(em_tkm * wtt_g / THOUSAND), category, default.id, emission_km=km
            )
    km = dist.emission_distance(d, dist.default_basis(mode))
    em_tkm = km * mass
    return _Emissions(
        q6(em_tkm * default.ttw / THOUSAND), q6(em_tkm * default.wtt / THOUSAND), "secondary_default", default.id,
        emission_km=km,
    )  # fmt: skip


def _fuel_factor(r: ShipmentInput, f: FactorSet, notes: list[str]) -> Factor | None:
    """The fuel's factor; electricity: the location-based grid of the row's country.

    Rows stored before a country was required have none: the UK grid, noted
    (``electricity_country_missing``) so it is never taken silently.
    """
    if r.fuel_type is None:
        return None
    if r.fuel_type == "electricity":
        grid = f.grids.get(r.electricity_country or "")
        if grid is not None:
            return grid
        notes.append(flag_ids.ELECTRICITY_COUNTRY_MISSING)
    return f.fuels.get(r.fuel_type)


def _trip_fuel(r: ShipmentInput, d: dist.Distances, notes: list[str]) -> Decimal:
    """The fuel of the vehicle's whole trip, empty running included (ISO 14083: a TOC covers the
    round trip). ``fuel_amount`` is the fuel of the loaded km; the empty km
    (``empty_distance_km``, or ``empty_running_share`` of all km) are charged at the same fuel per
    km: fuel x (loaded + empty) / loaded, or fuel / (1 - share), 6 decimals.
    """
    fuel = dec(r.fuel_amount or 0)
    if r.empty_distance_km is not None:
        loaded = dec(r.loaded_distance_km) if r.loaded_distance_km is not None else d.actual
        if loaded > 0:
            notes.append(flag_ids.EMPTY_RUNNING_ADDED)
            return q6(fuel * (loaded + dec(r.empty_distance_km)) / loaded)
    elif r.empty_running_share is not None:
        notes.append(flag_ids.EMPTY_RUNNING_ADDED)
        return q6(fuel / (1 - dec(r.empty_running_share)))
    else:
        notes.append(flag_ids.EMPTY_RUNNING_NOT_DECLARED)
    return fuel


def _allocation(
    r: ShipmentInput, mass: Decimal, d: dist.Distances, tkm: Decimal, notes: list[str], flags: list[str]
) -> Decimal | None:
    """ISO 14083 allocation of a vehicle's fuel to this shipment by tonne-km share, or None (->
    default intensity).

    The carrier's own share wins; else this shipment's tonne-km over the vehicle's loaded
    tonne-km on the trip: mass x km / (payload x loaded km), which is mass / payload when the
    shipment rides the whole loaded run (no ``loaded_distance_km``). Empty km carry no tonne-km.
    Zero tonne-km cannot carry any allocated fuel.
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
        if r.loaded_distance_km is None:
            return (mass / payload).quantize(Q6)
        share = (mass * d.actual / (payload * dec(r.loaded_distance_km))).quantize(Q6)
        if share > 1:
            flags.append(flag_ids.SHARE_ABOVE_ONE)
            return None
        return share
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
    d = dist.distances(distance, mode, dtype)
    if d.surface_gcd:
        notes.append(flag_ids.GCD_SURFACE_MODE)
    if d.air_too_short:
        flags.append(flag_ids.AIR_ACTUAL_TOO_SHORT)
    e = _boundaries(r, mode, d, mass, f, notes, flags)
    if d.activity != distance or (e.emission_km is not None and e.emission_km != distance):
        notes.append(flag_ids.DISTANCE_ADJUSTED)
    if e.category == "primary":
        tier = "primary"
    elif e.category == "secondary_modelled":
        tier = "secondary"
    else:
        tier = "modelled" if r.distance_source == "modelled" else "default"
    return _Row(
        e.ttw, e.wtt, d.activity * mass, e.category, tier, dtype, d, e.emission_km, e.trip_fuel, e.factor_id, e.share,
        notes, flags,
    )  # fmt: skip


def calculate(
    rows: Iterable[ShipmentInput], factors: FactorSet, period: tuple[date | None, date | None] = (None, None)
) -> EngineResult:
    headline_wtw = factors.boundary.upper() == "WTW"
    out: list[RowResult | None] = []
    excluded: list[tuple[int, ShipmentInput]] = []
    tier_counts = dict.fromkeys(TIERS, 0)
    flag_counts: dict[str, int] = {}
    note_counts: dict[str, int] = {}
    by_mode: dict[str, Sums] = {}
    by_category = {c: Sums() for c in CATEGORIES}
    by_distance: dict[str, Sums] = {}
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
        by_mode.setdefault(mode, Sums()).add(row.ttw, row.wtt, row.tkm)
        by_category[row.category].add(row.ttw, row.wtt, row.tkm)
        by_distance.setdefault(row.distance_type, Sums()).add(row.ttw, row.wtt, row.tkm)
        acc = measures.setdefault(mode, [ZERO, ZERO, ZERO])
        acc[0] += row.distances.activity
        acc[1] += dec(r.mass_tonnes)
        acc[2] += 1
        wtw = row.ttw + row.wtt
        headline = wtw if headline_wtw else row.ttw
        tkm6 = q6(row.tkm)
        d = row.distances
        em_km = row.emission_km
        out.append(
            RowResult(
                r.id, r.row_index, True, row.tier, num(tkm6), num(headline),
                num(q6(headline * THOUSAND / row.tkm)) if row.tkm > 0 else None,
                ",".join(row.flags) or None,
                num(row.ttw), num(row.wtt), num(wtw), row.category, row.distance_type, num(d.activity),
                num(row.share), row.factor_id, None, None, ",".join(row.notes) or None,
                num(d.actual) if d.actual_given else None,
                num(em_km), None if em_km is None else num(q6(em_km * dec(r.mass_tonnes))),
                num(d.factor), num(row.trip_fuel),
            )
        )  # fmt: skip
    included = Sums()
    for s in by_mode.values():
        included.ttw += s.ttw
        included.wtt += s.wtt
        included.tkm += s.tkm
        included.rows += s.rows
    est = estimate_excluded(excluded, out, factors, measures, included, headline_wtw)
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
        totals_by_mode={m: mode_totals(s, headline_wtw) for m, s in sorted(by_mode.items())},
        flag_counts=flag_counts,
        note_counts=note_counts,
        total_co2e_wtw_kg=float(total_wtw),
        total_co2e_ttw_kg=float(included.ttw),
        excluded_co2e_kg=None if est is None else float(est.ttw + est.wtt if headline_wtw else est.ttw),
        iso14083=summary(factors.boundary, by_category, by_distance, included, est, len(excluded), note_counts),
    )
