"""Input validation shared by both transports: pydantic models -> InvalidInput."""

from __future__ import annotations

import enum
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, TypeVar

import orjson
from pydantic import BaseModel, BeforeValidator, ConfigDict, GetCoreSchemaHandler, StringConstraints, ValidationError
from pydantic_core import CoreSchema, core_schema

from evidence_gateway.errors import BadRequest, InvalidInput, NotFound

M = TypeVar("M", bound=BaseModel)

# Huge imports can carry thousands of bad rows; name the first ones, say how many.
MAX_REPORTED_FIELDS = 100


_ISO_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


def iso_date(value: Any) -> Any:
    """``YYYY-MM-DD`` only: the one date rule of REST bodies and the GraphQL ``Date`` scalar."""
    if isinstance(value, date):
        return value
    # fromisoformat alone also takes ISO week dates ("2025-W01-1") of the same length.
    if not isinstance(value, str) or not _ISO_DATE.fullmatch(value):
        raise ValueError("must be a date string (YYYY-MM-DD)")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError("must be a valid date (YYYY-MM-DD)") from None


_CANONICAL_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def canonical_uuid(value: Any) -> uuid.UUID:
    """The one id rule of both transports (REST bodies and paths, the GraphQL ``UUID`` scalar).

    Only the canonical 8-4-4-4-12 spelling the contract documents; uuid.UUID() alone would
    also take braces, "urn:uuid:" and bare hex, so the same id could be written four ways.
    """
    if isinstance(value, uuid.UUID):
        return value
    if not isinstance(value, str) or not _CANONICAL_UUID.fullmatch(value):
        raise ValueError("must be a UUID string (8-4-4-4-12 hex)")
    return uuid.UUID(value)


def _whole_number(value: Any) -> Any:
    # JSON Schema's "integer" includes 3.0; "3", true and 3.5 stay refused.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be a whole number")
    return value


IsoDate = Annotated[date, BeforeValidator(iso_date)]
UUIDField = Annotated[uuid.UUID, BeforeValidator(canonical_uuid)]
WholeNumber = Annotated[int, BeforeValidator(_whole_number)]
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
ShortText = Annotated[str, StringConstraints(max_length=500)]


@dataclass(frozen=True)
class OneOf:
    """``Annotated[str, OneOf(SomeEnum)]``: one of the enum's values, checked as ``Literal[...]``
    would be (same error, same JSON Schema) while type checkers see the ``str`` it is.

    A string, not the enum, so strict validation accepts the JSON strings themselves; a
    ``Literal`` built from the enum would do the same at run time but is no type to mypy.
    """

    values: type[enum.Enum]

    def __get_pydantic_core_schema__(self, _source: Any, _handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.literal_schema([member.value for member in self.values])


class StrictInput(BaseModel):
    """Base of every input: exact JSON types (no "1" for 1), unknown keys ignored."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


def field_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "body"


def _message(err: Any) -> str:
    if err["type"] == "missing":
        return "field required"
    msg: str = err["msg"]
    return msg.removeprefix("Value error, ")


def errors_to_fields(exc: ValidationError) -> dict[str, str]:
    fields: dict[str, str] = {}
    for err in exc.errors(include_url=False):
        # Union members report per-branch locations ("int", "function-after[...]").
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and ("[" in p or p in _TYPE_TAGS)))
        path = field_path(loc)
        fields.setdefault(path, _message(err))
    return fields


_TYPE_TAGS = {"int", "float", "str", "bool", "list", "dict", "none"}


# What PostgreSQL text, varchar and jsonb cannot hold: NUL, and UTF-16 surrogate code points
# (lone "\ud800" escapes, which the stdlib JSON parser behind GraphQL keeps). SQLite would
# store them, so refusing them for everyone keeps both databases answering alike.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _unstorable_reason(text: str) -> str:
    if "\x00" in text:
        return "must not contain the NUL character (U+0000)"
    return "must not contain surrogate code points (U+D800-U+DFFF)"


def _escaped(key: str) -> str:
    # A bad key is named in the error; written raw it could not even be sent back as JSON.
    return _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", key)


def _serialises_clean(data: Any) -> bool:
    """Decided in C: orjson refuses surrogates and writes NUL as the escape \\u0000.

    False only means "look closer": a user's literal backslash-u0000 text, a type orjson
    does not know or nesting beyond its recursion limit fail it too, and the walk decides.
    """
    try:
        blob = orjson.dumps(data)
    except TypeError:
        return False
    return b"\\u0000" not in blob


def _children(value: Any) -> Iterator[tuple[Any, Any]]:
    return iter(value.items()) if isinstance(value, Mapping) else enumerate(value)


def unstorable_text(data: Any) -> dict[str, str]:
    """Field path -> reason for every key or string value the database could not store.

    Covers everything the caller sent, unknown keys and free-form objects included. Clean
    input (the common case) costs one orjson dump and a substring search, ~9 ms on a
    50,000-row import. Otherwise the walk descends, in document order and without
    recursion, only into the containers that fail the same test, so one bad row among
    50,000 costs one small dump per row rather than a Python visit of every value.
    """
    if _serialises_clean(data):
        return {}
    found: dict[str, str] = {}
    stack: list[tuple[tuple[int | str, ...], Iterator[tuple[Any, Any]]]] = [((), _children(data))]
    while stack:
        loc, items = stack[-1]
        for key, value in items:
            name = key
            if isinstance(key, str) and _UNSTORABLE.search(key):
                name = _escaped(key)
                found[field_path((*loc, name))] = "key " + _unstorable_reason(key)
            if isinstance(value, str):
                if _UNSTORABLE.search(value):
                    found[field_path((*loc, name))] = _unstorable_reason(value)
            elif isinstance(value, Mapping | list | tuple) and not _serialises_clean(value):
                stack.append(((*loc, name), _children(value)))
                break  # the parent's iterator resumes where it stopped once the child is done
        else:
            stack.pop()
    return found


def parse(model: type[M], data: Any) -> M:
    """Validate a request object into ``model`` or raise InvalidInput listing every field.

    Every resolver input passes here, so this is where text the database cannot store is
    refused: one rule for every field, shipment row and free-form object, on both transports.
    """
    if not isinstance(data, Mapping):
        raise BadRequest("request body must be a JSON object")
    fields = unstorable_text(data)
    try:
        parsed = model.model_validate(data)
    except ValidationError as exc:
        for path, reason in errors_to_fields(exc).items():
            fields.setdefault(path, reason)
    else:
        if not fields:
            return parsed
    extra: dict[str, Any] = {}
    if len(fields) > MAX_REPORTED_FIELDS:
        extra["fields_total"] = len(fields)
        fields = dict(list(fields.items())[:MAX_REPORTED_FIELDS])
    raise InvalidInput("invalid input", fields=fields, **extra)


def parse_id(value: Any, what: str) -> uuid.UUID:
    """A path/argument id that is not a UUID names no record: 404 like an unknown id."""
    try:
        return canonical_uuid(value)
    except ValueError:
        raise NotFound(f"{what} not found") from None
