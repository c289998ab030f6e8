"""The ISO 14083 short report (ISO 14083:2023 chapter 13; CLECAT/UBA *Guide to ISO 14083*, Tables 10-13)
as plain blocks, so the summary PDF and the methodology statement print the same content.

``build(data, tally)`` gives headings, paragraphs and tables; ``Tally`` collects from the shipment rows
what the run's totals do not hold (distance types per mode, shipments, fuels used). Every figure is
read from the run's stored totals or the rows, never recomputed on another basis, so the report
follows whatever the engine stores as the transport activity.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from evidence_gateway.artifacts.data import FactorInfo, PackData, ShipmentLine
from evidence_gateway.artifacts.fuel_properties import FUEL_PROPERTIES, GWP_SET, SECONDARY_MODELS, per_mj
from evidence_gateway.artifacts.text import number, period

Block = tuple[str, Any]  # ("h", text) | ("p", text) | ("table", (header, rows))

CONFORMANCE = "calculated in accordance with ISO 14083:2023"
CATEGORY_NAMES = {
    "primary": "Primary data (fuel or energy used, allocated)",
    "secondary_modelled": "Secondary data, modelled (carrier intensity)",
    "secondary_default": "Secondary data, default (published intensity)",
}


@dataclass(slots=True)
class Tally:
    """What the report needs from the shipment rows: one pass, small sums."""

    distance: dict[str, dict[str, int]] = field(default_factory=dict)  # mode -> distance type -> rows
    shipments: set[str] = field(default_factory=set)
    legs: int = 0
    fuels: dict[str, int] = field(default_factory=dict)  # fuel -> primary rows

    def add(self, line: ShipmentLine) -> None:
        if not line.included or line.mode is None:
            return
        self.legs += 1
        self.shipments.add(line.external_id or str(line.shipment_id))
        types = self.distance.setdefault(line.mode, {})
        dtype = line.distance_type_used or "actual"
        types[dtype] = types.get(dtype, 0) + 1
        if line.data_category == "primary" and line.fuel_type:
            self.fuels[line.fuel_type] = self.fuels.get(line.fuel_type, 0) + 1

    @classmethod
    def of(cls, rows: Iterable[ShipmentLine]) -> Tally:
        tally = cls()
        for line in rows:
            tally.add(line)
        return tally


def _g_per_tkm(kg: float | None, tkm: float | None) -> str:
    if kg is None or not tkm:
        return "n/a"
    return number(float(Decimal(repr(kg)) * 1000 / Decimal(repr(tkm))), 2)


def hubs_of(data: PackData) -> dict[str, Any]:
    """The run's hub summary (empty when the run had no hub rows)."""
    return data.run.hubs


def overall(data: PackData) -> list[list[str]]:
    """Transport chain totals and intensities: g_T,TC (WTW) and g_O,TC (TTW) over the run's t·km."""
    run, hubs = data.run, hubs_of(data)
    hub_wtw, hub_ttw = float(hubs.get("co2e_wtw_kg") or 0.0), float(hubs.get("co2e_ttw_kg") or 0.0)
    wtw = None if run.total_co2e_wtw_kg is None else run.total_co2e_wtw_kg + hub_wtw
    ttw = None if run.total_co2e_ttw_kg is None else run.total_co2e_ttw_kg + hub_ttw
    return [
        ["Quantity", "Value"],
        ["GHG emissions, well-to-wheel (G_T,TC), kg CO2e", number(wtw)],
        ["GHG emissions, tank-to-wheel (G_O,TC), kg CO2e", number(ttw)],
        ["of which hub operations, WTW / TTW, kg CO2e", f"{number(hub_wtw)} / {number(hub_ttw)}"],
        ["Transport activity, t·km", number(run.total_tonne_km)],
        ["Emission intensity g_T,TC (WTW), g CO2e/t·km", _g_per_tkm(wtw, run.total_tonne_km)],
        ["Emission intensity g_O,TC (TTW), g CO2e/t·km", _g_per_tkm(ttw, run.total_tonne_km)],
    ]


