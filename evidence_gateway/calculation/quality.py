"""Data-quality rules: which fired, how often, and the assessment numbers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evidence_gateway.calculation.engine import TIERS, EngineResult, largest_remainder_percentages
from evidence_gateway.calculation.flags import (
    AIR_ACTUAL_TOO_SHORT,
    DISTANCE_ADJUSTED,
    ELECTRICITY_COUNTRY_MISSING,
    EMPTY_RUNNING_ADDED,
    EMPTY_RUNNING_NOT_DECLARED,
    FUEL_NOT_ALLOCATED,
    GCD_SURFACE_MODE,
    INTENSITY_OUT_OF_RANGE,
    MISSING_FLAG,
    OUTSIDE_PERIOD,
    PAYLOAD_BELOW_MASS,
    SHARE_ABOVE_ONE,
    TTW_DERIVED,
    WTT_DERIVED,
    ZERO_DISTANCE,
    ZERO_MASS,
)

LOW_COVERAGE_BELOW = 80.0


@dataclass(frozen=True, slots=True)
class Assessment:
    coverage_score: float
    primary_data_percent: float
    secondary_data_percent: float
    default_data_percent: float
    modelled_data_percent: float
    missing_required_fields_count: int
    flagged_shipments_count: int
    rules_triggered_json: list[dict[str, Any]]
    summary_text: str
    primary_data_share_percent: float | None = None
    primary_data_rows_percent: float | None = None
    coverage_tonne_km_percent: float | None = None
    excluded_co2e_kg: float | None = None


def rule(rule_id: str, severity: str, count: int, message: str) -> dict[str, Any]:
    return {"id": rule_id, "severity": severity, "count": count, "message": message}


def coverage(usable: int, declared: int) -> float:
    """Usable rows over declared source rows, as a percentage clamped to 0-100."""
    if declared <= 0:
        return 100.0 if usable > 0 else 0.0
    return round(min(100.0, max(0.0, usable * 100.0 / declared)), 2)


def assess_rows(
    result: EngineResult,
    *,
    declared_rows: int,
    imports_without_rows: int,
    rows_not_loaded: int,
    boundary: str,
) -> Assessment:
    pct = largest_remainder_percentages([result.tier_counts[t] for t in TIERS])
    cov = coverage(result.usable_count, declared_rows)
    rules: list[dict[str, Any]] = []
    if imports_without_rows:
        rules.append(
            rule(
                "rows_not_loaded",
                "warning",
                rows_not_loaded,
                f"{imports_without_rows} import(s) are metadata only: {rows_not_loaded} declared row(s) "
                "are not loaded, so they cannot be calculated",
            )
        )
    excluded = result.iso14083.get("excluded", {})
    if result.missing_count:
        estimate = (
            f"; estimated with default factors at {excluded.get('co2e_wtw_kg')} kg CO2e WTW "
            f"({excluded.get('co2e_ttw_kg')} kg TTW), reported apart from the totals"
            if excluded.get("estimated")
            else "; no included rows to estimate them from"
        )
        rules.append(
            rule(
                MISSING_FLAG,
                "error",
                result.missing_count,
                "rows without mode, distance_km or mass_tonnes are excluded from the totals" + estimate,
            )
        )
    flag_text = {
        ZERO_DISTANCE: "rows with a zero distance (no tonne-km)",
        ZERO_MASS: "rows with a zero mass (no tonne-km)",
        INTENSITY_OUT_OF_RANGE: "carrier intensities more than 10x above or below the mode default on the same "
        "boundary; the mode default was used instead",
        OUTSIDE_PERIOD: "rows whose shipment_date lies outside the workspace's reporting period (still counted)",
        PAYLOAD_BELOW_MASS: "rows whose vehicle_payload_tonnes is below their own mass; the fuel cannot be "
        "allocated and the mode default was used",
        SHARE_ABOVE_ONE: "fuel rows whose tonne-km exceed the vehicle's loaded tonne-km (payload x "
        "loaded_distance_km): the fuel cannot be allocated and the mode default was used",
        AIR_ACTUAL_TOO_SHORT: "air rows with an actual distance of 95 km or less: GCD = actual - 95 km cannot "
        "apply, so the distance was taken as the great-circle distance",
    }
    for flag, text in flag_text.items():
        if result.flag_counts.get(flag):
            rules.append(rule(flag, "warning", result.flag_counts[flag], text))
    note_text = {
        FUEL_NOT_ALLOCATED: (
            "warning",
            "rows with fuel but neither vehicle_payload_tonnes nor fuel_allocation_share (or zero tonne-km): "
            "a vehicle's fuel cannot be charged to one shipment, so the mode default intensity was used",
        ),
        TTW_DERIVED: ("info", "carrier intensities given as WTW: the TTW part is derived from the mode's "
                      "published TTW/WTW ratio"),
        WTT_DERIVED: ("info", "carrier intensities given as TTW: the WTT part is derived from the mode's "
                      "published WTT/TTW ratio"),
        DISTANCE_ADJUSTED: ("info", "rows whose activity or emission distance differs from the distance given: the "
                            "activity is on the "
                            "ISO 14083 basis (SFD = actual / DAF, air GCD = actual - 95 km) and emissions on the "
                            "intensity's own basis (actual = SFD x DAF, GLEC Framework v3)"),
        ELECTRICITY_COUNTRY_MISSING: ("warning", "electric rows without electricity_country or with no grid factor "
                                      "for it (stored before the country was required): the UK grid was used"),
        EMPTY_RUNNING_ADDED: ("info", "fuel rows with empty running declared: the empty km's fuel was added at "
                              "the loaded km's consumption before the tonne-km allocation"),
        EMPTY_RUNNING_NOT_DECLARED: ("warning", "allocated fuel rows without empty_distance_km or "
                                     "empty_running_share: their fuel covers the loaded km only, empty running "
                                     "is not included"),
        GCD_SURFACE_MODE: ("warning", "great-circle distances on surface modes, taken as the shortest "
                           "feasible distance"),
    }  # fmt: skip
    for note, (severity, text) in note_text.items():
        if result.note_counts.get(note):
            rules.append(rule(note, severity, result.note_counts[note], text))
    if cov < LOW_COVERAGE_BELOW:
        rules.append(
            rule(
                "low_coverage",
                "warning",
                max(0, declared_rows - result.usable_count),
                f"coverage {cov:.2f}% is below {LOW_COVERAGE_BELOW:.0f}% of the declared source rows",
            )
        )
    if result.tier_counts["default"]:
        rules.append(
            rule("default_data_used", "info", result.tier_counts["default"], "rows calculated with mode defaults")
        )
    if result.tier_counts["modelled"]:
        rules.append(rule("modelled_distance", "info", result.tier_counts["modelled"], "rows with a modelled distance"))
    share = result.iso14083.get("primary_data_share", {})
    summary = (
        f"{result.usable_count} of {declared_rows} declared row(s) usable (coverage {cov:.2f}%); "
        f"{result.total_co2e_kg:.3f} kg CO2e ({boundary}) over {result.total_tonne_km:.3f} tonne-km "
        f"(WTW {result.total_co2e_wtw_kg:.3f} kg, TTW {result.total_co2e_ttw_kg:.3f} kg); "
        f"{result.missing_count} row(s) missing required fields, {result.flagged_count} flagged."
    )
    return Assessment(
        coverage_score=cov,
        primary_data_percent=pct[0],
        secondary_data_percent=pct[1],
        default_data_percent=pct[2],
        modelled_data_percent=pct[3],
        missing_required_fields_count=result.missing_count,
        flagged_shipments_count=result.flagged_count,
        rules_triggered_json=rules,
        summary_text=summary,
        primary_data_share_percent=share.get("by_emissions_wtw_percent"),
        primary_data_rows_percent=share.get("by_rows_percent"),
        coverage_tonne_km_percent=result.iso14083.get("coverage_tonne_km_percent"),
        excluded_co2e_kg=result.excluded_co2e_kg,
    )


def assess_legacy(*, title: str, total_co2e_kg: float, shipment_count: int, boundary: str) -> Assessment:
    """No imported data: the run carries the legacy report's totals; nothing row-level to assess."""
    rules = [
        rule(
            "legacy_report_basis",
            "warning",
            shipment_count,
            f"no imports: totals taken from legacy report '{title}' as reported, not recalculated",
        ),
        rule("low_coverage", "warning", shipment_count, "no shipment rows are loaded for this workspace"),
    ]
    summary = (
        f"Calculated from legacy report '{title}': {total_co2e_kg:.3f} kg CO2e over {shipment_count} "
        f"shipment(s) as reported (boundary of the legacy report; profile {boundary} not applied)."
    )
    return Assessment(0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, rules, summary)
