"""shipment_csv: one CSV row per shipment with its computed emissions and data tier."""

from __future__ import annotations

from typing import BinaryIO

from evidence_gateway.artifacts.data import SHIPMENT_COLUMNS, PackData, Rows
from evidence_gateway.artifacts.text import write_csv

CONTENT_TYPE = "text/csv; charset=utf-8"
SUFFIX = "shipments.csv"
NEEDS_ROWS = True


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    write_csv(out, SHIPMENT_COLUMNS, rows)
