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

FACTOR_VERSION_CODE = "desnz-2025-iso14083-v4"
FACTOR_VERSION_ID = uuid.uuid5(NAMESPACE, f"factor_version:{FACTOR_VERSION_CODE}")
FACTOR_VERSION_NAME = "UK Government GHG conversion factors 2025 (DESNZ), published rows, ISO 14083 TTW/WTT/WTW"
FACTOR_VERSION_SOURCE = (
    "UK Government GHG Conversion Factors for Company Reporting 2025 (DESNZ), flat format v1: "
    "'Bioenergy', "
    "'Freighting goods' (TTW per tonne-km), 'WTT- delivery vehs & freight' (WTT per tonne-km), "
    "'Fuels' (combustion, TTW), 'WTT- fuels' / 'WTT- bioenergy' (WTT), 'UK electricity', 'Transmission and "
    "distribution', 'WTT- UK electricity'; boundaries per "
    "ISO 14083:2023 / GLEC Framework v3 (WTW = TTW + WTT); grids outside the UK: Ember yearly data"
)
FACTOR_VERSION_PUBLISHED_ON = date(2025, 6, 10)
# Earlier editions; runs that used one keep it. v1: generic fuel-oil rows, derived sea/IWW WTT.
# v2: electricity WTT without the upstream of generation and of T&D losses. v3: HVO without its
# combustion CH4/N2O, the UK grid for electricity in every country.
PREVIOUS_VERSION_CODES = ("defra-2025-glec-v1", "desnz-2025-iso14083-v2", "desnz-2025-iso14083-v3")

DATASET = "UK Government GHG Conversion Factors for Company Reporting (DESNZ)"
DATASET_VERSION = "2025, flat format v1"
DESNZ_FREIGHT = "DESNZ 2025, Freighting goods (TTW) + WTT- delivery vehs & freight (WTT)"
DESNZ_FUELS = "DESNZ 2025, Fuels (combustion, TTW) + WTT- fuels / WTT- bioenergy (WTT)"


