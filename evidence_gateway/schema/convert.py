"""Model <-> Strawberry conversions shared by every GraphQL type."""

from __future__ import annotations

import dataclasses
import enum
from datetime import datetime
from functools import cache
from typing import Any, TypeVar

import strawberry

from evidence_gateway.timeutil import as_aware

T = TypeVar("T")


@cache
def _plain_fields(cls: Any) -> tuple[tuple[str, Any], ...]:
    definition = cls.__strawberry_definition__
    out = []
    for f in definition.fields:
        if f.base_resolver is not None:
            continue
        target = f.type if isinstance(f.type, type) and issubclass(f.type, enum.Enum) else None
        out.append((f.python_name, target))
    return tuple(out)


def from_model(cls: type[T], obj: Any) -> T:
    """Copy same-named attributes; naive UTC datetimes become aware, strings become enums."""
    kwargs: dict[str, Any] = {}
    for name, enum_type in _plain_fields(cls):  # type: ignore[arg-type]
        value = getattr(obj, name)
        if isinstance(value, datetime):
            value = as_aware(value)
        elif enum_type is not None and value is not None:
            value = enum_type(value)
        kwargs[name] = value
    return cls(**kwargs)


def input_to_dict(value: Any) -> Any:
    """Strawberry input -> the plain mapping the resolvers validate."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: input_to_dict(getattr(value, f.name))
            for f in dataclasses.fields(value)
            # GraphQL null on an optional input means "not given", as an absent JSON key.
            if getattr(value, f.name) is not strawberry.UNSET and getattr(value, f.name) is not None
        }
    if isinstance(value, list):
        return [input_to_dict(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value
