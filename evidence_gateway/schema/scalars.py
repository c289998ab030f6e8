"""The GraphQL scalars' wire formats, taken from the rules REST already applies.

Strawberry's own ``UUID`` accepts every spelling ``uuid.UUID()`` does (braces, ``urn:uuid:``,
bare hex) and its ``DateTime`` prints ``+00:00``; REST takes only the canonical id and writes
``Z``. Rather than a second rule per transport, these scalars call the REST ones
(``resolvers/validation.py``, ``jsoncodec.py``). docs/graphql-schema.md lists the formats.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from strawberry.exceptions import StrawberryInputCoercionError
from strawberry.types.scalar import ScalarDefinition

from evidence_gateway.jsoncodec import timestamp
from evidence_gateway.resolvers.validation import canonical_uuid, iso_date


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
    return str(value)  # always the lowercase dashed form


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

SCALARS: dict[object, ScalarDefinition] = {uuid.UUID: UUID, date: DATE, datetime: DATETIME}
