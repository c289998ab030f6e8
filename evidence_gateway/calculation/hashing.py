"""rerun_hash: SHA-256 of the canonical JSON of every input of a run."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UUIDs/dates as strings: the same inputs give the same bytes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)


def rerun_hash(inputs: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(inputs)).hexdigest()
