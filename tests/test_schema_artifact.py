"""schema.graphql is the committed API surface: it must match the code, and document every type and field."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLScalarType,
    specified_scalar_types,
)

from evidence_gateway.cli import main
from evidence_gateway.schema import schema

SDL_FILE = Path(__file__).resolve().parent.parent / "schema.graphql"
REGENERATE = "regenerate with `evidence-gateway export-schema > schema.graphql`"
# Scalars Strawberry ships (JSON, ...) are documented upstream; UUID, Date and DateTime are ours (schema/scalars.py).
STRAWBERRY_SCALARS = {"Time", "Decimal", "JSON", "Base64", "Upload", "Void"}


def test_committed_sdl_matches_the_code() -> None:
    committed = SDL_FILE.read_text() if SDL_FILE.exists() else ""
    current = schema.as_str() + "\n"
    if committed != current:
        diff = "".join(
            difflib.unified_diff(
                committed.splitlines(keepends=True),
                current.splitlines(keepends=True),
                "schema.graphql (committed)",
                "schema (code)",
                n=1,
            )
        )
        raise AssertionError(f"schema.graphql is out of date: {REGENERATE}\n{diff[:4000]}")


def test_export_schema_prints_the_sdl(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export-schema"]) == 0
    assert capsys.readouterr().out == schema.as_str() + "\n"


def test_every_type_field_argument_and_enum_value_has_a_description() -> None:
    missing: list[str] = []
    for name, gql_type in schema._schema.type_map.items():
        if name.startswith("__") or name in specified_scalar_types:
            continue
        if isinstance(gql_type, GraphQLScalarType) and name in STRAWBERRY_SCALARS:
            continue
        if not gql_type.description:
            missing.append(f"type {name}")
        if isinstance(gql_type, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            missing.extend(f"field {name}.{field}" for field, f in gql_type.fields.items() if not f.description)
        if isinstance(gql_type, GraphQLObjectType | GraphQLInterfaceType):
            missing.extend(
                f"argument {name}.{field}({arg})"
                for field, f in gql_type.fields.items()
                for arg, a in f.args.items()
                if not a.description
            )
        if isinstance(gql_type, GraphQLEnumType):
            if not gql_type.values:
                missing.append(f"enum {name} has no values")
            missing.extend(f"enum value {name}.{value}" for value, v in gql_type.values.items() if not v.description)
    assert not missing, "add description= to: " + ", ".join(missing)


def test_enum_values_are_screaming_snake_case() -> None:
    """What GraphQL clients and their code generators expect; REST keeps the lowercase values."""
    enums = [t for n, t in schema._schema.type_map.items() if isinstance(t, GraphQLEnumType) and not n.startswith("__")]
    assert len(enums) >= 15
    wrong = [f"{e.name}.{v}" for e in enums for v in e.values if v != v.upper() or " " in v]
    assert not wrong, wrong
