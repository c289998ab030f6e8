"""The GraphQL scalars' wire formats, taken from the rules REST already applies.

Strawberry's own ``UUID`` accepts every spelling ``uuid.UUID()`` does (braces, ``urn:uuid:``,
bare hex) and its ``DateTime`` prints ``+00:00``; REST takes only the canonical id and writes
``Z``. Rather than a second rule per transport, these scalars call the REST ones
(``resolvers/validation.py``, ``jsoncodec.py``). docs/graphql-schema.md lists the formats.
"""

from __future__ import annotations

import math
import uuid
from datetime import date, datetime
from typing import Any

import orjson
from graphql import (
    BooleanValueNode,
    EnumValueNode,
    FloatValueNode,
    GraphQLError,
    IntValueNode,
    ListValueNode,
    NullValueNode,
    ObjectValueNode,
    StringValueNode,
    ValueNode,
    VariableNode,
)
from strawberry.exceptions import StrawberryInputCoercionError
from strawberry.scalars import JSON as StockJSON
from strawberry.types.scalar import ScalarDefinition

from evidence_gateway.core.jsoncodec import MAX_JSON_DEPTH, MAX_JSON_INT, MIN_JSON_INT, timestamp
from evidence_gateway.resolvers.validation import canonical_uuid, iso_date, json_problems


def _refusing(parse: Any, name: str) -> Any:
    """A coercion failure names the rule; GraphQL reports it as a variable/argument error."""

    def inner(value: object) -> object:
        try:
            return parse(value)
        except (ValueError, TypeError, OverflowError) as exc:
            reason = str(exc) if isinstance(exc, ValueError) and str(exc).startswith("must") else "is not valid"
            raise StrawberryInputCoercionError(f"Invalid {name} {value!r}: {reason}") from None

    return inner


def _uuid_text(value: uuid.UUID) -> str:
    """Always the lowercase dashed form. orjson writes a ``uuid.UUID`` exactly as ``str`` does, in
    a third of the time: a page of 20 items has 40 ids or more."""
    if type(value) is uuid.UUID:
        return orjson.dumps(value)[1:-1].decode()
    return str(value)


def _aware(value: object) -> datetime:
    if not isinstance(value, str):
        raise TypeError
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        raise ValueError("must carry a UTC offset or Z (RFC 3339)")
    return parsed


UUID = ScalarDefinition(
    name="UUID",
    description="An id in canonical form only: 8-4-4-4-12 hex with dashes, always written in lowercase "
    "(e.g. 6f1c1f2e-8d0b-4d3a-9f38-2b7c2e1c9a10). Braced, dashless and urn:uuid: spellings are refused "
    "with BAD_USER_INPUT, as REST refuses them. Typed clients: uuid.UUID.",
    specified_by_url="https://www.rfc-editor.org/rfc/rfc9562",
    serialize=_uuid_text,
    parse_value=_refusing(canonical_uuid, "UUID"),
    parse_literal=None,
    origin=uuid.UUID,
)

DATE = ScalarDefinition(
    name="Date",
    description="A calendar date, YYYY-MM-DD (RFC 3339 full-date), as on REST. Typed clients: datetime.date.",
    specified_by_url="https://www.rfc-editor.org/rfc/rfc3339#section-5.6",
    serialize=date.isoformat,
    parse_value=_refusing(iso_date, "Date"),
    parse_literal=None,
    origin=date,
)

DATETIME = ScalarDefinition(
    name="DateTime",
    description="An instant in UTC, RFC 3339 with a Z (2026-03-01T09:30:00.123456Z; microseconds only when "
    "non-zero), written exactly as REST writes it. Input needs an offset or Z. Typed clients: datetime.datetime.",
    specified_by_url="https://www.rfc-editor.org/rfc/rfc3339#section-5.6",
    serialize=timestamp,
    parse_value=_refusing(_aware, "DateTime"),
    parse_literal=None,
    origin=datetime,
)

# A JSON value is a field of an input object, as a free-form object is a field of a REST body:
# it may nest one level fewer than the body limit counts.
JSON_VALUE_DEPTH = MAX_JSON_DEPTH - 1


