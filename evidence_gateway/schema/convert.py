"""Model <-> Strawberry conversions shared by every GraphQL type."""

from __future__ import annotations

import dataclasses
import enum
from datetime import datetime
from typing import Any, TypeVar

import strawberry
from strawberry.types.base import has_object_definition

from evidence_gateway.core.timeutil import as_aware

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class _Copy:
    """How a type's plain fields are copied from a record, worked out once per type."""

    as_is: tuple[str, ...]
    stamps: tuple[str, ...]  # datetimes: naive UTC values become aware
    enums: tuple[tuple[str, Any], ...]  # strings become the field's enum


# Per type, in a dict: functools.cache's wrapper does not type a type[T] as hashable.
_COPIES: dict[type[Any], _Copy] = {}


def _copy_of(cls: type[Any]) -> _Copy:
    found = _COPIES.get(cls)
    if found is not None:
        return found
    assert has_object_definition(cls)
    as_is, stamps, enums = [], [], []
    for f in cls.__strawberry_definition__.fields:
        if f.base_resolver is not None:
            continue
        of_type = getattr(f.type, "of_type", f.type)  # through Optional
        if isinstance(f.type, type) and issubclass(f.type, enum.Enum):
            enums.append((f.python_name, f.type))
        elif of_type is datetime:
            stamps.append(f.python_name)
        else:
            as_is.append(f.python_name)
    found = _COPIES[cls] = _Copy(tuple(as_is), tuple(stamps), tuple(enums))
    return found


def from_model(cls: type[T], obj: Any) -> T:
    """Copy same-named attributes; naive UTC datetimes become aware, strings become enums."""
    plan = _copy_of(cls)
    kwargs = {name: getattr(obj, name) for name in plan.as_is}
    for name in plan.stamps:
        kwargs[name] = as_aware(getattr(obj, name))
    for name, enum_type in plan.enums:
        value = getattr(obj, name)
        kwargs[name] = None if value is None else enum_type(value)
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
