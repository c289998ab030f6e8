"""Input validation shared by both transports: pydantic models -> InvalidInput."""

from __future__ import annotations

import enum
import math
import re
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, TypeVar

import orjson
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    StringConstraints,
    ValidationError,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from evidence_gateway.core.jsoncodec import MAX_JSON_INT, MIN_JSON_INT
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
# A trimmed text is never blank: ``\S`` says so to clients that cannot read "trimmed".
NOT_BLANK: dict[str, Any] = {"pattern": r"\S"}
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    Field(description="Trimmed; 1–200 characters.", json_schema_extra=NOT_BLANK),
]
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

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # The enum's name as the title: the OpenAPI document then refers to one component per enum.
        out = handler(schema)
        out["title"] = self.values.__name__
        return out


class StrictInput(BaseModel):
    """Base of every input: exact JSON types (no "1" for 1), unknown keys ignored.

    A string under a field is its description in the OpenAPI document (rest_compat/openapi_inputs.py
    makes each request body from its input model), as ``Field(description=...)`` would be.
    """

    # defer_build: the validator of an input nobody sends (an import, a recipient) is never built.
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True, use_attribute_docstrings=True, defer_build=True)


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
_INTEGER_RANGE = f"must be an integer from {MIN_JSON_INT} to {MAX_JSON_INT} (64 bits)"
_NOT_FINITE = "must be a finite number"


def _unstorable_reason(text: str) -> str:
    if "\x00" in text:
        return "must not contain the NUL character (U+0000)"
    return "must not contain surrogate code points (U+D800-U+DFFF)"


def _escaped(key: str) -> str:
    # A bad key is named in the error; written raw it could not even be sent back as JSON.
    return _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", key)


def _serialises_clean(data: Any) -> bool:
    """Decided in C: orjson refuses surrogates, integers beyond 53 bits (asked to) and nesting
    beyond 255 levels, and writes NUL as the escape \\u0000.

    False only means "look closer": a user's literal backslash-u0000 text, an integer of 54
    to 64 bits or a type orjson does not know fail it too, and the walk decides.
    """
    try:
        blob = orjson.dumps(data, option=orjson.OPT_STRICT_INTEGER)
    except TypeError:
        return False
    return b"\\u0000" not in blob


def _children(value: Any) -> Iterator[tuple[Any, Any]]:
    return iter(value.items()) if isinstance(value, Mapping) else enumerate(value)


def _scalar_problem(value: Any) -> str | None:
    if isinstance(value, str):
        return _unstorable_reason(value) if _UNSTORABLE.search(value) else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if MIN_JSON_INT <= value <= MAX_JSON_INT else _INTEGER_RANGE
    if isinstance(value, float):
        return None if math.isfinite(value) else _NOT_FINITE
    return None


def json_problems(data: Any, *, max_depth: int | None = None) -> dict[str, str]:
    """Field path -> reason for every part of a JSON value that is not what REST accepts: the
    one rule of both transports for what a client sends (docs/api.md, "Bodies").

    Refused: text the database could not store (NUL, surrogate code points), in keys and
    values; integers outside signed 64 bits (orjson could never write them back: a run or
    item stored with one answered 500 for good); non-finite numbers (``1e400`` read as
    infinity); and, given ``max_depth``, nesting deeper than that (counting ``data`` as
    level 1). Every resolver input passes here (``parse``), and so does every value of the
    GraphQL ``JSON`` scalar, literals included (schema/scalars.py).

    Clean input (the common case) costs one orjson dump and a substring search, ~9 ms on a
    50,000-row import. Otherwise the walk descends, in document order and without
    recursion, only into the containers that fail the same test, so one bad row among
    50,000 costs one small dump per row rather than a Python visit of every value. orjson
    writes a non-finite float as null, so the fast path cannot see one: no JSON text reaches
    a resolver holding one (REST's parser and GraphQL's refuse ``1e400``, the ``JSON``
    scalar converts its literals itself), and a container the walk does visit is checked.
    """
    found: dict[str, str] = {}
    if max_depth is not None:
        deep = _too_deep(data, max_depth)
        if deep is not None:
            found[field_path(deep)] = f"must not be nested deeper than {max_depth} levels"
            return found
    if not isinstance(data, Mapping | list | tuple):
        problem = _scalar_problem(data)
        return {field_path(()): problem} if problem else {}
    if _serialises_clean(data):
        return found
    stack: list[tuple[tuple[int | str, ...], Iterator[tuple[Any, Any]]]] = [((), _children(data))]
    while stack:
        loc, items = stack[-1]
        for key, value in items:
            name = key
            if isinstance(key, str) and _UNSTORABLE.search(key):
                name = _escaped(key)
                found[field_path((*loc, name))] = "key " + _unstorable_reason(key)
            if isinstance(value, Mapping | list | tuple):
                if not _serialises_clean(value):
                    stack.append(((*loc, name), _children(value)))
                    break  # the parent's iterator resumes where it stopped once the child is done
            else:
                problem = _scalar_problem(value)
                if problem is not None:
                    found[field_path((*loc, name))] = problem
        else:
            stack.pop()
    return found


def _too_deep(data: Any, max_depth: int) -> tuple[int | str, ...] | None:
    """The path of the first container nested deeper than ``max_depth`` (``data`` is level 1),
    found without recursion; None when there is none."""
    stack: list[tuple[tuple[int | str, ...], Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if not isinstance(value, Mapping | list | tuple):
            continue
        if len(loc) >= max_depth:
            return loc
        stack.extend(((*loc, key), child) for key, child in _children(value))
    return None


def parse(model: type[M], data: Any) -> M:
    """Validate a request object into ``model`` or raise InvalidInput listing every field.

    Every resolver input passes here, so this is where what no JSON reader or database keeps
    (``json_problems``) is refused: one rule for every field, shipment row and free-form
    object, on both transports.
    """
    if not isinstance(data, Mapping):
        raise BadRequest("request body must be a JSON object")
    fields = json_problems(data)
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
