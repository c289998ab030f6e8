"""audit_trail: imports, calculation runs, reviewed packs and approval actions, oldest first (CSV)."""

from __future__ import annotations

from dataclasses import astuple
from typing import BinaryIO

from evidence_gateway.artifacts.data import AUDIT_COLUMNS, PackData, Rows
from evidence_gateway.artifacts.text import write_csv

CONTENT_TYPE = "text/csv; charset=utf-8"
SUFFIX = "audit-trail.csv"
NEEDS_ROWS = False


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    write_csv(out, AUDIT_COLUMNS, (astuple(event) for event in data.audit))
