"""The fields bound for the request running in this context (request id, organisation, key
prefix, GraphQL operation): every log line written while it runs carries them (logs.py).

One context variable holding a dict that is replaced, never changed in place: a child task
works on a copy of its parent's context, so what it binds stays its own, and reading every
field for a line is one lookup.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

_NONE: Mapping[str, Any] = {}
_fields: ContextVar[Mapping[str, Any]] = ContextVar("evidence_log_fields", default=_NONE)


def start(**fields: Any) -> None:
    """A new request: these fields only, nothing left over from earlier work in this context."""
    _fields.set(fields)


def bind(**fields: Any) -> None:
    """More fields for every later line of this request (a field bound again takes the new value)."""
    _fields.set({**_fields.get(), **fields})


def clear() -> None:
    _fields.set(_NONE)


def bound() -> Mapping[str, Any]:
    return _fields.get()
