"""shipment_xlsx: a Summary sheet and a Shipments sheet, written row by row (constant memory).

The Shipments sheet's rows are 90% of a 50,000-row pack's XLSX time when written cell by cell
through xlsxwriter (about 1.5 million calls, each checked, stored, then rendered). Plain rows are
therefore rendered here straight into the sheet's row-data file, in exactly the XML xlsxwriter's
constant_memory mode writes for them (inline strings, ``%.16G`` numbers, ``t="b"`` booleans, no
spans, no styles); a row with anything xlsxwriter would escape, preserve or refuse goes through
xlsxwriter's own cell calls, so the bytes are the same either way (tests compare them).
"""

from __future__ import annotations

import math
import re
import tempfile
import uuid
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any, BinaryIO

import xlsxwriter
from xlsxwriter.utility import xl_col_to_name

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
            write_rows(sheet, rows)
        except BaseException:
            # constant_memory keeps an open temp file per sheet until close(); a failed
            # render must not leak them (the pack is marked failed by the caller).
            for worksheet in workbook.worksheets():
                if worksheet.row_data_fh is not None:
                    worksheet.row_data_fh.close()
            raise
        workbook.close()


# Anything xlsxwriter's inline-string path would change: XML escapes, control characters and
# their "_xHHHH_" look-alikes, non-characters, leading or trailing whitespace (xml:space), and
# the "<r>...</r>" rich-string form (starts with "<").
_SPECIAL = re.compile(r"[&<>\x00-\x08\x0b-\x1f\ufffe\uffff]|_x[0-9a-fA-F]{4}_|^\s|\s$")
# xlsxwriter checks the UTF-16 length only above half of Excel's 32,767 limit.
_LONG = 32767 // 2
_COLUMNS = [xl_col_to_name(c) for c in range(len(SHIPMENT_COLUMNS))]


def write_rows(sheet: Any, rows: Iterable[Iterable[Any]]) -> None:
    """The data rows from row 1 on, into a constant_memory sheet whose row 0 (the header, one
    cell per column) is written: the header already spans every column a row can fill, so only
    the last row number moves the sheet's dimension."""
    sheet._write_single_row(1)  # row 0 goes out; row 1 is the current row
    fh, search, columns = sheet.fh, _SPECIAL.search, _COLUMNS
    last = 0
    for i, row in enumerate(rows, start=1):
        n = str(i + 1)
        cells = []
        for c, value in enumerate(row):
            if value is None:
                continue
            kind = value.__class__
            if kind is float or kind is int:
                if kind is float and not math.isfinite(value):
                    break
                cells.append(f'<c r="{columns[c]}{n}"><v>{value:.16G}</v></c>')
            elif kind is bool:
                cells.append(f'<c r="{columns[c]}{n}" t="b"><v>{1 if value else 0}</v></c>')
            else:
                text = value if kind is str else _value(value)
                if len(text) > _LONG or search(text):
                    break
                cells.append(f'<c r="{columns[c]}{n}" t="inlineStr"><is><t>{text}</t></is></c>')
        else:
            if cells:
                fh.write(f'<row r="{n}">{"".join(cells)}</row>')
                last = i
            continue
        # A value only xlsxwriter may spell (or refuse): this row goes through its cell calls.
        sheet.previous_row = i
        _write_cells(sheet, i, row)
        sheet._write_single_row(i + 1)
        last = i
    if last:
        sheet.dim_rowmax = max(sheet.dim_rowmax, last)
    sheet.previous_row = last


def _write_cells(sheet: Any, i: int, row: Iterable[Any]) -> None:
    """One row through xlsxwriter's own cell calls (exact class checks: bool is not a number)."""
    for c, value in enumerate(row):
        if value is None:
            continue
        kind = value.__class__
        if kind is str:
            sheet.write_string(i, c, value)
        elif kind is float or kind is int:
            sheet.write_number(i, c, value)
        elif kind is bool:
            sheet.write_boolean(i, c, value)
        else:
            sheet.write_string(i, c, _value(value))
