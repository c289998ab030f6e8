"""The one JSON encoding of the API: REST bodies, GraphQL responses, event data, stored replies."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import orjson

# Deepest JSON accepted, counting the outermost value (a request body) as level 1. A free-form
# value inside a body (assumptions_snapshot, extracted_metadata_json, a GraphQL ``JSON``) may
# therefore nest one level fewer. Why 64: http_body.py (every layer behind it recurses per level).
MAX_JSON_DEPTH = 64

# The integers a JSON value may hold: signed 64-bit, what orjson writes (it refuses beyond 64
# bits, so a larger one stored could never be sent back), PostgreSQL's bigint and most clients'
# int64 keep exactly. docs/api.md, "Bodies: media type, depth, text".
MIN_JSON_INT = -(2**63)
MAX_JSON_INT = 2**63 - 1

_JSON_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z | orjson.OPT_NON_STR_KEYS


def _default(value: Any) -> Any:
    # asyncpg returns its own UUID subclass, which orjson does not know.
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(content: Any) -> bytes:
    """orjson; naive datetimes are UTC and every datetime prints with a ``Z``."""
    return orjson.dumps(content, default=_default, option=_JSON_OPTIONS)


def plain(content: Any) -> Any:
    """The JSON-safe form (strings for ids and times) of a rendered resource, for JSON columns."""
    return orjson.loads(dumps(content))


def timestamp(value: datetime) -> str:
    """A datetime as every JSON body writes it (``...Z``), for places that need the text alone
    (the GraphQL ``DateTime`` scalar): the same encoder, so the two transports cannot differ."""
    text: str = orjson.dumps(value, option=_JSON_OPTIONS).decode()
    return text[1:-1]
