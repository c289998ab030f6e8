"""Request bodies of the OpenAPI document, made from the resolvers' input models.

An input model (``StrictInput``) is what both transports validate, so its pydantic JSON Schema
is the truth about a body: names, types, bounds, which fields are required, what may be null.
This module only restates it in the document's dialect:

- an optional field also accepts null (the resolvers read null as absent): ``type: [t, "null"]``,
  or ``anyOf`` with null around a ``$ref``, which generators read as one optional type;
- an enum (``OneOf``, titled with its enum's name) is a ``$ref`` to one component per enum;
- ``uuid`` and ``date`` carry their pattern too (``as_input``), since inputs are parsed strictly;
- a nested model (a shipment row) is a component of its own, named like its class;
- titles, ``default: null`` and no-op bounds are left out.

Descriptions, ``x-extension`` and schema-only facts (``format: uri``) are declared on the model
(attribute docstrings, ``Field``), so a field added there is in the document with no other edit.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel

from evidence_gateway.resolvers.list_queries import MAX_CONTAINS, FilterKind, ListSpec
from evidence_gateway.rest_compat.openapi_schemas import (
    ComponentSchema,
    Schema,
    as_input,
    enum,
    nullable,
    obj,
    ref,
    split_null,
)

_DEFS = "#/$defs/"
# pydantic leaves a bound of a before-validated type under its Field name (``WholeNumber``).
_BOUND_NAMES = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


class InputSchemas:
    """Collects the components that request bodies refer to: nested models and enums."""

    def __init__(self) -> None:
        self.components: dict[str, Schema] = {}

    def body(self, model: type[BaseModel]) -> Schema:
        """The request body schema of ``model``, its nested models and enums noted as components."""
        raw = model.model_json_schema(mode="validation", schema_generator=ComponentSchema)
        for name, definition in raw.get("$defs", {}).items():
            self._component(name, self._object(definition))
        return self._object(raw)

    def _component(self, name: str, schema: Schema) -> None:
        held = self.components.setdefault(name, schema)
        assert held == schema, f"two different request components named {name}"

    def _object(self, raw: Schema) -> Schema:
        required: list[str] = list(raw.get("required", []))
        properties = {name: self._field(field) for name, field in raw["properties"].items()}
        extra = {k: v for k, v in raw.items() if k not in ("type", "properties", "required", "title", "$defs")}
        return obj(properties, required=required, **extra)

    def _field(self, raw: Schema) -> Schema:
        value, null = split_null(raw)
        if not null:
            return self._value(value)
        # Optional: the resolvers read null as absent (no default to show).
        if value.get("default", ...) is None:
            del value["default"]
        return nullable(self._value(value))

    def _value(self, raw: Schema) -> Schema:
        out = {k: v for k, v in raw.items() if k != "title"}
        if "enum" in raw:
            name = raw.get("title")
            assert name, f"an inline enum without its enum's name (use OneOf): {raw}"
            self._component(name, enum(raw["enum"]))
            return {**ref(name), **{k: v for k, v in out.items() if k not in ("enum", "type")}}
        if "$ref" in raw:
            return {**out, **ref(raw["$ref"].removeprefix(_DEFS))}
        if "items" in raw:
            out["items"] = self._value(raw["items"])
        if out.get("type") == "object" and out.get("additionalProperties") is True:
            del out["additionalProperties"]  # the JSON Schema default
        if out.get("minLength") == 0:
            del out["minLength"]
        for name, bound in _BOUND_NAMES.items():
            if name in out:
                out[bound] = out.pop(name)
        return as_input(out)


def query_parameters(model: type[BaseModel]) -> tuple[dict[str, Any], ...]:
    """A query string's parameters from the model that validates it: names, bounds, defaults."""
    raw = model.model_json_schema(mode="validation", schema_generator=ComponentSchema)
    required = set(raw.get("required", ()))
    return tuple(
        {"name": name, "in": "query", "schema": field, **({"required": True} if name in required else {})}
        for name, field in raw["properties"].items()
    )


@cache
def input_schemas(models: tuple[type[BaseModel], ...]) -> tuple[dict[str, Schema], dict[str, Schema]]:
    """(body schema per model name, the components they refer to)."""
    schemas = InputSchemas()
    bodies = {model.__name__: schemas.body(model) for model in models}
    return bodies, schemas.components


def list_parameters(spec: ListSpec, *, sort: bool = True) -> tuple[dict[str, Any], ...]:
    """A list's ``filter[...]`` and (``sort``) ``sort`` parameters, from its declaration (the one
    GraphQL's filter and orderBy inputs are built from): extensions, each optional."""
    ext = {"x-extension": True}
    params: list[dict[str, Any]] = []
    for declared in spec.filters:
        name = f"filter[{declared.name}]"
        if declared.kind is FilterKind.ONE_OF:
            values = ", ".join(declared.values)
            params.append(
                {
                    "name": name,
                    "in": "query",
                    "schema": {"type": "string"},
                    "description": f"{declared.description} Comma-separated or repeated; of: {values}.",
                    **ext,
                }
            )
        elif declared.kind is FilterKind.RANGE:
            for bound, what in (("gte", "at or after (inclusive)"), ("lt", "before (exclusive)")):
                params.append(
                    {
                        "name": f"{name}[{bound}]",
                        "in": "query",
                        "schema": {"type": "string", "format": "date-time"},
                        "description": f"{declared.description} This bound: {what}; with an offset or Z.",
                        **ext,
                    }
                )
        elif declared.kind is FilterKind.CONTAINS:
            schema = {"type": "string", "minLength": 1, "maxLength": MAX_CONTAINS}
            params.append({"name": name, "in": "query", "schema": schema, "description": declared.description, **ext})
        elif declared.kind is FilterKind.FLAG:
            schema = {"type": "boolean"}
            params.append({"name": name, "in": "query", "schema": schema, "description": declared.description, **ext})
        else:
            schema = {"type": "string", "format": "uuid"}
            params.append({"name": name, "in": "query", "schema": schema, "description": declared.description, **ext})
    if not sort:
        return tuple(params)
    default, direction = spec.default
    keys = ", ".join(o.name for o in spec.orderings)
    params.append(
        {
            "name": "sort",
            "in": "query",
            "schema": {"type": "string"},
            "description": f"Order by one of: {keys}; ascending, or descending with a leading '-' (the id breaks "
            f"ties). Default: {'-' if direction.value == 'desc' else ''}{default}.",
            **ext,
        }
    )
    return tuple(params)
