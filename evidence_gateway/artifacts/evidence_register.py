"""evidence_register: the evidence items attached to the workspace, its shipments or its packs (CSV)."""

from __future__ import annotations

from dataclasses import astuple
from typing import BinaryIO

from evidence_gateway.artifacts.data import EVIDENCE_COLUMNS, PackData, Rows
from evidence_gateway.artifacts.text import write_csv

CONTENT_TYPE = "text/csv; charset=utf-8"
SUFFIX = "evidence-register.csv"
NEEDS_ROWS = False


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    write_csv(out, EVIDENCE_COLUMNS, (astuple(item) for item in data.evidence))
