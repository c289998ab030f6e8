"""The schema's change policy (docs/graphql.md "Deprecations and breaking changes"), as a check.

graphql-core's ``find_breaking_changes`` lists what would break a client's operations between the
released SDL and the live schema. Each is refused unless the released schema deprecated what
changes (a field, an input field, an argument, an enum value) with a dated reason at least
``DEPRECATION_NOTICE_DAYS`` before ``today``. A type may go when everything that returned or
took it could go. ``find_dangerous_changes`` that change what an existing operation gets (an enum
value or union member added, a default changed) must be named in the changelog's [Unreleased].
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from graphql import (
    BreakingChangeType,
    DangerousChangeType,
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLEnumValue,
    GraphQLField,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    find_breaking_changes,
    find_dangerous_changes,
    get_named_type,
)

from evidence_gateway.schema.common import DEPRECATION_NOTICE_DAYS, deprecation_day

Deprecatable = GraphQLField | GraphQLInputField | GraphQLArgument | GraphQLEnumValue

_FIELD = re.compile(r"^Field (\w+)\.(\w+) ")
_ARG = re.compile(r"^Argument (\w+)\.(\w+)\((\w+):\) ")
_ENUM_VALUE = re.compile(r"^Enum value (\w+)\.(\w+) was removed")
_TYPE = re.compile(r"^(\w+) was removed\.$")
# Dangerous changes an operation can observe without changing: named in the changelog.
_ANNOUNCED = {
    DangerousChangeType.VALUE_ADDED_TO_ENUM: re.compile(r"^Enum value (\w+\.\w+) was added"),
    DangerousChangeType.TYPE_ADDED_TO_UNION: re.compile(r"^(\w+) was added to union type (\w+)"),
    DangerousChangeType.ARG_DEFAULT_VALUE_CHANGE: re.compile(r"^(\w+\.\w+\(\w+:\))"),
    DangerousChangeType.INPUT_FIELD_DEFAULT_VALUE_CHANGE: re.compile(r"^(\w+\.\w+) "),
}


@dataclass(frozen=True)
class Violation:
    change: str
    why: str

    def __str__(self) -> str:
        return f"{self.change} ({self.why})"


def _element(schema: GraphQLSchema, type_name: str, field: str, arg: str | None = None) -> Deprecatable | None:
    gql_type = schema.type_map.get(type_name)
    fields = getattr(gql_type, "fields", None)
    if fields is None or field not in fields:
        return None
    found = fields[field]
    if arg is None:
        return found
    return getattr(found, "args", {}).get(arg)


def notice_problem(element: Deprecatable | None, today: date) -> str | None:
    """Why removing or changing ``element`` is not allowed yet, or None when it is."""
    if element is None:
        return "not found in the released schema"
    reason = element.deprecation_reason
    if reason is None:
        return "was not deprecated"
    day = deprecation_day(reason)
    if day is None:
        return f"deprecation reason has no date: {reason!r}"
    if day > today - timedelta(days=DEPRECATION_NOTICE_DAYS):
        ready = day + timedelta(days=DEPRECATION_NOTICE_DAYS)
        return f"deprecated on {day}, may change from {ready} ({DEPRECATION_NOTICE_DAYS} days' notice)"
    return None


def _references(schema: GraphQLSchema, type_name: str) -> list[Deprecatable]:
    """Fields, input fields and arguments whose type is ``type_name`` (through lists and non-null)."""
    found: list[Deprecatable] = []
    for gql_type in schema.type_map.values():
        if gql_type.name.startswith("__"):
            continue
        if isinstance(gql_type, GraphQLUnionType) and any(t.name == type_name for t in gql_type.types):
            return [GraphQLField(gql_type)]  # a union member: never deprecatable
        if isinstance(gql_type, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            for field in gql_type.fields.values():
                if get_named_type(field.type).name == type_name:
                    found.append(field)
                found.extend(a for a in getattr(field, "args", {}).values() if get_named_type(a.type).name == type_name)
    return found


def _breaking_problem(kind: BreakingChangeType, text: str, old: GraphQLSchema, today: date) -> str | None:
    if kind in (BreakingChangeType.FIELD_REMOVED, BreakingChangeType.FIELD_CHANGED_KIND):
        match = _FIELD.match(text)
        return notice_problem(_element(old, *match.groups()) if match else None, today)
    if kind in (BreakingChangeType.ARG_REMOVED, BreakingChangeType.ARG_CHANGED_KIND):
        match = _ARG.match(text)
        if not match:
            return "not found in the released schema"
        type_name, field, arg = match.groups()
        # An argument goes with notice of its own, or of the whole field.
        own = notice_problem(_element(old, type_name, field, arg), today)
        if own is None or notice_problem(_element(old, type_name, field), today) is None:
            return None
        return own
    if kind is BreakingChangeType.VALUE_REMOVED_FROM_ENUM:
        match = _ENUM_VALUE.match(text)
        enum = old.type_map.get(match.group(1)) if match else None
        value = enum.values.get(match.group(2)) if isinstance(enum, GraphQLEnumType) and match else None
        return notice_problem(value, today)
    if kind is BreakingChangeType.TYPE_REMOVED:
        match = _TYPE.match(text)
        references = _references(old, match.group(1)) if match else []
        if not references:
            return "a type goes only with the fields and arguments that use it"
        problems = [p for p in (notice_problem(r, today) for r in references) if p]
        return f"a field or argument of this type {problems[0]}" if problems else None
    return "never allowed: add a new field, argument or type instead"


def violations(old: GraphQLSchema, new: GraphQLSchema, today: date, announced: str = "") -> list[Violation]:
    """Breaking changes without their notice, and observable dangerous changes not in ``announced``
    (the changelog's text of the coming release)."""
    found: list[Violation] = []
    for change in find_breaking_changes(old, new):
        problem = _breaking_problem(change.type, change.description, old, today)
        if problem:
            found.append(Violation(change.description, problem))
    for change in find_dangerous_changes(old, new):
        pattern = _ANNOUNCED.get(change.type)
        match = pattern.match(change.description) if pattern else None
        if match and not all(f"`{name}`" in announced for name in match.groups()):
            names = " and ".join(f"`{name}`" for name in match.groups())
            found.append(Violation(change.description, f"name {names} in CHANGELOG.md [Unreleased]"))
    return found


def deprecated_elements(schema: GraphQLSchema) -> dict[str, str]:
    """Coordinate -> deprecation reason of everything the schema deprecates."""
    out: dict[str, str] = {}
    for name, gql_type in schema.type_map.items():
        if name.startswith("__"):
            continue
        if isinstance(gql_type, GraphQLEnumType):
            for value_name, value in gql_type.values.items():
                if value.deprecation_reason is not None:
                    out[f"{name}.{value_name}"] = value.deprecation_reason
        if isinstance(gql_type, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            for field_name, field in gql_type.fields.items():
                if field.deprecation_reason is not None:
                    out[f"{name}.{field_name}"] = field.deprecation_reason
                for arg_name, arg in getattr(field, "args", {}).items():
                    if arg.deprecation_reason is not None:
                        out[f"{name}.{field_name}({arg_name}:)"] = arg.deprecation_reason
    return out
