"""summary_pdf: a readable one-to-two page summary (workspace, period, methodology, totals, quality).

reportlab with ``invariant=1``: fixed creation date and document id, so the bytes depend only
on the content. Text is set in DejaVu Sans when the system has it (any script), else Helvetica.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, BinaryIO
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from evidence_gateway.artifacts.data import PackData, Rows
from evidence_gateway.artifacts.text import iso, number, period

CONTENT_TYPE = "application/pdf"
SUFFIX = "summary.pdf"
NEEDS_ROWS = False

_DEJAVU = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"),
)


@cache
def _fonts() -> tuple[str, str]:
    regular, bold = _DEJAVU
    if regular.exists() and bold.exists():
        pdfmetrics.registerFont(TTFont("EGSans", str(regular)))
        pdfmetrics.registerFont(TTFont("EGSans-Bold", str(bold)))
        return "EGSans", "EGSans-Bold"
    return "Helvetica", "Helvetica-Bold"


def _styles() -> dict[str, ParagraphStyle]:
    regular, bold = _fonts()
    base = getSampleStyleSheet()
    return {
        "title": ParagraphStyle("t", parent=base["Title"], fontName=bold, fontSize=16, leading=20),
        "h2": ParagraphStyle("h", parent=base["Heading2"], fontName=bold, fontSize=12, leading=15),
        "body": ParagraphStyle("b", parent=base["BodyText"], fontName=regular, fontSize=9, leading=12),
    }


def _p(text: Any, style: ParagraphStyle) -> Paragraph:
    return Paragraph(escape("" if text is None else str(text)), style)


def _table(rows: list[list[Any]], style: ParagraphStyle, widths: list[float], header: bool = True) -> Table:
    regular, bold = _fonts()
    cells = [[_p(v, style) for v in row] for row in rows]
    table = Table(cells, colWidths=widths, repeatRows=1 if header else 0, hAlign="LEFT")
    commands: list[tuple[Any, ...]] = [
        ("GRID", (0, 0), (-1, -1), 0.25, colors.grey),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]
    if header:
        commands.append(("BACKGROUND", (0, 0), (-1, 0), colors.Color(0.9, 0.92, 0.95)))
    table.setStyle(TableStyle(commands))
    return table


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    s = _styles()
    ws, run, q, m = data.workspace, data.run, data.quality, data.methodology
    doc = SimpleDocTemplate(
        out,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=16 * mm,
        bottomMargin=16 * mm,
        title=f"Emissions evidence summary: {ws.name}",
        author="Evidence Gateway",
        subject="Transport emissions evidence pack",
        creator="Evidence Gateway",
        invariant=1,
    )
    story: list[Any] = [_p(f"Transport emissions evidence: {ws.name}", s["title"])]
    facts = [
        ["Workspace", ws.name],
        ["External reference", ws.external_reference or "none"],
        ["Reporting period", period(ws.reporting_period_start, ws.reporting_period_end)],
        ["Calculation run", f"{run.id} (completed {iso(run.completed_at) or 'n/a'})"],
        ["Rerun hash", run.rerun_hash or "n/a"],
    ]
    story += [_table(facts, s["body"], [45 * mm, 125 * mm], header=False), Spacer(1, 5 * mm)]

    story.append(_p("Methodology", s["h2"]))
    if m is not None:
        boundary = "well-to-wheel" if m.boundary == "WTW" else "tank-to-wheel"
        story += [
            _p(f"{m.name} ({m.code}); boundary {m.boundary} ({boundary}).", s["body"]),
            _p(
                f"Emission factors: {m.factor_version_name} ({m.factor_version_code}). Source: "
                f"{m.factor_version_source}.",
                s["body"],
            ),  # fmt: skip
            _p(
                "ISO 14083 / GLEC approach: tonne-km x intensity, or fuel used x fuel factor; "
                "best available data tier per shipment.",
                s["body"],
            ),  # fmt: skip
        ]
    else:
        story.append(_p("The run names no methodology profile.", s["body"]))
    if data.legacy_report is not None:
        lr = data.legacy_report
        story.append(_p(f"Figures carried over from legacy report '{lr.title}' ({lr.id}).", s["body"]))
    story.append(Spacer(1, 4 * mm))

    story.append(_p("Totals", s["h2"]))
    totals = [
        ["Total CO2e (kg)", number(run.total_co2e_kg)],
        ["Total CO2e (t)", number(None if run.total_co2e_kg is None else run.total_co2e_kg / 1000.0)],
        ["Total tonne-km", number(run.total_tonne_km)],
        ["Shipments calculated", str(run.shipment_count)],
    ]
    story += [_table(totals, s["body"], [45 * mm, 60 * mm], header=False), Spacer(1, 3 * mm)]
    by_mode = [["Mode", "CO2e (kg)", "Tonne-km", "Shipments"]]
    for mode, t in sorted(run.totals_by_mode.items()):
        by_mode.append([mode, number(t.get("co2e_kg")), number(t.get("tonne_km")), str(t.get("shipment_count", ""))])
    if len(by_mode) == 1:
        by_mode.append(["(no per-mode totals)", "", "", ""])
    story += [_table(by_mode, s["body"], [40 * mm, 40 * mm, 40 * mm, 25 * mm]), Spacer(1, 4 * mm)]

    story.append(_p("Data quality", s["h2"]))
    if q is not None:
        figures = [
            ["Coverage score", f"{number(q.coverage_score, 2)} %"],
            [
                "Primary / secondary data",
                f"{number(q.primary_data_percent, 2)} % / {number(q.secondary_data_percent, 2)} %",
            ],  # fmt: skip
            [
                "Default / modelled data",
                f"{number(q.default_data_percent, 2)} % / {number(q.modelled_data_percent, 2)} %",
            ],  # fmt: skip
            ["Rows missing required fields", str(q.missing_required_fields_count)],
            ["Flagged shipments", str(q.flagged_shipments_count)],
        ]
        story += [_table(figures, s["body"], [55 * mm, 60 * mm], header=False), Spacer(1, 3 * mm)]
        if q.rules_triggered:
            rules: list[list[Any]] = [["Rule", "Severity", "Count", "Message"]]
            rules += [[r.get("id"), r.get("severity"), r.get("count"), r.get("message")] for r in q.rules_triggered]
            story += [_table(rules, s["body"], [40 * mm, 20 * mm, 15 * mm, 99 * mm]), Spacer(1, 3 * mm)]
        if q.summary_text:
            story.append(_p(q.summary_text, s["body"]))
    else:
        story.append(_p("No quality assessment was stored for this run.", s["body"]))
    story += [Spacer(1, 4 * mm), *iso14083_report(data, s)]
    story += [
        Spacer(1, 4 * mm),
        _p(f"Evidence items registered: {len(data.evidence)}. Audit trail events: {len(data.audit)}.", s["body"]),
    ]
    doc.build(story)


_CATEGORY_NAMES = {
    "primary": "Primary (fuel/energy used, allocated)",
    "secondary_modelled": "Secondary, modelled (carrier intensity)",
    "secondary_default": "Secondary, default (published factor)",
}


def iso14083_report(data: PackData, s: dict[str, ParagraphStyle]) -> list[Any]:
    """ISO 14083 short report (clause 14 of the standard): both boundaries and intensities per mode,
    distance types, data categories, exclusions and the factor sources."""
    run, iso, m = data.run, data.run.iso14083, data.methodology
    out: list[Any] = [_p("ISO 14083 short report", s["h2"])]
    if not iso:
        return [*out, _p("This run predates the ISO 14083 summary (or used a legacy report).", s["body"])]
    out.append(
        _p(
            f"Totals: WTW {number(run.total_co2e_wtw_kg)} kg CO2e, TTW {number(run.total_co2e_ttw_kg)} kg CO2e "
            f"over {number(run.total_tonne_km)} tonne-km; headline boundary {iso.get('headline_boundary')}.",
            s["body"],
        )
    )
    modes = [["Mode", "WTW kg", "TTW kg", "Tonne-km", "WTW g/tkm", "TTW g/tkm"]]
    for mode, t in sorted(run.totals_by_mode.items()):
        modes.append(
            [
                mode, number(t.get("co2e_wtw_kg")), number(t.get("co2e_ttw_kg")), number(t.get("tonne_km")),
                number(t.get("intensity_wtw_g_per_tkm"), 2), number(t.get("intensity_ttw_g_per_tkm"), 2),
            ]
        )  # fmt: skip
    out += [_table(modes, s["body"], [30 * mm, 30 * mm, 30 * mm, 30 * mm, 25 * mm, 25 * mm]), Spacer(1, 2 * mm)]
    cats = [["Data category", "Rows", "WTW kg", "Tonne-km"]]
    for key, c in (iso.get("data_categories") or {}).items():
        cats.append(
            [_CATEGORY_NAMES.get(key, key), str(c.get("rows")), number(c.get("co2e_wtw_kg")), number(c.get("tonne_km"))]
        )
    share = iso.get("primary_data_share") or {}
    out += [
        _table(cats, s["body"], [70 * mm, 20 * mm, 40 * mm, 40 * mm]),
        _p(
            f"Primary data share: {number(share.get('by_emissions_wtw_percent'), 2)} % of WTW emissions, "
            f"{number(share.get('by_rows_percent'), 2)} % of usable rows. Coverage: "
            f"{number(data.quality.coverage_score, 2) if data.quality else 'n/a'} % of declared rows, "
            f"{number(iso.get('coverage_tonne_km_percent'), 2)} % of tonne-km.",
            s["body"],
        ),
        Spacer(1, 2 * mm),
    ]
    dists = [["Distance type", "Rows", "Tonne-km (factor basis)"]]
    for key, d in (iso.get("distance_types") or {}).items():
        dists.append([key, str(d.get("rows")), number(d.get("tonne_km"))])
    out += [
        _table(dists, s["body"], [50 * mm, 20 * mm, 50 * mm]),
        _p(
            "Distance adjustment: SFD x 1.05 (road, rail, inland waterway) and x 1.15 (sea) per GLEC; air factors "
            "are per great-circle km with the DESNZ 8 % uplift included, so an actual flight distance is divided "
            "by 1.08.",
            s["body"],
        ),
    ]
    ex = iso.get("excluded") or {}
    out.append(
        _p(
            f"Exclusions: {ex.get('rows', 0)} row(s) without mode, distance or mass, estimated with default "
            f"factors at {number(ex.get('co2e_wtw_kg'))} kg CO2e WTW / {number(ex.get('co2e_ttw_kg'))} kg TTW "
            "(reported, not in the totals).",
            s["body"],
        )
    )
    if m is not None:
        sources = sorted({f"{f.dataset} ({f.dataset_version})" for f in m.factors if f.dataset})
        out.append(
            _p(
                f"Factor sources: {'; '.join(sources) or m.factor_version_source} - version {m.factor_version_code}; "
                "each factor's source rows are listed in the methodology statement.",
                s["body"],
            )
        )
    return out
