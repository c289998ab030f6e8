"""BAD_USER_INPUT field paths in GraphQL's names, translated once at the GraphQL boundary.

The resolvers name a bad field by its REST path (``per_page``, ``shipments[0].distance_km``):
they validate the plain mapping both transports hand them. A GraphQL client sent ``perPage``
and ``input: {shipments: [{distanceKm}]}``, so that is what its error should name. Rather than
each mutation renaming its own errors, the executor does it where a field's error is handled:
it knows the field (hence its arguments and their input types) and runs only when an error
happened, so the happy path pays nothing.

The GraphQL path is the argument path: ``perPage``, ``input.name``,
``input.shipments[0].distanceKm``. Keys inside a ``JSON`` value are the caller's own and are
kept as sent (``input.extractedMetadataJson.pages[0].t\\u0000``). docs/graphql-schema.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from graphql import (
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
)
from graphql.pyutils import Path
from strawberry.utils.str_converters import to_camel_case

from evidence_gateway.errors import InvalidInput
from evidence_gateway.schema.execution import PlainLeaves

_INDEX = re.compile(r"\[\d+\]")
_NAME = re.compile(r"\.?([^.\[]+)")
# A query parameter's key segment (REST ``filter[created_at][gte]``): a field, like ``.created_at``.
_KEY = re.compile(r"\[([A-Za-z_][A-Za-z0-9_]*)\]")
# A whole-body refusal ("request body must be a JSON object") is about the input argument.
_WHOLE_BODY = "body"
INPUT = "input"


def _input_fields(gql_type: Any) -> Mapping[str, Any] | None:
    """The fields one level down, or None when the value is a scalar (JSON: the caller's keys)."""
    while isinstance(gql_type, GraphQLNonNull | GraphQLList):
        gql_type = gql_type.of_type
    return gql_type.fields if isinstance(gql_type, GraphQLInputObjectType) else None


def graphql_field_path(field: GraphQLField, rest_path: str) -> str:
    """``shipments[0].distance_km`` of ``registerImport`` -> ``input.shipments[0].distanceKm``;
    ``filter[created_at][gte]`` of a connection -> ``filter.createdAt.gte``."""
    if rest_path == _WHOLE_BODY and INPUT in field.args:
        return INPUT
    out = ""
    known: Mapping[str, Any] | None = field.args
    at = 0
    while at < len(rest_path):
        index = _INDEX.match(rest_path, at)
        if index is not None:
            out += index.group()
            at = index.end()
            continue
        name = _NAME.match(rest_path, at) or (_KEY.match(rest_path, at) if known is not None else None)
        if known is None or name is None:
            return out + rest_path[at:]  # inside a JSON value: the caller's own keys
        graphql_name = to_camel_case(name.group(1))
        if not out and graphql_name not in known and INPUT in known:
            # Resolver paths name fields of the input object; arguments are named alone.
            out, known = INPUT, _input_fields(field.args[INPUT].type)
            if known is None:
                return f"{out}.{rest_path}"
        if known is None or graphql_name not in known:
            return out + ("." if out else "") + rest_path[at:].lstrip(".")
        out += ("." if out else "") + graphql_name
        known = _input_fields(known[graphql_name].type)
        at = name.end()
    return out


class GraphQLInputPaths(PlainLeaves):
    """Executor whose field errors name GraphQL input paths (see the module docstring)."""

    def handle_field_error(self, raw_error: Exception, return_type: Any, field_details_list: Any, path: Path) -> None:
        fields = raw_error.details.get("fields") if isinstance(raw_error, InvalidInput) else None
        parent = self.schema.get_type(path.typename) if path.typename else None
        if isinstance(fields, dict) and isinstance(parent, GraphQLObjectType):
            field = self.schema.get_field(parent, field_details_list[0].node.name.value)
            if field is not None:
                assert isinstance(raw_error, InvalidInput)
                raw_error.details["fields"] = {graphql_field_path(field, k): v for k, v in fields.items()}
        super().handle_field_error(raw_error, return_type, field_details_list, path)
