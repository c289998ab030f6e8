"""machine_json: everything the other artifacts show, as one JSON document (docs/packs.md).

Written as a stream: the head object first, then the ``shipments`` array row by row, so a
50,000-row pack never holds the rows as one Python structure.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, BinaryIO

import orjson

from evidence_gateway.artifacts.data import SHIPMENT_COLUMNS, PackData, Rows

CONTENT_TYPE = "application/json"
SUFFIX = "pack.json"
NEEDS_ROWS = True
FORMAT = "evidence-gateway.pack-content"
FORMAT_VERSION = 1

_OPTIONS = orjson.OPT_UTC_Z | orjson.OPT_NAIVE_UTC


def _default(value: Any) -> Any:
    # asyncpg hands out its own UUID subclass; orjson only knows the stdlib one.
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, default=_default, option=_OPTIONS)


def _plain(obj: Any) -> Any:
    return None if obj is None else dataclasses.asdict(obj)


def head(data: PackData) -> dict[str, Any]:
    """The document without its shipment rows (also what tests compare)."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "workspace": _plain(data.workspace),
        "calculation_run": _plain(data.run),
        "methodology": _plain(data.methodology),
        "legacy_report": _plain(data.legacy_report),
        "quality_assessment": _plain(data.quality),
        "evidence_items": [_plain(e) for e in data.evidence],
        "audit_trail": [_plain(a) for a in data.audit],
        "shipment_columns": list(SHIPMENT_COLUMNS),
    }


def render(data: PackData, rows: Rows, out: BinaryIO) -> None:
    opening = _dumps(head(data))
    out.write(opening[:-1])  # drop the closing brace: the rows follow
    out.write(b',"shipments":[')
    first = True
    for row in rows:
        if not first:
            out.write(b",")
        out.write(_dumps(dict(zip(SHIPMENT_COLUMNS, row, strict=True))))
        first = False
    out.write(b"]}")