def by_mode(data: PackData, tally: Tally) -> list[list[str]]:
    basis = data.run.iso14083.get("activity_distance_basis") or {}
    table = [
        ["Mode", "WTW kg", "TTW kg", "t·km", "WTW g/t·km", "TTW g/t·km", "Activity distance",
         "Distance types given (rows)"]
    ]  # fmt: skip
    for mode, t in sorted(data.run.totals_by_mode.items()):
        wtw, ttw, tkm = t.get("co2e_wtw_kg"), t.get("co2e_ttw_kg"), t.get("tonne_km")
        types = ", ".join(f"{k.upper()} ({n})" for k, n in sorted(tally.distance.get(mode, {}).items()))
        table.append(
            [
                mode, number(wtw), number(ttw), number(tkm), _g_per_tkm(wtw, tkm), _g_per_tkm(ttw, tkm),
                str(basis[mode]).upper() if mode in basis else "as given", types or "n/a",
            ]
        )  # fmt: skip
    return table


def activity_basis(data: PackData) -> str:
    """How the t·km and intensities are measured: the ISO 14083 activity distance and the conversions
    the run used (read from the run, so a run calculated under other rules states its own)."""
    iso = data.run.iso14083
    daf = iso.get("distance_adjustment_factors") or {}
    if not iso.get("activity_distance_basis"):
        return (
            "Transport activity is the mass times the distance of each row on its emission factor's basis; "
            "the distance type given per row and its adjustment are listed in the methodology statement."
        )
    factors = ", ".join(f"{mode.replace('_', ' ')} {value}" for mode, value in sorted(daf.items()))
    return (
        "Transport activity (t·km) and every intensity are on the ISO 14083 activity basis only: the shortest "
        "feasible distance (SFD) for surface modes, the great-circle distance (GCD) for air, times the mass; "
        f"no other distance is mixed in. An actual distance is converted as SFD = actual / DAF ({factors}; "
        "GLEC Framework v3, CLECAT/UBA Guide to ISO 14083) and, for air, GCD = actual - "
        f"{iso.get('air_gcd_correction_km', '95')} km. Emissions stay on the basis of the intensity used "
        "(DESNZ default intensities are per actual t·km on surface modes and per GCD t·km for air; a carrier "
        "intensity on the basis it declares)."
    )


def categories(data: PackData) -> list[list[str]]:
    iso = data.run.iso14083
    total = sum(float(c.get("co2e_wtw_kg") or 0.0) for c in (iso.get("data_categories") or {}).values())
    table = [["ISO 14083 data category", "Rows", "WTW kg", "Share of WTW", "t·km"]]
    for key, c in (iso.get("data_categories") or {}).items():
        wtw = float(c.get("co2e_wtw_kg") or 0.0)
        share = f"{number(wtw * 100 / total, 2)} %" if total > 0 else "n/a"
        table.append([CATEGORY_NAMES.get(key, key), str(c.get("rows")), number(wtw), share, number(c.get("tonne_km"))])
    return table


def hub_scope(data: PackData) -> str:
    """One sentence every report carries: the hub operations included, or the declared omission and why."""
    hubs = hubs_of(data)
    if hubs.get("included_rows"):
        return (
            f"Hub operations: {hubs['included_rows']} hub operation(s) included, "
            f"{number(hubs.get('throughput_tonnes'))} t handled, {number(hubs.get('co2e_wtw_kg'))} kg CO2e WTW."
        )
    return (
        "Hub activity: none reported. Declared omission: the import held no "
        f"{'calculable ' if hubs.get('rows') else ''}hub rows (transshipment, "
        "storage, port or airport terminal operations), so hub emissions are not included in this "
        "report; the transport chain elements cover vehicle operations only. ISO 14083 requires hub "
        "operations of the chain to be included where the data exist; they are outside this report's "
        "scope because none were supplied."
    )


