"""methodology_statement: how the figures were computed, as Markdown."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, BinaryIO

from evidence_gateway.artifacts import iso_report
from evidence_gateway.artifacts.data import PackData, Rows
from evidence_gateway.artifacts.text import cell, fixed, iso, md_table, period

CONTENT_TYPE = "text/markdown; charset=utf-8"
SUFFIX = "methodology.md"
NEEDS_ROWS = True

_CATEGORIES = (
    ("primary", "fuel or energy actually used x allocation share (mass / vehicle payload, or the carrier's share) "
     "x fuel factor (TTW and WTT)"),
    ("secondary, modelled", "carrier-specific intensity (given as WTW or TTW; the other part derived from the "
     "mode's published ratio) x tonne-km"),
    ("secondary, default", "published mode default intensity (TTW and WTT) x tonne-km; also fuel rows that carry "
     "no allocation data"),
)  # fmt: skip
# Runs calculated before the ISO 14083 activity basis (their iso14083_json names no basis).
_LEGACY_DISTANCES = (
    ("actual", "used as given (air: divided by 1.08, the uplift DESNZ builds into its per-great-circle factors)"),
    ("sfd", "x 1.05 road, rail, inland waterway; x 1.15 sea (GLEC distance adjustment); air: as a great circle"),
    ("gcd", "air: as given; surface modes: adjusted like an SFD and reported (gcd_surface_mode)"),
)


def _distances(summary: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """The distance rules the run used, from its own iso14083_json."""
    if not summary.get("activity_distance_basis"):
        return "tonne-km = distance on the factor's basis x mass", list(_LEGACY_DISTANCES)
    factors = summary.get("distance_adjustment_factors") or {}
    daf = ", ".join(f"{m.replace('_', ' ')} {v}" for m, v in sorted(factors.items()))
    air = summary.get("air_gcd_correction_km", "95")
    return (
        "tonne-km = the ISO 14083 activity distance (SFD for surface modes, GCD for air) x mass",
        [
            ("actual", f"surface: SFD = actual / DAF ({daf}), 6 decimals; air: GCD = actual - {air} km (a flight "
             f"of {air} km or less is taken as the GCD and flagged air_actual_too_short)"),
            ("sfd", "the activity distance as given; emissions on a per-actual-km intensity use SFD x DAF"),
            ("gcd", "air: the activity distance as given (the DESNZ air intensity is per GCD); surface modes: taken "
             "as the SFD and reported (gcd_surface_mode)"),
        ],
    )  # fmt: skip


def build(data: PackData, rows: Rows = ()) -> str:
    ws, run, m = data.workspace, data.run, data.methodology
    activity, distances = _distances(run.iso14083)
    parts = [
        f"# Methodology statement: {ws.name}\n",
        f"- Reporting period: {period(ws.reporting_period_start, ws.reporting_period_end)}",
        f"- Calculation run: `{run.id}` (completed {iso(run.completed_at) or 'n/a'})",
        f"- Rerun hash: `{run.rerun_hash or 'n/a'}`\n",
        "## Standard\n",
        "Emissions follow ISO 14083:2023 and the GLEC Framework v3: each shipment's transport activity "
        f"({activity}) times an emission intensity, or the fuel or "
        "energy actually used, allocated to the shipment, times a fuel factor. Every result carries TTW, "
        "WTT and WTW (= TTW + WTT); the profile picks the headline. Data categories, best first:\n",
        md_table(["ISO 14083 data category", "Method"], _CATEGORIES),
        "Distance types and the distance adjustment (activity and intensity on the same basis):\n",
        md_table(["Distance type given", "Activity distance and adjustment"], distances),
        "Rows missing mode, distance or mass are excluded from the totals and estimated with the mode's "
        "default factors (missing measures: the mean of the included rows of that mode); the estimate is "
        "reported in the quality report. Rows dated outside the reporting period stay in and are flagged.\n",
    ]
    if m is not None:
        parts += [
            "## Methodology profile\n",
            f"- Profile: {m.name} (`{m.code}`, id `{m.profile_id}`)",
            f"- Boundary: {m.boundary} ({'well-to-wheel' if m.boundary == 'WTW' else 'tank-to-wheel'})",
            f"- Description: {m.description}\n",
            "## Emission factors\n",
            f"- Factor version: {m.factor_version_name} (`{m.factor_version_code}`, id `{m.factor_version_id}`)",
            f"- Published: {iso(m.factor_version_published_on) or 'n/a'}",
            f"- Source: {m.factor_version_source}\n",
            md_table(
                ["Factor", "Unit", "TTW", "WTT", "WTW", "Dataset", "Version", "Source rows", "Note"],
                (
                    (
                        f.ref(m.factor_version_code),
                        f.unit,
                        fixed(f.ttw_value, 5),
                        fixed(Decimal(repr(f.wtw_value)) - Decimal(repr(f.ttw_value)), 5),
                        fixed(f.wtw_value, 5),
                        f.dataset or f.source,
                        f.dataset_version or "",
                        f.source_row_id or "",
                        f.note,
                    )
                    for f in m.factors
                ),
            ),  # fmt: skip
        ]
    else:
        parts.append("## Methodology profile\n\nThe run names no methodology profile.\n")
    if data.legacy_report is not None:
        lr = data.legacy_report
        parts += [
            "## Legacy report\n",
            f"Figures carried over from legacy report {lr.title!r} (`{lr.id}`), period "
            f"{period(lr.reporting_period_start, lr.reporting_period_end)}, {cell(lr.total_co2e_kg)} kg CO2e, "
            f"{lr.shipment_count} shipments.\n",
        ]
    parts += [
        "## iLEAP export\n",
        "TOCs are per TEU-km (`TEUkm`) where every row of the TOC gives a TEU count (`teu`), and per tonne-km "
        "(`tkm`) otherwise: a row without a TEU count carries only a mass, so its activity can only be "
        "stated in tonne-km. A TOC's id is a hash of its mode, data category, energy carrier, intensities, "
        "unit, factor source and version. Where a carrier gave one boundary, the other is derived from the "
        "mode's published ratio and the TOC's comment says so; default and carrier TOCs state the fuel the "
        "published intensity assumes, with its consumption derived from the TTW intensity.\n",
        "## ISO 14083 short report (ISO 14083:2023, chapter 13)\n",
        *short_report(data, rows),
    ]
    assumptions = json.dumps(run.assumptions_snapshot, sort_keys=True, indent=2, ensure_ascii=False, default=str)
    parts += ["## Assumptions snapshot\n", "```json", assumptions, "```", ""]
    return "\n".join(parts)


def short_report(data: PackData, rows: Rows) -> list[str]:
    """The same blocks the summary PDF prints, as Markdown."""
    out: list[str] = []
    for kind, value in iso_report.build(data, iso_report.Tally.of(rows)):
        if kind == "h":
            out.append(f"### {value}\n")
        elif kind == "p":
            out.append(f"{value}\n")
        else:
            header, *body = value
            out.append(md_table(header, body))
    return out


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    out.write(build(data, rows).encode("utf-8"))
