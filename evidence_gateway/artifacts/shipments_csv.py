"""shipment_csv: one CSV row per shipment: the row as imported, then its TTW/WTT/WTW results.

Computed figures are written with fixed 6 decimals (exact: the engine rounds to them), inputs
in the shortest spelling of what was sent, and user text neutralised against formula injection.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

from evidence_gateway.artifacts.data import COMPUTED_NUMBERS, SHIPMENT_COLUMNS, USER_TEXT, PackData, Rows
from evidence_gateway.artifacts.text import cell, fixed, neutral, text_out

CONTENT_TYPE = "text/csv; charset=utf-8"
SUFFIX = "shipments.csv"
NEEDS_ROWS = True


def _speller(name: str) -> Callable[[Any], str]:
    if name in COMPUTED_NUMBERS:
        return fixed
    if name in USER_TEXT:
        return lambda v: "" if v is None else neutral(v)
    return cell


_SPELLERS = tuple(_speller(name) for name in SHIPMENT_COLUMNS)


def _spelled(rows: Rows) -> Iterator[list[str]]:
    spellers = _SPELLERS
    for row in rows:
        yield [spell(v) for spell, v in zip(spellers, row, strict=True)]


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    with text_out(out) as text:
        writer = csv.writer(text, lineterminator="\r\n")
        writer.writerow(SHIPMENT_COLUMNS)
        writer.writerows(_spelled(rows))
