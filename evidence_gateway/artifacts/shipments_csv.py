"""shipment_csv: one CSV row per shipment with its computed emissions and data tier."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any, BinaryIO

from evidence_gateway.artifacts.data import SHIPMENT_COLUMNS, PackData, Rows
from evidence_gateway.artifacts.text import text_out

CONTENT_TYPE = "text/csv; charset=utf-8"
SUFFIX = "shipments.csv"
NEEDS_ROWS = True
_INCLUDED = SHIPMENT_COLUMNS.index("included")


def _spelled(rows: Rows) -> Iterator[tuple[Any, ...]]:
    # The csv module already writes None as "", floats as repr() and UUIDs via str(), the same
    # spelling as text.cell(); only the boolean needs ours (true/false). Keeps 50k rows fast.
    i = _INCLUDED
    for row in rows:
        yield (*row[:i], "true" if row[i] else "false", *row[i + 1 :])


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    with text_out(out) as text:
        writer = csv.writer(text, lineterminator="\r\n")
        writer.writerow(SHIPMENT_COLUMNS)
        writer.writerows(_spelled(rows))
