"""Building blocks and component schemas of the OpenAPI 3.1 document (see openapi.py).

Response schemas are generated from the read models (evidence_gateway/read_models/): every
field required (always present; "nullable" means present and maybe null, as the contract puts
it). Request schemas mirror the resolvers' pydantic inputs: same types, bounds and enums.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, models_json_schema

from evidence_gateway import read_models
from evidence_gateway.models import (
    DistanceSource,
    DistanceType,
    FuelType,
    IntensityBasis,
    TransportMode,
)

Schema = dict[str, Any]

EXT = {"x-extension": True}


# -- primitives ---------------------------------------------------------------------------------


def string(fmt: str | None = None, **kw: Any) -> Schema:
    out: Schema = {"type": "string", **kw}
    if fmt:
        out["format"] = fmt
    return out


def uuid_(**kw: Any) -> Schema:
    return string("uuid", **kw)


def date_(**kw: Any) -> Schema:
    return string("date", **kw)


def integer(**kw: Any) -> Schema:
    return {"type": "integer", **kw}


def number(**kw: Any) -> Schema:
    return {"type": "number", **kw}


def boolean() -> Schema:
    return {"type": "boolean"}


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


def ext(schema: Schema, description: str | None = None) -> Schema:
    """Marks a field or operation we added beyond the contract."""
    out = {**schema, **EXT}
    if description:
        out["description"] = description
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


def request_obj(properties: dict[str, Schema], required: list[str], not_null: frozenset[str] = frozenset()) -> Schema:
    """A request body: optional fields also accept null, which the resolvers read as absent."""
    props = {k: as_input(v) if k in required or k in not_null else nullable(as_input(v)) for k, v in properties.items()}
    return obj(props, required=required)


# -- envelopes ----------------------------------------------------------------------------------


def data_envelope(schema: Schema) -> Schema:
    return obj({"data": schema})


def page_envelope(item: Schema) -> Schema:
    return obj({"data": array(item), "pagination": ref("PaginationMeta")})


def meta_envelope(schema: Schema, meta: Schema) -> Schema:
    return obj({"data": schema, "meta": meta})


# -- input bounds shared with resolvers/validation.py --------------------------------------------

SHORT_TEXT = string(maxLength=500)
LABEL = string(maxLength=200)
NAME = string(minLength=1, maxLength=200, pattern=r"\S", description="Trimmed; 1–200 characters.")


# -- components ---------------------------------------------------------------------------------


# Enums of request bodies that no read model shows: named components, each referenced (and made
# nullable) as one schema.
REQUEST_ENUMS: dict[str, Schema] = {
    "TransportMode": enum(TransportMode),
    "FuelType": enum(FuelType),
    "DistanceSource": enum(DistanceSource),
    "IntensityBasis": enum(IntensityBasis),
    "DistanceType": enum(DistanceType),
}


def _shipment_row() -> Schema:
    return ext(
        request_obj(
            {
                "external_id": LABEL,
                "mode": ref("TransportMode"),
                "distance_km": number(minimum=0, maximum=50_000),
                "mass_tonnes": number(minimum=0, maximum=1_000_000),
                "origin": LABEL,
                "destination": LABEL,
                "fuel_type": {
                    **ref("FuelType"),
                    "description": "litres: diesel, petrol, hvo; kg: cng … jet_kerosene; kWh",
                },
                "fuel_amount": number(
                    exclusiveMinimum=0, maximum=1e9, description="Fuel or energy used, in the unit of fuel_type."
                ),
                "carrier_intensity_g_per_tkm": number(exclusiveMinimum=0, maximum=1e6),
                "distance_source": {**ref("DistanceSource"), "default": DistanceSource.measured.value},
                "carrier_intensity_basis": {
                    **ref("IntensityBasis"),
                    "description": "Boundary of carrier_intensity_g_per_tkm; required with it.",
                },
                "vehicle_payload_tonnes": number(
                    exclusiveMinimum=0,
                    maximum=1_000_000,
                    description="With fuel: the vehicle's total payload on the trip; share = mass / payload.",
                ),
                "fuel_allocation_share": number(
                    exclusiveMinimum=0, maximum=1, description="With fuel: the carrier's allocation share."
                ),
                "distance_type": {**ref("DistanceType"), "description": "actual, sfd or gcd (GLEC distance types)."},
                "shipment_date": date_(),
            },
            required=[],
            not_null=frozenset({"distance_source"}),
        ),
        "A shipment row; absent measures are stored and counted as missing by the calculation.",
    )


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


# Response bodies: generated from the read models, so a field is declared once (read_models/).
RESPONSE_MODELS: tuple[type[BaseModel], ...] = (
    read_models.PaginationMeta,
    read_models.Workspace,
    read_models.WorkspaceDetail,
    read_models.ImportBatch,
    read_models.CalculationRun,
    read_models.CalculationRunDetail,
    read_models.CalculationResult,
    read_models.DataQualityAssessment,
    read_models.ReportPack,
    read_models.ReportPackDetail,
    read_models.PackArtifact,
    read_models.ApprovalActionResult,
    read_models.ApprovalAction,
    read_models.Event,
    read_models.EventPage,
    read_models.EvidenceItem,
    read_models.WebhookTestResult,
    read_models.WebhookDelivery,
    read_models.WebhookEndpoint,
    read_models.WebhookEndpointWithSecret,
    read_models.MethodologyProfile,
    read_models.LegacyReport,
)


class _ComponentSchema(GenerateJsonSchema):
    """pydantic's JSON Schema without a title per field (the field name says it) and without the
    enums' docstrings, which speak to developers rather than to API users."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def enum_schema(self, schema: Any) -> Schema:
        out = super().enum_schema(schema)
        out.pop("description", None)
        return out


def read_model_schemas() -> dict[str, Schema]:
    """Each read model (and the enums and parts they use) as a component, named like its class."""
    _, top = models_json_schema(
        [(model, "serialization") for model in RESPONSE_MODELS],
        ref_template="#/components/schemas/{model}",
        schema_generator=_ComponentSchema,
    )
    defs: dict[str, Schema] = top["$defs"]
    return defs


def component_schemas(extra_enums: dict[str, Schema] | None = None) -> dict[str, Schema]:
    """The read models, the shipment row, the error body and the request bodies' own enums."""
    out = {
        "ErrorResponse": _error(),
        "ShipmentRow": _shipment_row(),
        **read_model_schemas(),
    }
    for name, schema in {**REQUEST_ENUMS, **(extra_enums or {})}.items():
        assert name not in out, f"enum component {name} is already a read model's"
        out[name] = schema
    return out


__all__ = [
    "EXT",
    "REQUEST_ENUMS",
    "LABEL",
    "NAME",
    "SHORT_TEXT",
    "array",
    "as_input",
    "boolean",
    "component_schemas",
    "data_envelope",
    "date_",
    "enum",
    "ext",
    "free_object",
    "integer",
    "meta_envelope",
    "nullable",
    "number",
    "obj",
    "page_envelope",
    "ref",
    "request_obj",
    "string",
    "uuid_",
]
