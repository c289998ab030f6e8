"""methodology_statement: how the figures were computed, as Markdown."""

from __future__ import annotations

import json
from typing import BinaryIO

from evidence_gateway.artifacts.data import PackData, Rows
from evidence_gateway.artifacts.text import cell, iso, md_table, period

CONTENT_TYPE = "text/markdown; charset=utf-8"
SUFFIX = "methodology.md"
NEEDS_ROWS = False

_TIERS = (
    ("primary", "fuel or energy actually used x fuel factor"),
    ("secondary", "carrier-specific intensity (g CO2e/tkm) x tonne-km"),
    ("default", "mode default intensity x tonne-km, measured distance"),
    ("modelled", "mode default intensity x tonne-km, modelled distance"),
)


def build(data: PackData) -> str:
    ws, run, m = data.workspace, data.run, data.methodology
    parts = [
        f"# Methodology statement: {ws.name}\n",
        f"- Reporting period: {period(ws.reporting_period_start, ws.reporting_period_end)}",
        f"- Calculation run: `{run.id}` (completed {iso(run.completed_at) or 'n/a'})",
        f"- Rerun hash: `{run.rerun_hash or 'n/a'}`\n",
        "## Standard\n",
        "Emissions follow the ISO 14083 / GLEC Framework approach: each shipment's transport "
        "activity (tonne-km = distance x mass) times an emission intensity, or the fuel or energy "
        "actually used times a fuel factor. Each shipment uses the best data available, in this order:\n",
        md_table(["Data tier", "Method"], _TIERS),
        "Rows missing mode, distance or mass are not calculated; they are counted in the quality report.\n",
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
                ["Kind", "Key", "Unit", "WTW", "TTW", "Source", "Note"],
                ((f.kind, f.key, f.unit, f.wtw_value, f.ttw_value, f.source, f.note) for f in m.factors),
            ),
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
    assumptions = json.dumps(run.assumptions_snapshot, sort_keys=True, indent=2, ensure_ascii=False, default=str)
    parts += ["## Assumptions snapshot\n", "```json", assumptions, "```", ""]
    return "\n".join(parts)


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    out.write(build(data).encode("utf-8"))