def hub_section(data: PackData) -> list[Block]:
    hubs = hubs_of(data)
    if not hubs.get("included_rows"):
        return [("p", hub_scope(data))]
    table = [["Hub", "Type", "Temperature", "Throughput t", "Basis", "WTW kg", "TTW kg", "WTW kg/t"]]
    for h in hubs.get("items") or []:
        table.append(
            [
                h.get("name") or h.get("external_id") or f"hub row {h.get('row_index')}", h.get("hub_type", ""),
                h.get("temperature_control", ""), number(h.get("throughput_tonnes")),
                _HUB_BASIS.get(h.get("basis", ""), ""), number(h.get("co2e_wtw_kg")), number(h.get("co2e_ttw_kg")),
                number(h.get("intensity_wtw_kg_per_t"), 4),
            ]
        )  # fmt: skip
    out: list[Block] = [
        (
            "p",
            f"Hub activity: {number(hubs.get('throughput_tonnes'))} t handled in {hubs.get('included_rows')} hub "
            f"operation(s), {number(hubs.get('co2e_wtw_kg'))} kg CO2e WTW, {number(hubs.get('co2e_ttw_kg'))} kg TTW.",
        ),
        ("table", table),
    ]
    if hubs.get("default_source"):
        out.append(
            (
                "p",
                f"Default hub intensities: {hubs['default_source']}. The source publishes WTW only; TTW is "
                "reported at the WTW value (conservative).",
            )
        )
    skipped = int(hubs.get("rows") or 0) - int(hubs.get("included_rows") or 0)
    if skipped:
        out.append(("p", f"{skipped} hub row(s) without measured energy and without a published default: excluded."))
    return out


_HUB_BASIS = {"measured": "measured energy (primary)", "default": "default intensity", "none": "not calculated"}


def secondary_table(data: PackData) -> list[list[str]]:
    """Guide Table 12: the model behind each default intensity, its load factor, empty trips, vehicle class."""
    m = data.methodology
    table = [["Mode", "Source / model", "Vehicle class", "Load factor", "Empty trips"]]
    modes = sorted(data.run.totals_by_mode) or sorted(SECONDARY_MODELS)
    for mode in modes:
        doc = SECONDARY_MODELS.get(mode)
        factor = next((f for f in (m.factors if m else []) if f.kind == "mode" and f.key == mode), None)
        source = f"{factor.dataset or factor.source} ({factor.dataset_version or ''})".strip() if factor else "n/a"
        if doc is None:
            table.append([mode, source, "n/a", "n/a", "n/a"])
        else:
            table.append([mode, f"{source}; {doc.model}", doc.vehicle_class, doc.load_factor, doc.empty_trips])
    return table


def fuel_table(data: PackData, tally: Tally) -> list[list[str]]:
    """Guide Table 13: per energy carrier LHV, density, g CO2e/MJ TTW and WTW, blend, source."""
    m = data.methodology
    table = [["Fuel", "Primary rows", "LHV MJ/kg", "Density kg/l", "TTW g/MJ", "WTW g/MJ", "Blend", "Source"]]
    fuels: list[FactorInfo] = [f for f in (m.factors if m else []) if f.kind == "fuel"]
    for f in fuels:
        props = FUEL_PROPERTIES.get(f.key)
        ttw, wtw = per_mj(f.key, f.unit, f.ttw_value), per_mj(f.key, f.unit, f.wtw_value)
        table.append(
            [
                f.key, str(tally.fuels.get(f.key, 0)),
                "n/a" if props is None or props.lhv is None else str(props.lhv),
                "n/a" if props is None or props.density is None else str(props.density),
                "n/a" if ttw is None else number(ttw, 2), "n/a" if wtw is None else number(wtw, 2),
                props.blend if props else "n/a",
                f"{f.dataset or f.source}; {props.source if props else 'no fuel properties'}",
            ]
        )  # fmt: skip
    return table