def _checked_json(value: object, node: ValueNode | None = None) -> object:
    """REST's rule for a JSON value (resolvers/validation.py ``json_problems``), or a refusal
    naming each bad part by its path inside the value (``$.a.b``); GraphQL adds where the value
    is (``Variable '$i' has invalid value at .assumptionsSnapshot``, or the literal's location)."""
    problems = json_problems(value, max_depth=JSON_VALUE_DEPTH)
    if problems:
        parts = "; ".join(f"{_inside(path)} {reason}" for path, reason in problems.items())
        raise GraphQLError(f"Invalid JSON value: {parts}", node, extensions={"code": "BAD_USER_INPUT"})
    return value


def _parse_json_literal(node: ValueNode, variables: dict[str, Any] | None = None) -> object:
    return _checked_json(_literal(node, variables), node)


def _inside(path: str) -> str:
    if path == "body":
        return "$"
    return "$" + path if path.startswith("[") else "$." + path


# Far beyond any 64-bit integer; json_problems names those, this only keeps int() from failing.
_MAX_DIGITS = 100


def _refused(reason: str, node: ValueNode) -> GraphQLError:
    return GraphQLError(f"Invalid JSON value: {reason}", node, extensions={"code": "BAD_USER_INPUT"})


def _literal(node: ValueNode, variables: dict[str, Any] | None) -> object:
    """A literal as JSON, without recursion (the document may nest as deep as its parser lets).

    graphql-core's own conversion reads ``1e400`` as infinity and never looks at the size of
    an integer; here a number becomes what the same text sent as JSON would (``int`` or a
    finite ``float``), and anything else is left to ``json_problems``.
    """
    root: list[object] = []
    stack: list[tuple[ValueNode, Any, Any]] = [(node, root, 0)]
    root.append(None)
    while stack:
        current, into, key = stack.pop()
        value: object
        if isinstance(current, ObjectValueNode):
            value = {}
            stack.extend((f.value, value, f.name.value) for f in reversed(current.fields))
        elif isinstance(current, ListValueNode):
            value = [None] * len(current.values)
            stack.extend((v, value, i) for i, v in reversed(list(enumerate(current.values))))
        elif isinstance(current, IntValueNode):
            if len(current.value) > _MAX_DIGITS:  # int() itself refuses beyond ~4,300
                raise _refused(f"the number {current.value[:40]}… is too long", current)
            value = int(current.value)
        elif isinstance(current, FloatValueNode):
            value = float(current.value)
            if math.isinf(value):
                raise _refused(f"the number {current.value[:40]} is too large (not a finite double)", current)
        elif isinstance(current, StringValueNode | EnumValueNode):
            value = current.value
        elif isinstance(current, BooleanValueNode):
            value = current.value
        elif isinstance(current, NullValueNode):
            value = None
        elif isinstance(current, VariableNode):
            value = (variables or {}).get(current.name.value)
        else:  # pragma: no cover - every ValueNode kind is above
            raise _refused("not a JSON value", current)
        into[key] = value
    return root[0]


JSON = ScalarDefinition(
    name="JSON",
    description="Any JSON value, under the rule REST applies to the same fields: numbers finite, "
    f"integers within 64 bits ({MIN_JSON_INT} to {MAX_JSON_INT}), text without NUL or lone surrogates, at most "
    f"{JSON_VALUE_DEPTH} levels deep. Anything else is refused with BAD_USER_INPUT, as a literal "
    "or a variable.",
    specified_by_url="https://ecma-international.org/wp-content/uploads/ECMA-404_2nd_edition_december_2017.pdf",
    serialize=lambda value: value,
    parse_value=_checked_json,
    parse_literal=_parse_json_literal,
    origin=StockJSON,
)

# Strawberry's own JSON takes whatever its parsers produce (an integer of 30 digits, 1e400 as
# infinity); every field typed with it gets this one instead.
SCALARS: dict[object, ScalarDefinition] = {uuid.UUID: UUID, date: DATE, datetime: DATETIME, StockJSON: JSON}