@dataclass(frozen=True, slots=True)
class FactorRow:
    """One published factor pair. ``ttw`` and ``wtt`` are the published values; WTW is their sum.

    mode rows: g CO2e per tonne-km; fuel rows: kg CO2e per litre / kg / kWh. ``source_row_id``
    names the published rows by flat-file ID and path, marked TTW or WTT.
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
# ``source_row_id``: "TTW <flat-file ID> ...; WTT <flat-file ID> ..." (tests/fixtures/desnz_2025_rows.csv
# holds the published values of every ID named here, and a test checks the sums).
MODE_FACTORS: tuple[FactorRow, ...] = (
    FactorRow(
        "mode", "road", "g CO2e/tkm", D("101.63"), D("23.59"), DESNZ_FREIGHT,
        "TTW 27_304_3140_14_1 (Freighting goods > HGV (all diesel) > All HGVs > Average laden > tonne.km); "
        "WTT 28_907_3140_14_1 (WTT- delivery vehs & freight > WTT- HGV (all diesel) > All HGVs > Average laden)",
        "TTW 0.10163, WTT 0.02359 kg/tkm",
    ),
    FactorRow(
        "mode", "rail", "g CO2e/tkm", D("27.79"), D("6.91"), DESNZ_FREIGHT,
        "TTW 27_315_3151_14_1 (Freighting goods > Rail > Freight train > tonne.km); "
        "WTT 28_911_3151_14_1 (WTT- delivery vehs & freight > WTT- rail > Freight train)",
        "TTW 0.02779, WTT 0.00691 kg/tkm",
    ),
    FactorRow(
        "mode", "sea", "g CO2e/tkm", D("16.12"), D("3.65"), DESNZ_FREIGHT,
        "TTW 27_320_3235_14_1 (Freighting goods > Cargo ship > Container ship > Average > tonne.km); "
        "WTT 28_916_3235_14_1 (WTT- delivery vehs & freight > WTT- cargo ship > Container ship > Average)",
        "TTW 0.01612, WTT 0.00365 kg/tkm (published WTT row; the first edition derived 3.57)",
    ),
    FactorRow(
        "mode", "air", "g CO2e/tkm", D("531.30"), D("135.16"), DESNZ_FREIGHT,
        "TTW 27_317_3159_14_1 (Freighting goods > Freight flights > International, to/from non-UK > Without RF "
        "> tonne.km); WTT 28_913_3159_14_1 (WTT- delivery vehs & freight > WTT- freight flights > International, "
        "to/from non-UK > Without RF)",
        "TTW 0.5313, WTT 0.13516 kg/tkm, without radiative forcing (ISO 14083 excludes non-CO2 effects). "
        "Per great-circle tonne-km; DESNZ includes an 8 % distance uplift in aviation factors",
    ),
    FactorRow(
        "mode", "inland_waterway", "g CO2e/tkm", D("14.07"), D("3.19"), DESNZ_FREIGHT,
        "TTW 27_320_3224_14_1 (Freighting goods > Cargo ship > General cargo > 0-4999 dwt > tonne.km); "
        "WTT 28_916_3224_14_1 (WTT- delivery vehs & freight > WTT- cargo ship > General cargo > 0-4999 dwt)",
        "APPROXIMATION (proxy vessel): DESNZ has no inland-waterway row; the smallest general cargo ship "
        "stands in for a barge. TTW 0.01407, WTT 0.00319 kg/tkm (both published rows)",
    ),
)  # fmt: skip

# Whether each mode default's source includes empty running (for the short report, ISO 14083
# Table 12). DESNZ freight intensities are fleet emissions over tonne-km carried (load factors from
# fleet statistics, e.g. the DfT road goods survey for HGVs), so empty and part-loaded running are in
# the average (DESNZ conversion factors methodology paper, freight sections).
DEFAULT_EMPTY_RUNNING: dict[str, str] = dict.fromkeys(
    ("road", "rail", "sea", "air", "inland_waterway"),
    "included: fleet-average intensity per tonne-km carried, empty and part-loaded running in the average",
)

# kg CO2e per litre (diesel, petrol, hvo), per kg (cng, lng, hfo, mgo, jet_kerosene), per kWh (electricity).
# Rows published per tonne are divided by 1000 (5 decimals).
FUEL_FACTORS: tuple[FactorRow, ...] = (
    FactorRow(
        "fuel", "diesel", "kg CO2e/litre", D("2.57082"), D("0.61101"), DESNZ_FUELS,
        "TTW 1_101_1011_8_1 (Fuels > Liquid fuels > Diesel (average biofuel blend) > litres); "
        "WTT 11_101_1011_8_1 (WTT- fuels > Liquid fuels > Diesel (average biofuel blend) > litres)",
    ),
    FactorRow(
        "fuel", "petrol", "kg CO2e/litre", D("2.06916"), D("0.58094"), DESNZ_FUELS,
        "TTW 1_101_1017_8_1 (Fuels > Liquid fuels > Petrol (average biofuel blend) > litres); "
        "WTT 11_101_1017_8_1 (WTT- fuels > Liquid fuels > Petrol (average biofuel blend) > litres)",
    ),
    FactorRow(
        "fuel", "hvo", "kg CO2e/litre", D("0.03558"), D("0.56439"), DESNZ_FUELS,
        "TTW 2_103_1036_8_1 (Bioenergy > Biofuel > Biodiesel HVO > litres, CH4 and N2O); "
        "WTT 12_900_1036_8_1 (WTT- bioenergy > WTT- biofuel > Biodiesel HVO > litres)",
        "TTW = the combustion CH4 and N2O DESNZ publishes; the biogenic CO2 of combustion (99_103_1036_8_2, "
        "outside the scopes) counts zero, as DESNZ and ISO 14083 report it apart",
    ),
    FactorRow(
        "fuel", "cng", "kg CO2e/kg", D("2.57546"), D("0.53078"), DESNZ_FUELS,
        "TTW 1_100_1001_15_1 (Fuels > Gaseous fuels > CNG > tonnes, 2575.46441); "
        "WTT 11_100_1001_15_1 (WTT- fuels > Gaseous fuels > CNG > tonnes, 530.77887)",
    ),
    FactorRow(
        "fuel", "lng", "kg CO2e/kg", D("2.60330"), D("0.91223"), DESNZ_FUELS,
        "TTW 1_100_1002_15_1 (Fuels > Gaseous fuels > LNG > tonnes, 2603.30441); "
        "WTT 11_100_1002_15_1 (WTT- fuels > Gaseous fuels > LNG > tonnes, 912.22817)",
    ),
    FactorRow(
        "fuel", "hfo", "kg CO2e/kg", D("3.15475"), D("0.71487"), DESNZ_FUELS,
        "TTW 1_101_1024_15_1 (Fuels > Liquid fuels > Marine fuel oil > tonnes, 3154.75334); "
        "WTT 11_101_1024_15_1 (WTT- fuels > Liquid fuels > Marine fuel oil > tonnes, 714.86545)",
        "Marine fuel oil rows (the first edition used generic Fuel oil, 3228.89). DESNZ publishes the same WTT "
        "value for marine and generic fuel oil",
    ),
    FactorRow(
        "fuel", "mgo", "kg CO2e/kg", D("3.24530"), D("0.74384"), DESNZ_FUELS,
        "TTW 1_101_1023_15_1 (Fuels > Liquid fuels > Marine gas oil > tonnes, 3245.30441); "
        "WTT 11_101_1023_15_1 (WTT- fuels > Liquid fuels > Marine gas oil > tonnes, 743.83524)",
        "Marine gas oil rows (the first edition used generic Gas oil, 3226.58). DESNZ publishes the same WTT "
        "value for marine and generic gas oil",
    ),
    FactorRow(
        "fuel", "jet_kerosene", "kg CO2e/kg", D("3.17837"), D("0.66179"), DESNZ_FUELS,
        "TTW 1_101_1009_15_1 (Fuels > Liquid fuels > Aviation turbine fuel > tonnes, 3178.3652); "
        "WTT 11_101_1009_15_1 (WTT- fuels > Liquid fuels > Aviation turbine fuel > tonnes, 661.79468)",
    ),
    FactorRow(
        "fuel", "electricity", "kg CO2e/kWh", D("0"), D("0.24540"), "DESNZ 2025, UK electricity, T&D and their WTT",
        "WTT 7_400_4000_5_1 (UK electricity > Electricity: UK > kWh, 0.177) + 13_402_4000_5_1 (Transmission and "
        "distribution > T&D- UK electricity > kWh, 0.01853) + 15_917_4000_5_1 (WTT- UK electricity > "
        "generation, 0.0459) + 15_918_4000_5_1 (WTT- UK electricity > T&D, 0.00397)",
        "TTW of electric traction is zero; energy provision (WTT) = generation, T&D losses and the upstream "
        "of both (ISO 14083). The UK grid (electricity_country GB); other countries use their grid row. The v2 "
        "edition omitted the two upstream rows (0.19553)",
    ),
)  # fmt: skip

EMBER = "Ember, Yearly electricity data (CC BY 4.0), emissions intensity, gCO2e/kWh, lifecycle"
EMBER_VERSION = "yearly data, 2023 (Europe) and 2022 (US, China)"
# Location-based grid electricity, kg CO2e per kWh (ISO 14083 energy provision: TTW 0, WTT the grid
# mix). (ISO 3166-1 alpha-2, Ember country code, Ember year, gCO2e/kWh as published.)
GRID_ROWS: tuple[tuple[str, str, int, str], ...] = (
    ("AT", "AUT", 2023, "110.81"), ("BE", "BEL", 2023, "138.11"), ("BG", "BGR", 2023, "335.33"),
    ("HR", "HRV", 2023, "204.96"), ("CY", "CYP", 2023, "534.32"), ("CZ", "CZE", 2023, "449.72"),
    ("DK", "DNK", 2023, "151.65"), ("EE", "EST", 2023, "416.67"), ("FI", "FIN", 2023, "79.16"),
    ("FR", "FRA", 2023, "56.04"), ("DE", "DEU", 2023, "380.95"), ("GR", "GRC", 2023, "336.57"),
    ("HU", "HUN", 2023, "204.19"), ("IE", "IRL", 2023, "290.81"), ("IT", "ITA", 2023, "330.72"),
    ("LV", "LVA", 2023, "123.2"), ("LT", "LTU", 2023, "160.07"), ("LU", "LUX", 2023, "105.26"),
    ("MT", "MLT", 2023, "459.14"), ("NL", "NLD", 2023, "267.62"), ("PL", "POL", 2023, "661.93"),
    ("PT", "PRT", 2023, "165.55"), ("RO", "ROU", 2023, "240.58"), ("SK", "SVK", 2023, "116.77"),
    ("SI", "SVN", 2023, "231.28"), ("ES", "ESP", 2023, "174.05"), ("SE", "SWE", 2023, "40.7"),
    ("NO", "NOR", 2023, "30.08"), ("CH", "CHE", 2023, "34.84"),
    ("US", "USA", 2022, "385.98"), ("CN", "CHN", 2022, "585.82"),
)  # fmt: skip
_UK = next(r for r in FUEL_FACTORS if r.key == "electricity")
GRID_FACTORS: tuple[FactorRow, ...] = (
    FactorRow(
        "grid", "GB", _UK.unit, _UK.ttw, _UK.wtt, _UK.source, _UK.source_row_id,
        "UK grid (DESNZ 2025): generation, T&D losses and the upstream of both",
    ),
    *(
        FactorRow(
            "grid", alpha2, "kg CO2e/kWh", D(0), (D(g) / 1000).quantize(D("0.00001")), EMBER,
            f"WTT Ember {alpha3} {year} (Yearly electricity data > {alpha3} > Emissions intensity > gCO2e per kWh, "
            f"{g})",
            "Location-based grid mix, lifecycle emissions of generation (fuel supply included); transmission and "
            "distribution losses are not in the published figure (APPROXIMATION against the UK row, which has them)",
            dataset="Ember, Yearly electricity data",
            dataset_version=EMBER_VERSION,
        )
        for alpha2, alpha3, year, g in GRID_ROWS
    ),
)  # fmt: skip
GRID_COUNTRIES: frozenset[str] = frozenset(r.key for r in GRID_FACTORS)

ALL_FACTORS: tuple[FactorRow, ...] = MODE_FACTORS + FUEL_FACTORS + GRID_FACTORS


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