def exclusions(data: PackData) -> list[str]:
    ex = data.run.iso14083.get("excluded") or {}
    out = [
        f"Rows excluded: {ex.get('rows', 0)} row(s) without mode, distance or mass, estimated with default "
        f"factors at {number(ex.get('co2e_wtw_kg'))} kg CO2e WTW / {number(ex.get('co2e_ttw_kg'))} kg TTW "
        "(reported, not in the totals).",
        "Beyond rows: vehicle and infrastructure construction, maintenance and end of life (outside the ISO "
        "14083 boundary); non-CO2 effects of aviation (radiative forcing, excluded by ISO 14083); refrigerant "
        "leakage and temperature control (no data supplied); biogenic CO2 of biofuel combustion (reported as zero, "
        "per DESNZ).",
    ]
    if not hubs_of(data).get("included_rows"):
        out.append("Hub operations: no calculable hub rows were supplied (declared omission above).")
    return out


def build(data: PackData, tally: Tally) -> list[Block]:
    """The short report: conformance, results, activity, data, fuels, GWP, boundaries and exclusions."""
    ws, run, m, iso = data.workspace, data.run, data.methodology, data.run.iso14083
    if not iso:
        return [("p", "This run predates the ISO 14083 summary (or used a legacy report).")]
    modes = ", ".join(sorted(run.totals_by_mode)) or "none"
    share = iso.get("primary_data_share") or {}
    hub_state = "included" if hubs_of(data).get("included_rows") else "none reported"
    blocks: list[Block] = [
        (
            "p",
            f"Conformance: the GHG emissions of the services below were {CONFORMANCE} (Greenhouse gases - "
            "Quantification and reporting of greenhouse gas emissions arising from transport chain operations) "
            "and the GLEC Framework v3. Services covered: freight transport of workspace "
            f"{ws.name!r}, reporting period {period(ws.reporting_period_start, ws.reporting_period_end)}, "
            f"{len(tally.shipments)} shipment(s) in {tally.legs} transport chain element(s) by {modes}; "
            f"hub operations: {hub_state}. Headline boundary "
            f"{iso.get('headline_boundary')}; both WTW and TTW are reported.",
        ),
        ("h", "Results of the transport chain"),
        ("table", overall(data)),
        ("h", "Results per mode and distance type"),
        ("table", by_mode(data, tally)),
        ("p", activity_basis(data)),
        ("h", "Hub activity"),
        *hub_section(data),
        ("h", "Data categories"),
        ("table", categories(data)),
        (
            "p",
            f"Primary data share: {number(share.get('by_emissions_wtw_percent'), 2)} % of WTW emissions, "
            f"{number(share.get('by_rows_percent'), 2)} % of usable rows. Coverage: "
            f"{number(iso.get('coverage_tonne_km_percent'), 2)} % of t·km.",
        ),
        ("h", "Secondary data (default intensities)"),
        ("table", secondary_table(data)),
        ("h", "Fuels and energy carriers"),
        ("table", fuel_table(data, tally)),
        ("h", "Global warming potentials and boundaries"),
        ("p", f"GWP set: {GWP_SET}."),
        (
            "p",
            "Energy provision: WTT covers extraction, production, processing and distribution of fuels and, for "
            "electricity, generation and transmission and distribution losses with their upstream. Emissions from "
            "building energy-provision infrastructure (plants, refineries, grids) are not included (the DESNZ "
            "factors do not include them).",
        ),
        ("h", "Exclusions"),
        *(("p", text) for text in exclusions(data)),
    ]
    if m is not None:
        sources = sorted({f"{f.dataset} ({f.dataset_version})" for f in m.factors if f.dataset})
        blocks.append(
            (
                "p",
                f"Factor sources: {'; '.join(sources) or m.factor_version_source} - version {m.factor_version_code}; "
                "each factor's source rows are listed in the methodology statement.",
            )
        )
    return blocks
