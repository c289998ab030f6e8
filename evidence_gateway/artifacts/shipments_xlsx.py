"""shipment_xlsx: a Summary sheet and a Shipments sheet, written row by row (constant memory)."""

from __future__ import annotations

import tempfile
import uuid
from datetime import UTC, date, datetime
from typing import Any, BinaryIO

import xlsxwriter

from evidence_gateway.artifacts.data import SHIPMENT_COLUMNS, PackData, Rows
from evidence_gateway.artifacts.text import iso, period

CONTENT_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SUFFIX = "shipments.xlsx"
NEEDS_ROWS = True
# Fixed document date when a run has none, so the bytes never depend on the clock.
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def _value(value: Any) -> str:
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    return repr(value)


MODE_HEADER = ["Mode", "CO2e (kg)", "Tonne-km", "Shipments", "CO2e WTW (kg)", "CO2e TTW (kg)", "WTW g/tkm", "TTW g/tkm"]
MODE_KEYS = (
    "co2e_kg", "tonne_km", "shipment_count", "co2e_wtw_kg", "co2e_ttw_kg", "intensity_wtw_g_per_tkm",
    "intensity_ttw_g_per_tkm",
)  # fmt: skip


def _cell(sheet: Any, r: int, c: int, value: Any) -> None:
    """Numbers as numbers, everything else as a string cell (never a formula)."""
    if value is None:
        return
    if isinstance(value, bool):
        sheet.write_boolean(r, c, value)
    elif isinstance(value, int | float):
        sheet.write_number(r, c, value)
    else:
        sheet.write_string(r, c, _value(value) if not isinstance(value, str) else value)


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    created = data.run.completed_at or data.run.created_at or _EPOCH
    with tempfile.TemporaryDirectory(prefix="evidence-xlsx-") as tmp:
        # Text is text: no "=..." formula, no URL, no number conversion from anything a user typed.
        workbook = xlsxwriter.Workbook(
            out,
            {
                "constant_memory": True,
                "tmpdir": tmp,
                "strings_to_numbers": False,
                "strings_to_formulas": False,
                "strings_to_urls": False,
            },
        )
        workbook.set_properties(
            {
                "title": f"Shipment emissions: {data.workspace.name}",
                "subject": "Transport emissions evidence pack",
                "author": "Evidence Gateway",
                "company": "Evidence Gateway",
                "comments": f"Calculation run {data.run.id}",
                # Stored time of the run, not now(): same inputs, same bytes.
                "created": created.astimezone(UTC).replace(tzinfo=None),
            }
        )
        try:
            bold = workbook.add_format({"bold": True})
            summary = workbook.add_worksheet("Summary")
            facts: list[tuple[str, Any]] = [
                ("Workspace", data.workspace.name),
                ("External reference", data.workspace.external_reference),
                (
                    "Reporting period",
                    period(data.workspace.reporting_period_start, data.workspace.reporting_period_end),
                ),
                ("Calculation run", str(data.run.id)),
                ("Run completed at", iso(data.run.completed_at)),
                ("Rerun hash", data.run.rerun_hash),
                ("Total CO2e (kg)", data.run.total_co2e_kg),
                ("Total CO2e WTW (kg)", data.run.total_co2e_wtw_kg),
                ("Total CO2e TTW (kg)", data.run.total_co2e_ttw_kg),
                ("Excluded rows, estimated CO2e (kg)", data.run.excluded_co2e_kg),
                ("Total tonne-km", data.run.total_tonne_km),
                ("Shipments used", data.run.shipment_count),
            ]
            summary.set_column(0, 0, 22)
            summary.set_column(1, 3, 20)
            for r, (label, value) in enumerate(facts):
                summary.write_string(r, 0, label, bold)
                _cell(summary, r, 1, value)
            r = len(facts) + 1
            summary.write_row(r, 0, MODE_HEADER, bold)
            for mode, totals in sorted(data.run.totals_by_mode.items()):
                r += 1
                summary.write_string(r, 0, mode)
                for c, key in enumerate(MODE_KEYS, start=1):
                    _cell(summary, r, c, totals.get(key))

            sheet = workbook.add_worksheet("Shipments")
            sheet.write_row(0, 0, SHIPMENT_COLUMNS, bold)
            sheet.freeze_panes(1, 0)
            # The hot loop of a 50k-row pack: exact class checks and bound methods.
            write_string, write_number, write_boolean = sheet.write_string, sheet.write_number, sheet.write_boolean
            for i, row in enumerate(rows, start=1):
                for c, value in enumerate(row):
                    if value is None:
                        continue
                    kind = value.__class__
                    if kind is str:
                        write_string(i, c, value)
                    elif kind is float or kind is int:
                        write_number(i, c, value)
                    elif kind is bool:
                        write_boolean(i, c, value)
                    else:
                        write_string(i, c, _value(value))
        except BaseException:
            # constant_memory keeps an open temp file per sheet until close(); a failed
            # render must not leak them (the pack is marked failed by the caller).
            for worksheet in workbook.worksheets():
                if worksheet.row_data_fh is not None:
                    worksheet.row_data_fh.close()
            raise
        workbook.close()
