"""Value formatting shared by the text renderers: one spelling for every value, every time."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
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
    """RFC 4180 CSV (CRLF line ends), UTF-8 without BOM."""
    with text_out(out) as text:
        writer = csv.writer(text, lineterminator="\r\n")
        writer.writerow(list(header))
        for row in rows:
            writer.writerow([cell(v) for v in row])


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
