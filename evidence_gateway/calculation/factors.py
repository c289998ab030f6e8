"""Seeded reference figures: emission factors per mode and per fuel (sources in docs/methodology.md).

Pure data, no database: ``seed.py`` stores these rows; tests and docs read them too.
Each figure names its source; ``note`` says plainly where a figure is derived or a proxy.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

# Fixed ids (uuid5) so several workers seeding at once insert the same rows, and hashes
# that name a factor version or profile stay stable across databases.
NAMESPACE = uuid.UUID("6f1d3c52-4d4b-5b8e-9a51-2b7e0c0a1e14")

FACTOR_VERSION_CODE = "desnz-2025-iso14083-v2"
FACTOR_VERSION_ID = uuid.uuid5(NAMESPACE, f"factor_version:{FACTOR_VERSION_CODE}")
FACTOR_VERSION_NAME = "UK Government GHG conversion factors 2025 (DESNZ), published rows, ISO 14083 TTW/WTT/WTW"
FACTOR_VERSION_SOURCE = (
    "UK Government GHG Conversion Factors for Company Reporting 2025 (DESNZ), flat format v1: "
    "'Freighting goods' (TTW per tonne-km), 'WTT- delivery vehs & freight' (WTT per tonne-km), "
    "'Fuels' (combustion, TTW), 'WTT- fuels' / 'WTT- bioenergy' (WTT), 'UK electricity'; boundaries per "
    "ISO 14083:2023 / GLEC Framework v3 (WTW = TTW + WTT)"
)
FACTOR_VERSION_PUBLISHED_ON = date(2025, 6, 10)
# The previous edition (generic fuel-oil rows, derived sea/IWW WTT); runs that used it keep it.
PREVIOUS_VERSION_CODES = ("defra-2025-glec-v1",)

DATASET = "UK Government GHG Conversion Factors for Company Reporting (DESNZ)"
DATASET_VERSION = "2025, flat format v1"
DESNZ_FREIGHT = "DESNZ 2025, Freighting goods (TTW) + WTT- delivery vehs & freight (WTT)"
DESNZ_FUELS = "DESNZ 2025, Fuels (combustion, TTW) + WTT- fuels / WTT- bioenergy (WTT)"


@dataclass(frozen=True, slots=True)
class FactorRow:
    """One published factor pair. ``ttw`` and ``wtt`` are the published values; WTW is their sum.

    mode rows: g CO2e per tonne-km; fuel rows: kg CO2e per litre / kg / kWh. ``source_row_id``
    names the published rows (flat-file ID where it was checked, else the workbook path).
    """

    kind: str
    key: str
    unit: str
    ttw: Decimal
    wtt: Decimal
    source: str
    source_row_id: str
    note: str | None = None
    dataset: str = DATASET
    dataset_version: str = DATASET_VERSION

    @property
    def wtw(self) -> Decimal:
        return self.ttw + self.wtt


D = Decimal

# g CO2e per tonne-km (DESNZ publishes kg per tonne.km; x 1000). DESNZ freight intensities are
# averages per tonne-km of actual (road, rail, sea) or great-circle (air) distance.
MODE_FACTORS: tuple[FactorRow, ...] = (
    FactorRow(
        "mode", "road", "g CO2e/tkm", D("101.63"), D("23.59"), DESNZ_FREIGHT,
        "Freighting goods > HGV (all diesel) > All HGVs > Average laden > tonne.km; "
        "WTT- delivery vehs & freight > HGV (all diesel) > All HGVs > Average laden > tonne.km",
        "TTW 0.10163, WTT 0.02359 kg/tkm",
    ),
    FactorRow(
        "mode", "rail", "g CO2e/tkm", D("27.79"), D("6.91"), DESNZ_FREIGHT,
        "Freighting goods > Rail > Freight train > tonne.km; WTT- delivery vehs & freight > Rail > Freight train",
        "TTW 0.02779, WTT 0.00691 kg/tkm",
    ),
    FactorRow(
        "mode", "sea", "g CO2e/tkm", D("16.12"), D("3.65"), DESNZ_FREIGHT,
        "Freighting goods > Cargo ship > Container ship > Average > tonne.km; "
        "WTT- delivery vehs & freight > Cargo ship > Container ship > Average > tonne.km",
        "TTW 0.01612, WTT 0.00365 kg/tkm (published WTT row; the previous edition derived 3.57)",
    ),
    FactorRow(
        "mode", "air", "g CO2e/tkm", D("531.30"), D("135.16"), DESNZ_FREIGHT,
        "Freighting goods > Freight flights > International, to/from non-UK > Without RF > tonne.km; "
        "WTT- delivery vehs & freight > Freight flights > International, to/from non-UK",
        "TTW 0.5313, WTT 0.13516 kg/tkm, without radiative forcing (ISO 14083 excludes non-CO2 effects). "
        "Per great-circle tonne-km; DESNZ includes an 8 % distance uplift in aviation factors",
    ),
    FactorRow(
        "mode", "inland_waterway", "g CO2e/tkm", D("14.07"), D("3.19"), DESNZ_FREIGHT,
        "Freighting goods > Cargo ship > General cargo > 0-4999 dwt > tonne.km; "
        "WTT- delivery vehs & freight > Cargo ship > General cargo > 0-4999 dwt > tonne.km",
        "APPROXIMATION (proxy vessel): DESNZ has no inland-waterway row; the smallest general cargo ship "
        "stands in for a barge. TTW 0.01407, WTT 0.00319 kg/tkm (both published rows)",
    ),
)  # fmt: skip

# kg CO2e per litre (diesel, petrol, hvo), per kg (cng, lng, hfo, mgo, jet_kerosene), per kWh (electricity).
FUEL_FACTORS: tuple[FactorRow, ...] = (
    FactorRow(
        "fuel", "diesel", "kg CO2e/litre", D("2.57082"), D("0.61101"), DESNZ_FUELS,
        "Fuels > Liquid fuels > Diesel (average biofuel blend) > litres; WTT- fuels > Diesel (average biofuel "
        "blend) > litres",
    ),
    FactorRow(
        "fuel", "petrol", "kg CO2e/litre", D("2.06916"), D("0.58094"), DESNZ_FUELS,
        "1_101_1017_8_1 (Fuels > Liquid fuels > Petrol (average biofuel blend) > litres); WTT- fuels > Petrol "
        "(average biofuel blend) > litres",
    ),
    FactorRow(
        "fuel", "hvo", "kg CO2e/litre", D("0"), D("0.56439"), DESNZ_FUELS,
        "WTT- bioenergy > Biofuel > Biodiesel HVO > litres",
        "APPROXIMATION: biogenic CO2 of HVO combustion counted as zero (reported outside the scopes); its small "
        "CH4/N2O (Bioenergy > Biodiesel HVO, 0.03558 per litre) is omitted",
    ),
    FactorRow(
        "fuel", "cng", "kg CO2e/kg", D("2.57546"), D("0.53078"), DESNZ_FUELS,
        "1_100_1001_15_1 (Fuels > Gaseous fuels > CNG > tonnes, 2575.46441 per tonne); WTT- fuels > CNG > tonnes",
    ),
    FactorRow(
        "fuel", "lng", "kg CO2e/kg", D("2.60330"), D("0.91223"), DESNZ_FUELS,
        "1_100_1002_15_1 (Fuels > Gaseous fuels > LNG > tonnes, 2603.30441 per tonne); WTT- fuels > LNG > tonnes",
    ),
    FactorRow(
        "fuel", "hfo", "kg CO2e/kg", D("3.15475"), D("0.71487"), DESNZ_FUELS,
        "1_101_1024_15_1 (Fuels > Liquid fuels > Marine fuel oil > tonnes, 3154.75334 per tonne); WTT- fuels > "
        "Marine fuel oil > tonnes",
        "Marine fuel oil row (the previous edition used generic Fuel oil, 3228.89). WTT 714.87 per tonne: the "
        "WTT- fuels value for fuel oil; check the marine WTT row id against the workbook",
    ),
    FactorRow(
        "fuel", "mgo", "kg CO2e/kg", D("3.24530"), D("0.74384"), DESNZ_FUELS,
        "1_101_1023_15_1 (Fuels > Liquid fuels > Marine gas oil > tonnes, 3245.30441 per tonne); WTT- fuels > "
        "Marine gas oil > tonnes",
        "Marine gas oil row (the previous edition used generic Gas oil, 3226.58). WTT 743.84 per tonne: the "
        "WTT- fuels value for gas oil; check the marine WTT row id against the workbook",
    ),
    FactorRow(
        "fuel", "jet_kerosene", "kg CO2e/kg", D("3.17837"), D("0.66179"), DESNZ_FUELS,
        "Fuels > Liquid fuels > Aviation turbine fuel > tonnes (3178.37 per tonne); WTT- fuels > Aviation turbine "
        "fuel > tonnes",
    ),
    FactorRow(
        "fuel", "electricity", "kg CO2e/kWh", D("0"), D("0.19553"), "DESNZ 2025, UK electricity + T&D",
        "UK electricity > Electricity: UK > kWh (0.177); Transmission and distribution > T&D- UK electricity > "
        "kWh (0.01853)",
        "TTW of electric traction is zero. APPROXIMATION: WTT = UK grid generation 0.177 + T&D 0.01853 per kWh "
        "(the WTT of generation fuels is not included); the UK grid is used for every country",
    ),
)  # fmt: skip

ALL_FACTORS: tuple[FactorRow, ...] = MODE_FACTORS + FUEL_FACTORS


def factor_id(kind: str, key: str) -> uuid.UUID:
    return uuid.uuid5(NAMESPACE, f"factor:{FACTOR_VERSION_CODE}:{kind}:{key}")


@dataclass(frozen=True, slots=True)
class ProfileSeed:
    code: str
    name: str
    description: str
    boundary: str
    is_default: bool

    @property
    def id(self) -> uuid.UUID:
        return uuid.uuid5(NAMESPACE, f"methodology_profile:{self.code}")


PROFILES: tuple[ProfileSeed, ...] = (
    ProfileSeed(
        "iso14083-wtw",
        "ISO 14083 well-to-wheel",
        "ISO 14083:2023 / GLEC Framework v3 accounting, well-to-wheel CO2e (fuel production plus operation). "
        "Per shipment TTW, WTT and WTW; primary data (allocated fuel) first, then carrier intensities, then "
        "published defaults. The headline boundary is WTW.",
        "WTW",
        True,
    ),
    ProfileSeed(
        "iso14083-ttw",
        "ISO 14083 tank-to-wheel",
        "Same calculation as the WTW profile (every result carries TTW, WTT and WTW); the headline boundary is "
        "tank-to-wheel (operational emissions of the vehicle; electricity and biogenic CO2 count zero).",
        "TTW",
        False,
    ),
)

DEFAULT_PROFILE_ID = next(p.id for p in PROFILES if p.is_default)
