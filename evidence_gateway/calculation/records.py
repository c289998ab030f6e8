"""What the engine reads and returns: shipment rows, factors, per-row results and run totals, and
the decimal rules every figure follows (6 places; stored floats read back as the decimal written).

Kept apart from the arithmetic so the resolvers and the quality rules can name the shapes
without the engine's rules, and a column list can be read against one short module.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any, NamedTuple

from evidence_gateway.calculation import distance as dist

ENGINE_VERSION = "3"
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
    carrier_intensity_distance_basis: str | None = None
    carrier_intensity_category: str | None = None
    loaded_distance_km: float | None = None
    empty_distance_km: float | None = None
    empty_running_share: float | None = None
    electricity_country: str | None = None


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
    # Location-based grid electricity per country (ISO 3166-1 alpha-2), kg CO2e per kWh.
    grids: dict[str, Factor] = field(default_factory=dict)

    def canonical(self) -> dict[str, Any]:
        """For the rerun hash: every value, as exact decimal strings."""
        tables = [("mode", self.modes), ("fuel", self.fuels)]
        if self.grids:
            tables.append(("grid", self.grids))
        return {kind: {k: [str(f.ttw), str(f.wtt)] for k, f in sorted(table.items())} for kind, table in tables}


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
    actual_distance_km: float | None = None
    emission_distance_km: float | None = None
    emission_tonne_km: float | None = None
    distance_adjustment_factor: float | None = None
    trip_fuel_amount: float | None = None


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
