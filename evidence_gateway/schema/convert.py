"""Model <-> Strawberry conversions shared by every GraphQL type."""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

import strawberry
from strawberry.types.base import has_object_definition

from evidence_gateway.core.timeutil import as_aware

T = TypeVar("T")


@dataclasses.dataclass(frozen=True, slots=True)
class _Copy:
    """How a type's plain fields are copied from a record, worked out once per type: the values
    read in one call (``operator.attrgetter``), then the datetimes (naive UTC values become
    aware) and the enums (strings become the field's enum) put right by position. A page
    converts 20 records per request: this is a handful of C calls per record."""

    names: tuple[str, ...]
    read: Callable[[Any], Any]
    stamps: tuple[int, ...]
    enums: tuple[tuple[int, Any], ...]


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
    names = (*as_is, *stamps, *(name for name, _ in enums))
    found = _COPIES[cls] = _Copy(
        names,
        _reader(names),
        tuple(range(len(as_is), len(as_is) + len(stamps))),
        tuple((len(as_is) + len(stamps) + i, enum_type) for i, (_, enum_type) in enumerate(enums)),
    )
    return found


def _reader(names: tuple[str, ...]) -> Callable[[Any], Any]:
    """The attributes' values in one call (``attrgetter`` answers a bare value for one name)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    return partial(_read_each, names)


def _read_each(names: tuple[str, ...], obj: Any) -> tuple[Any, ...]:
    return tuple(getattr(obj, name) for name in names)


def from_model(cls: type[T], obj: Any) -> T:
    """Copy same-named attributes; naive UTC datetimes become aware, strings become enums."""
    plan = _COPIES.get(cls) or _copy_of(cls)
    values = plan.read(obj)
    if plan.stamps or plan.enums:
        values = list(values)
        for i in plan.stamps:
            values[i] = as_aware(values[i])
        for i, enum_type in plan.enums:
            value = values[i]
            values[i] = None if value is None else enum_type(value)
    return cls(**dict(zip(plan.names, values, strict=True)))


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
