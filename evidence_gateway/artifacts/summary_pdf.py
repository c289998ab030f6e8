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

from evidence_gateway.artifacts import iso_report
from evidence_gateway.artifacts.data import PackData, Rows
from evidence_gateway.artifacts.text import iso, number, period

CONTENT_TYPE = "application/pdf"
SUFFIX = "summary.pdf"
NEEDS_ROWS = True

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
        "h3": ParagraphStyle("h3", parent=base["Heading3"], fontName=bold, fontSize=10, leading=13),
        "body": ParagraphStyle("b", parent=base["BodyText"], fontName=regular, fontSize=9, leading=12),
        "small": ParagraphStyle("s", parent=base["BodyText"], fontName=regular, fontSize=7, leading=9),
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
    # Runs on the ISO 14083 activity basis say so; earlier runs' tonne-km were on the factors' basis.
    basis = " (SFD, air GCD)" if run.iso14083.get("activity_distance_basis") else ""
    totals = [
        ["Total CO2e (kg)", number(run.total_co2e_kg)],
        ["Total CO2e (t)", number(None if run.total_co2e_kg is None else run.total_co2e_kg / 1000.0)],
        [f"Total tonne-km{basis}", number(run.total_tonne_km)],
        ["Shipments calculated", str(run.shipment_count)],
    ]
    story += [_table(totals, s["body"], [45 * mm, 60 * mm], header=False), Spacer(1, 3 * mm)]
    by_mode = [["Mode", "CO2e (kg)", f"Tonne-km{basis}", "Shipments"]]
    for mode, t in sorted(run.totals_by_mode.items()):
        by_mode.append([mode, number(t.get("co2e_kg")), number(t.get("tonne_km")), str(t.get("shipment_count", ""))])
    if len(by_mode) == 1:
        by_mode.append(["(no per-mode totals)", "", "", ""])
    story += [_table(by_mode, s["body"], [40 * mm, 40 * mm, 40 * mm, 25 * mm]), Spacer(1, 4 * mm)]

    story.append(_p("Data quality", s["h2"]))
    if q is not None:
        figures = [
            ["Coverage score", f"{number(q.coverage_score, 2)} %"],
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
    story += [Spacer(1, 4 * mm), *iso14083_report(data, rows, s)]
    story += [
        Spacer(1, 4 * mm),
        _p(f"Evidence items registered: {len(data.evidence)}. Audit trail events: {len(data.audit)}.", s["body"]),
    ]
    doc.build(story)


def iso14083_report(data: PackData, rows: Rows, s: dict[str, ParagraphStyle]) -> list[Any]:
    """The ISO 14083 short report (ISO 14083:2023 chapter 13), as iso_report builds it."""
    out: list[Any] = [_p("ISO 14083 short report (ISO 14083:2023, chapter 13)", s["h2"])]
    for kind, value in iso_report.build(data, iso_report.Tally.of(rows)):
        if kind == "h":
            out.append(_p(value, s["h3"]))
        elif kind == "p":
            out.append(_p(value, s["body"]))
        else:
            header, *body = value
            width = 174 * mm / len(header)
            out += [_table([header, *body], s["small"], [width] * len(header)), Spacer(1, 2 * mm)]
    return out
