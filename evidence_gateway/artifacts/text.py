"""Value formatting shared by the text renderers: one spelling for every value, every time."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, BinaryIO


def iso(value: datetime | date | None) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        aware = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return aware.isoformat().replace("+00:00", "Z")
    return value.isoformat()


def cell(value: Any) -> str:
    """CSV/Markdown spelling: empty for null, true/false, shortest round-trip float, ISO times."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, datetime | date):
        return iso(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return str(value)


def fixed(value: float | int | Decimal | None, places: int = 6) -> str:
    """Exact fixed-point text of a computed figure ("125.220000", never 125.22000000000001).

    The engine rounds every figure to 6 decimals and stores that; the shortest round-trip
    spelling of the stored float is that decimal, so this prints it exactly.
    """
    if value is None:
        return ""
    exact = value if isinstance(value, Decimal) else Decimal(repr(value) if isinstance(value, float) else value)
    return f"{exact.quantize(Decimal(1).scaleb(-places)):f}"


def decimal_string(value: float | int | Decimal | None, places: int = 6) -> str | None:
    """A JSON decimal string (iLEAP ``Decimal``: digits, optional fraction, no exponent), trailing
    zeros dropped: 36.801000 -> "36.801", 87.000000 -> "87"."""
    if value is None:
        return None
    text = fixed(value, places)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# OWASP CSV injection: a cell a spreadsheet would evaluate starts with one of these.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutral(text: str) -> str:
    """User text for a CSV cell: a leading apostrophe keeps it text in Excel/LibreOffice/Sheets."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def number(value: float | int | None, digits: int = 3) -> str:
    """Human figure for the PDF and Markdown: thousands separators, fixed decimals."""
    if value is None:
        return "n/a"
    return f"{value:,.{digits}f}"


@contextmanager
def text_out(out: BinaryIO) -> Iterator[io.TextIOWrapper]:
    """UTF-8 text over the binary sink, detached afterwards so the sink stays open."""
    wrapper = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=False)
    try:
        yield wrapper
        wrapper.flush()
    finally:
        wrapper.detach()


def write_csv(out: BinaryIO, header: Iterable[str], rows: Iterable[Iterable[Any]]) -> None:
    """RFC 4180 CSV (CRLF line ends), UTF-8 without BOM; text cells neutralised against formulas."""
    with text_out(out) as text:
        writer = csv.writer(text, lineterminator="\r\n")
        writer.writerow(list(header))
        for row in rows:
            writer.writerow([neutral(v) if isinstance(v, str) else cell(v) for v in row])


def md_cell(value: Any) -> str:
    """A Markdown table cell: pipes escaped, line breaks flattened."""
    return cell(value).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def md_table(header: list[str], rows: Iterable[Iterable[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines.extend("| " + " | ".join(md_cell(v) for v in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"


def period(start: date | None, end: date | None) -> str:
    if start is None and end is None:
        return "not set"
    return f"{iso(start) or 'open'} to {iso(end) or 'open'}"
