"""Building blocks and component schemas of the OpenAPI 3.1 document (see openapi.py).

Response schemas are generated from the read models (evidence_gateway/read_models/): every
field required (always present; "nullable" means present and maybe null, as the contract puts
it). Request schemas are generated from the resolvers' input models (openapi_inputs.py).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

Schema = dict[str, Any]

EXT = {"x-extension": True}
NULL = {"type": "null"}


# -- primitives ---------------------------------------------------------------------------------


def string(fmt: str | None = None, **kw: Any) -> Schema:
    out: Schema = {"type": "string", **kw}
    if fmt:
        out["format"] = fmt
    return out


def uuid_(**kw: Any) -> Schema:
    return string("uuid", **kw)


def integer(**kw: Any) -> Schema:
    return {"type": "integer", **kw}


def enum(values: Any, **kw: Any) -> Schema:
    return {"type": "string", "enum": [getattr(v, "value", v) for v in values], **kw}


def free_object(description: str = "Free-form keys.") -> Schema:
    return {"type": "object", "description": description}


def array(items: Schema, **kw: Any) -> Schema:
    return {"type": "array", "items": items, **kw}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    """OpenAPI 3.1 nullability: ``type: [t, "null"]``; a $ref becomes anyOf with null (its description
    and default beside the anyOf), which generators read as one optional type. Enums are components
    referenced this way: an inline ``enum`` with null makes some generators emit a class per branch."""
    if "$ref" in schema:
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        return {"anyOf": [{"$ref": schema["$ref"]}, {"type": "null"}], **rest}
    out = dict(schema)
    out["type"] = [schema["type"], "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def obj(properties: dict[str, Schema], required: list[str] | None = None, **kw: Any) -> Schema:
    """An object; ``required=None`` means every listed property is always present."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        **kw,
    }


# Inputs are parsed strictly (resolvers/validation.py): the format as a pattern too, so
# tools that treat `format` as a mere annotation do not count "" as a valid id or date.
INPUT_PATTERNS = {
    "uuid": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
}


def as_input(schema: Schema) -> Schema:
    pattern = INPUT_PATTERNS.get(schema.get("format", ""))
    return {**schema, "pattern": pattern} if pattern else schema


# -- envelopes ----------------------------------------------------------------------------------


def data_envelope(schema: Schema) -> Schema:
    return obj({"data": schema})


def page_envelope(item: Schema) -> Schema:
    return obj({"data": array(item), "pagination": ref("PaginationMeta")})


def meta_envelope(schema: Schema, meta: Schema) -> Schema:
    return obj({"data": schema, "meta": meta})


# -- components ---------------------------------------------------------------------------------


def _error() -> Schema:
    details = obj(
        {
            "code": string(description="Stable machine code (bad_request, not_found, invalid_input, …)."),
            "fields": {
                "type": "object",
                "additionalProperties": string(),
                "description": "422 only: each invalid field (JSON path) and why.",
            },
            "request_id": string(description="The answer's X-Request-ID: quote it when reporting a problem."),
        },
        required=["code", "request_id"],
        description="Free-form details; always carries code and request_id.",
    )
    return obj({"error": string(description="Short message."), "details": details}, required=["error", "details"])


class ComponentSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without a title per field (the field name says it) and without the
    enums' docstrings, which speak to developers rather than to API users."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def enum_schema(self, schema: Any) -> Schema:
        out = super().enum_schema(schema)
        out.pop("description", None)
        return out


def split_null(field: Schema) -> tuple[Schema, bool]:
    """pydantic's schema of ``T | None`` (``anyOf`` with null, the field's description and default
    beside it) as T's schema with those keys, and whether null was allowed."""
    branches = field.get("anyOf")
    if branches is None or NULL not in branches:
        return field, False
    (value,) = [b for b in branches if b != NULL]
    return {**value, **{k: v for k, v in field.items() if k != "anyOf"}}, True


def open_object(model: type[BaseModel]) -> Schema:
    """A free-form object whose known keys ``model`` declares, none of them promised (more may come)."""
    raw = model.model_json_schema(mode="serialization", schema_generator=ComponentSchema)
    properties: dict[str, Schema] = {}
    for name, field in raw["properties"].items():
        schema, null = split_null(field)
        properties[name] = nullable(schema) if null else schema
    return {**free_object(raw["description"]), "properties": properties}


def read_model_schemas(models: tuple[type[BaseModel], ...]) -> dict[str, Schema]:
    """Each read model (and the enums and parts they use) as a component, named like its class."""
    _, top = models_json_schema(
        [(model, "serialization") for model in models],
        ref_template="#/components/schemas/{model}",
        schema_generator=ComponentSchema,
    )
    defs: dict[str, Schema] = top["$defs"]
    return defs


def component_schemas(
    response_models: tuple[type[BaseModel], ...], request_components: dict[str, Schema]
) -> dict[str, Schema]:
    """The read models, the error body, and what request bodies refer to (shipment rows, enums)."""
    out = {"ErrorResponse": _error(), **read_model_schemas(response_models)}
    for name, schema in request_components.items():
        held = out.setdefault(name, schema)
        # An enum both a read model and a request use is one component (the read model's titled one).
        assert held.get("enum", held) == schema.get("enum", schema), f"two different components named {name}"
    return out


__all__ = [
    "EXT",
    "NULL",
    "ComponentSchema",
    "array",
    "as_input",
    "component_schemas",
    "data_envelope",
    "enum",
    "free_object",
    "integer",
    "meta_envelope",
    "nullable",
    "obj",
    "open_object",
    "page_envelope",
    "split_null",
    "ref",
    "string",
    "uuid_",
]
