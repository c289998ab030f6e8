"""Reference data the short report documents (CLECAT/UBA *Guide to ISO 14083*, Tables 12 and 13).

Fuel properties: lower heating value (LHV) and density per fuel, so the published DESNZ factors per
litre, kg or kWh can be restated per MJ (the guide's Table 13). Values: EN 16258:2012 Annex A
(Table A.1), which the GLEC Framework restates; LNG and HVO are not in EN 16258 and are taken from
the GLEC Framework v3 fuel table. A missing value prints as n/a, never a guess.
"""

from __future__ import annotations

from decimal import Decimal
from typing import NamedTuple

EN16258 = "LHV and density: EN 16258:2012 Annex A, Table A.1"
GLEC_V3 = "LHV and density: GLEC Framework v3, fuel table"
GWP_SET = (
    "IPCC Fifth Assessment Report (AR5), 100-year GWPs (CO2 = 1, CH4 = 28, N2O = 265), the set the DESNZ 2025 "
    "conversion factors use"
)
MJ_PER_KWH = Decimal("3.6")


class FuelProperties(NamedTuple):
    lhv: Decimal | None  # MJ per kg
    density: Decimal | None  # kg per litre
    blend: str
    source: str


D = Decimal
# The factor is per litre of the blend; EN 16258's LHV and density here are the fossil fuel's.
_FOSSIL = "LHV and density of the fossil fuel (APPROXIMATION: the blend's LHV is slightly lower)"
FUEL_PROPERTIES: dict[str, FuelProperties] = {
    "diesel": FuelProperties(
        D("43.1"), D("0.832"), f"UK average biofuel blend (DESNZ 'average biofuel blend'); {_FOSSIL}", EN16258
    ),
    "petrol": FuelProperties(
        D("43.2"), D("0.745"), f"UK average biofuel blend (DESNZ 'average biofuel blend'); {_FOSSIL}", EN16258
    ),
    "hvo": FuelProperties(D("44.0"), D("0.780"), "100 % HVO (biogenic CO2 counted as zero)", GLEC_V3),
    "cng": FuelProperties(D("45.1"), None, "fossil natural gas, no blend", EN16258),
    "lng": FuelProperties(D("49.1"), None, "fossil natural gas, no blend", GLEC_V3),
    "hfo": FuelProperties(D("40.5"), D("0.970"), "fossil, no blend", EN16258),
    "mgo": FuelProperties(D("43.0"), D("0.890"), "fossil, no blend", EN16258),
    "jet_kerosene": FuelProperties(D("44.1"), D("0.800"), "fossil, no blend", EN16258),
    "electricity": FuelProperties(
        None, None, "grid mix (location-based); the GB row shown, other grids in the factor table", "1 kWh = 3.6 MJ"
    ),
}


def per_mj(fuel: str, unit: str, kg_per_unit: float) -> float | None:
    """g CO2e per MJ of a factor given in kg CO2e per litre, kg or kWh; None without the properties."""
    props = FUEL_PROPERTIES.get(fuel)
    value = Decimal(repr(kg_per_unit)) * 1000
    per = unit.removeprefix("kg CO2e/")
    if per == "kWh":
        return float(value / MJ_PER_KWH)
    if props is None or props.lhv is None:
        return None
    if per == "kg":
        return float(value / props.lhv)
    if per == "litre" and props.density is not None:
        return float(value / (props.lhv * props.density))
    return None


class SecondaryModel(NamedTuple):
    """Guide Table 12: what lies behind a published default intensity."""

    model: str
    vehicle_class: str
    load_factor: str
    empty_trips: str


_AVERAGE = "fleet average as modelled by DESNZ (no single load factor published with the row)"
SECONDARY_MODELS: dict[str, SecondaryModel] = {
    "road": SecondaryModel(
        "DESNZ freight model from UK road freight statistics (CSRGT)",
        "HGV, all diesel, all HGVs (rigid and articulated)",
        f"average laden; {_AVERAGE}",
        "included: the average-laden tonne-km factor spreads empty running over the laden tonne-km",
    ),
    "rail": SecondaryModel(
        "DESNZ freight model from UK rail freight statistics",
        "freight train, UK average (diesel and electric traction)",
        _AVERAGE,
        "included in the fleet average",
    ),
    "sea": SecondaryModel(
        "DESNZ freight model from IMO GHG study fleet data",
        "container ship, average size",
        _AVERAGE,
        "ballast and repositioning legs within the fleet average",
    ),
    "air": SecondaryModel(
        "DESNZ freight model (international freight flights, without radiative forcing)",
        "freight flight, international to/from non-UK, average aircraft",
        _AVERAGE,
        "not modelled separately (average of operated flights)",
    ),
    "inland_waterway": SecondaryModel(
        "DESNZ general cargo ship 0-4999 dwt as a proxy (DESNZ has no inland-waterway row)",
        "general cargo vessel, 0-4999 dwt (proxy for a barge)",
        _AVERAGE,
        "within the fleet average of the proxy vessel",
    ),
}
