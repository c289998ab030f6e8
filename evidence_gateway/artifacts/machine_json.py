"""machine_json: everything the other artifacts show, as one JSON document (docs/packs.md).

Written as a stream: the head object first, then the ``shipments`` array row by row, so a
50,000-row pack never holds the rows as one Python structure.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any, BinaryIO, cast

import orjson

from evidence_gateway.artifacts.data import COMPUTED_NUMBERS, SHIPMENT_COLUMNS, PackData, Rows
from evidence_gateway.artifacts.text import fixed

CONTENT_TYPE = "application/json"
SUFFIX = "pack.json"
NEEDS_ROWS = True
FORMAT = "evidence-gateway.pack-content"
# 2: TTW/WTT/WTW and the ISO 14083 fields; computed figures are decimal strings (6 decimals).
FORMAT_VERSION = 2

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


def _exact(value: Any) -> Any:
    """Every float of the run as its exact decimal string (binary floats print 125.22000000000001)."""
    if isinstance(value, float):
        return fixed(value)
    if isinstance(value, dict):
        return {k: _exact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_exact(v) for v in value]
    return value


def head(data: PackData) -> dict[str, Any]:
    """The document without its shipment rows (also what tests compare)."""
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "workspace": _plain(data.workspace),
        "calculation_run": _exact(_plain(data.run)),
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
    computed = [name in COMPUTED_NUMBERS for name in SHIPMENT_COLUMNS]
    for row in rows:
        if not first:
            out.write(b",")
        values = {
            # the computed columns hold the engine's figures: floats or None
            name: (None if v is None else fixed(cast(float, v))) if exact else v
            for name, v, exact in zip(SHIPMENT_COLUMNS, row, computed, strict=True)
        }
        out.write(_dumps(values))
        first = False
    out.write(b"]}")
