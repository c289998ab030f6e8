"""Seeded reference figures: emission factors per mode and per fuel (sources in docs/methodology.md).

Pure data, no database: ``seed.py`` stores these rows; tests and docs read them too.
Each figure names its source; ``note`` says plainly where a figure is derived or a proxy.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import date

# Fixed ids (uuid5) so several workers seeding at once insert the same rows, and hashes
# that name a factor version or profile stay stable across databases.
NAMESPACE = uuid.UUID("6f1d3c52-4d4b-5b8e-9a51-2b7e0c0a1e14")

FACTOR_VERSION_CODE = "defra-2025-glec-v1"
FACTOR_VERSION_ID = uuid.uuid5(NAMESPACE, f"factor_version:{FACTOR_VERSION_CODE}")
FACTOR_VERSION_NAME = "UK Government GHG conversion factors 2025 (DESNZ/DEFRA), ISO 14083 / GLEC boundaries"
FACTOR_VERSION_SOURCE = (
    "UK Government GHG Conversion Factors for Company Reporting 2025 (DESNZ/DEFRA), flat file: "
    "'Freighting goods', 'WTT- delivery vehs & freight', 'WTT- fuels', 'WTT- bioenergy', fuels; "
    "boundaries per ISO 14083:2023 / GLEC Framework v3"
)
FACTOR_VERSION_PUBLISHED_ON = date(2025, 6, 10)

DEFRA_FREIGHT = "DEFRA/DESNZ 2025, Freighting goods (TTW) + WTT- delivery vehs & freight (WTT)"
DEFRA_FUELS = "DEFRA/DESNZ conversion factors, Fuels (combustion, TTW) + WTT- fuels 2025 (WTT)"


@dataclass(frozen=True, slots=True)
class FactorRow:
    kind: str  # "mode" (g CO2e per tonne-km) or "fuel" (kg CO2e per unit)
    key: str
    unit: str
    ttw: float
    wtw: float
    source: str
    note: str | None = None


# g CO2e per tonne-km. WTW = TTW + WTT.
MODE_FACTORS: tuple[FactorRow, ...] = (
    FactorRow(
        "mode",
        "road",
        "g CO2e/tkm",
        101.63,
        101.63 + 23.59,
        DEFRA_FREIGHT,
        "HGV (all diesel), all HGVs, average laden: TTW 0.10163, WTT 0.02359 kg/tkm",
    ),
    FactorRow(
        "mode",
        "rail",
        "g CO2e/tkm",
        27.79,
        27.79 + 6.91,
        DEFRA_FREIGHT,
        "Rail, freight train: TTW 0.02779, WTT 0.00691 kg/tkm",
    ),
    FactorRow(
        "mode",
        "sea",
        "g CO2e/tkm",
        16.12,
        16.12 + 3.57,
        DEFRA_FREIGHT,
        "Cargo ship, container ship, average: TTW 0.01612 kg/tkm. APPROXIMATION: WTT derived as TTW x "
        "(WTT/TTW of fuel oil, 714.87/3228.89 kg per tonne) = 3.57 g/tkm",
    ),
    FactorRow(
        "mode",
        "air",
        "g CO2e/tkm",
        531.30,
        531.30 + 135.16,
        DEFRA_FREIGHT,
        "Freight flights, international to/from non-UK, without radiative forcing (ISO 14083 excludes "
        "non-CO2 effects): TTW 0.5313, WTT 0.13516 kg/tkm",
    ),
    FactorRow(
        "mode",
        "inland_waterway",
        "g CO2e/tkm",
        14.07,
        14.07 + 3.24,
        DEFRA_FREIGHT,
        "APPROXIMATION (proxy): DEFRA has no inland-waterway row; uses cargo ship, general cargo "
        "0-4999 dwt TTW 0.01407 kg/tkm, WTT derived with the gas oil WTT/TTW ratio (743.84/3226.58)",
    ),
)

# kg CO2e per litre (diesel, petrol, hvo), per kg (cng, lng, hfo, mgo, jet_kerosene), per kWh (electricity).
FUEL_FACTORS: tuple[FactorRow, ...] = (
    FactorRow(
        "fuel",
        "diesel",
        "kg CO2e/litre",
        2.57082,
        2.57082 + 0.61101,
        DEFRA_FUELS,
        "Diesel (average biofuel blend): combustion 2.57082, WTT 0.61101 per litre",
    ),
    FactorRow(
        "fuel",
        "petrol",
        "kg CO2e/litre",
        2.06916,
        2.06916 + 0.58094,
        DEFRA_FUELS,
        "Petrol (average biofuel blend): combustion 2.06916, WTT 0.58094 per litre",
    ),
    FactorRow(
        "fuel",
        "hvo",
        "kg CO2e/litre",
        0.0,
        0.56439,
        DEFRA_FUELS,
        "APPROXIMATION: biogenic CO2 of HVO combustion counted as zero (ISO 14083/GHG Protocol report it "
        "outside the scopes); small CH4/N2O omitted. WTT Biodiesel HVO 0.56439 per litre",
    ),
    FactorRow(
        "fuel",
        "cng",
        "kg CO2e/kg",
        2.57546,
        2.57546 + 0.53078,
        DEFRA_FUELS,
        "CNG (natural gas) combustion 2575.46 per tonne, WTT CNG 530.78 per tonne",
    ),
    FactorRow(
        "fuel",
        "lng",
        "kg CO2e/kg",
        2.60330,
        2.60330 + 0.91223,
        DEFRA_FUELS,
        "LNG combustion 2603.30 per tonne, WTT LNG 912.23 per tonne",
    ),
    FactorRow(
        "fuel",
        "hfo",
        "kg CO2e/kg",
        3.22889,
        3.22889 + 0.71487,
        DEFRA_FUELS,
        "Fuel oil / marine fuel oil combustion 3228.89 per tonne, WTT 714.87 per tonne",
    ),
    FactorRow(
        "fuel",
        "mgo",
        "kg CO2e/kg",
        3.22658,
        3.22658 + 0.74384,
        DEFRA_FUELS,
        "Gas oil / marine gas oil combustion 3226.58 per tonne, WTT 743.84 per tonne",
    ),
    FactorRow(
        "fuel",
        "jet_kerosene",
        "kg CO2e/kg",
        3.17837,
        3.17837 + 0.66179,
        DEFRA_FUELS,
        "Aviation turbine fuel combustion 3178.37 per tonne, WTT 661.79 per tonne",
    ),
    FactorRow(
        "fuel",
        "electricity",
        "kg CO2e/kWh",
        0.0,
        0.177 + 0.01853,
        "DEFRA/DESNZ 2025, UK electricity",
        "TTW of electric traction is zero. APPROXIMATION: WTW = UK grid generation 0.177 + T&D 0.01853 per "
        "kWh; the WTT of generation fuels is not included",
    ),
)

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
        "Best data first: fuel used, carrier intensity, mode default, modelled distance.",
        "WTW",
        True,
    ),
    ProfileSeed(
        "iso14083-ttw",
        "ISO 14083 tank-to-wheel",
        "Same data hierarchy as the WTW profile, tank-to-wheel boundary only (operational emissions of the "
        "vehicle; electricity and biogenic CO2 count zero).",
        "TTW",
        False,
    ),
)

DEFAULT_PROFILE_ID = next(p.id for p in PROFILES if p.is_default)
