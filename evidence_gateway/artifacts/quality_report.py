"""quality_report: the data-quality assessment of the run, as Markdown."""

from __future__ import annotations

from typing import BinaryIO

from evidence_gateway.artifacts.data import PackData, Rows
from evidence_gateway.artifacts.iso_report import hub_scope
from evidence_gateway.artifacts.text import fixed, iso, md_table, number

CONTENT_TYPE = "text/markdown; charset=utf-8"
SUFFIX = "quality-report.md"
NEEDS_ROWS = False


def build(data: PackData) -> str:
    q = data.quality
    parts = [f"# Data quality report: {data.workspace.name}\n", f"- Calculation run: `{data.run.id}`"]
    if q is None:
        parts.append("\nNo quality assessment was stored for this run.\n")
        return "\n".join(parts)
    parts += [
        f"- Assessment: `{q.id}` (assessed {iso(q.assessed_at)})\n",
        "## Figures\n",
        md_table(
            ["Measure", "Value"],
            [
                ("Coverage score (%)", number(q.coverage_score, 2)),
                ("Primary data (%)", number(q.primary_data_percent, 2)),
                ("Secondary data (%)", number(q.secondary_data_percent, 2)),
                ("Default data (%)", number(q.default_data_percent, 2)),
                ("Modelled data (%)", number(q.modelled_data_percent, 2)),
                ("Rows missing required fields", q.missing_required_fields_count),
                ("Flagged shipments", q.flagged_shipments_count),
                ("ISO 14083 primary data share, by WTW emissions (%)", number(q.primary_data_share_percent, 2)),
                ("ISO 14083 primary data share, by usable rows (%)", number(q.primary_data_rows_percent, 2)),
                ("Coverage by tonne-km (%)", number(q.coverage_tonne_km_percent, 2)),
                ("Excluded rows, estimated CO2e, headline boundary (kg)", fixed(q.excluded_co2e_kg) or "n/a"),
            ],
        ),
        "The four tier percentages count usable rows (primary: allocated fuel; secondary: carrier "
        "intensity; default/modelled: published default with a measured/modelled distance). The ISO "
        "14083 shares are in the run's summary and the summary PDF.\n",
        "## Rules triggered\n",
    ]
    if q.rules_triggered:
        parts.append(
            md_table(
                ["Rule", "Severity", "Count", "Message"],
                ((r.get("id"), r.get("severity"), r.get("count"), r.get("message")) for r in q.rules_triggered),
            )
        )
    else:
        parts.append("No rule fired.\n")
    parts += ["## Summary\n", (q.summary_text or "No summary.") + "\n", "## Scope\n", hub_scope(data) + "\n"]
    return "\n".join(parts)


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    out.write(build(data).encode("utf-8"))
