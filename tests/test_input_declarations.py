"""One input declaration per write: the resolvers' input model. The other two must agree with it.

Both transports hand the resolvers a plain mapping that ``validation.parse`` checks against the
input model (``WorkspaceCreate``, ...), so the model is where a body's fields, types, bounds,
enums and required fields are declared. The OpenAPI request schema is generated from it
(rest_compat/openapi_inputs.py); the GraphQL input type is written beside the mutation, so this
test reads the built schema and fails when the two disagree: a field on one side only (names
modulo camelCase), another type, another enum, or another idea of what is required. Bounds have
no GraphQL spelling; they cannot drift, because GraphQL input is checked by the same model.
"""

from __future__ import annotations

from typing import Any

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLScalarType,
    Undefined,
)
from pydantic import BaseModel
from strawberry.utils.str_converters import to_camel_case

from evidence_gateway.resolvers.approvals import ApprovalInput
from evidence_gateway.resolvers.calculations import CalculateInput
from evidence_gateway.resolvers.evidence import EvidenceCreate
from evidence_gateway.resolvers.imports import HubRowIn, ImportCreate, ShipmentRow
from evidence_gateway.resolvers.keys import KeyCreate
from evidence_gateway.resolvers.list_queries import (
    CALCULATION_RUNS,
    EVENTS,
    EVIDENCE_ITEMS,
    IMPORT_BATCHES,
    LEGACY_REPORTS,
    PACKS,
    WEBHOOK_DELIVERIES,
    WEBHOOK_ENDPOINTS,
    WORKSPACES,
)
from evidence_gateway.resolvers.packs import GeneratePackInput
from evidence_gateway.resolvers.validation import StrictInput
from evidence_gateway.resolvers.webhook_endpoints import EndpointCreate, EndpointUpdate
from evidence_gateway.resolvers.webhooks import WebhookTestInput
from evidence_gateway.resolvers.workspaces import WorkspaceCreate
from evidence_gateway.rest_compat.openapi import document
from evidence_gateway.rest_compat.openapi_routes import OPERATIONS
from evidence_gateway.schema import schema

# GraphQL input type -> the input model its mutation's resolver parses.
GRAPHQL_INPUTS: dict[str, type[StrictInput]] = {
    "CreateWorkspaceInput": WorkspaceCreate,
    "RegisterImportInput": ImportCreate,
    "ShipmentRowInput": ShipmentRow,
    "HubRowInput": HubRowIn,
    "CalculateWorkspaceInput": CalculateInput,
    "GeneratePackInput": GeneratePackInput,
    "RecordApprovalInput": ApprovalInput,
    "CreateEvidenceItemInput": EvidenceCreate,
    "TestWebhookInput": WebhookTestInput,
    "CreateWebhookEndpointInput": EndpointCreate,
    "UpdateWebhookEndpointInput": EndpointUpdate,
    "CreateApiKeyInput": KeyCreate,
}
# Read arguments, not write inputs: each list's filter and order types are generated from its one
# declaration (resolvers/list_queries.py), which both transports check requests against.
LIST_INPUTS = {
    f"{spec.type_name}{kind}"
    for spec in (
        WORKSPACES,
        PACKS,
        CALCULATION_RUNS,
        EVIDENCE_ITEMS,
        EVENTS,
        WEBHOOK_ENDPOINTS,
        WEBHOOK_DELIVERIES,
        LEGACY_REPORTS,
        IMPORT_BATCHES,
    )
    for kind in ("Filter", "Order")
} | {"DateTimeRange"}
# Input models no GraphQL input type stands for, and why.
NOT_GRAPHQL_INPUTS: dict[str, str] = {
    "LegacyRecord": "a line of the legacy export file `evidence-gateway import-legacy` reads",
    "_ListFilter": "REST's evidence-item list query (GraphQL takes workspaceId as an argument)",
    "RecipientCreate": "REST's /api/sharing/recipients body (GraphQL createDataRecipient takes name as an argument)",
    "PublicationCreate": "REST's /api/sharing/publications body (GraphQL publishPack takes recipientId and packId)",
    "RecipientHost": "REST's /api/sharing/recipients/{id}/host body (GraphQL setDataRecipientHost takes arguments)",
}
# (GraphQL input, field) whose GraphQL type is plainer than the model's, and why.
PLAINER_IN_GRAPHQL: dict[tuple[str, str], str] = {
    ("CreateWebhookEndpointInput", "eventTypes"): "dotted event names (pack.published) are no GraphQL enum values",
    ("UpdateWebhookEndpointInput", "eventTypes"): "dotted event names (pack.published) are no GraphQL enum values",
}
# A JSON Schema type and format -> the GraphQL scalar that carries it.
SCALARS: dict[tuple[str, str | None], str] = {
    ("string", "uuid"): "UUID",
    ("string", "date"): "Date",
    ("string", "date-time"): "DateTime",
    ("string", "uri"): "String",
    ("string", None): "String",
    ("integer", None): "Int",
    ("number", None): "Float",
    ("boolean", None): "Boolean",
    ("object", None): "JSON",
}


def _all_inputs() -> set[str]:
    found: set[str] = set()
    pending: list[type[StrictInput]] = [StrictInput]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.add(sub.__name__)
            pending.append(sub)
    return found


def _model_type(field: dict[str, Any], defs: dict[str, Any]) -> str:
    """The field's type as the GraphQL type it should be, without nullability: ``[ShipmentRow]``
    for a list, ``enum:TransportMode`` for an enum, a scalar's name otherwise."""
    branches = [b for b in field.get("anyOf", [field]) if b != {"type": "null"}]
    assert len(branches) == 1, f"a union the comparison does not know: {field}"
    (value,) = branches
    if "$ref" in value:
        return "model:" + str(value["$ref"]).rsplit("/", 1)[1]
    if "enum" in value:
        return "enum:" + ",".join(sorted(value["enum"]))
    if value.get("type") == "array":
        return f"[{_model_type(value['items'], defs)}]"
    return SCALARS[(value["type"], value.get("format"))]


def _graphql_type(gql: Any) -> str:
    while isinstance(gql, GraphQLNonNull):
        gql = gql.of_type
    if isinstance(gql, GraphQLList):
        return f"[{_graphql_type(gql.of_type)}]"
    assert isinstance(gql, GraphQLNamedType)
    if isinstance(gql, GraphQLEnumType):
        return "enum:" + ",".join(sorted(str(getattr(v.value, "value", v.value)) for v in gql.values.values()))
    if isinstance(gql, GraphQLInputObjectType):
        return "model:" + GRAPHQL_INPUTS[gql.name].__name__
    assert isinstance(gql, GraphQLScalarType)
    return gql.name


def _shape(model: type[BaseModel]) -> dict[str, tuple[str, bool, Any]]:
    """GraphQL field name -> (type, required, default) as the model declares them."""
    raw = model.model_json_schema(mode="validation")
    required = set(raw.get("required", ()))
    return {
        to_camel_case(name): (_model_type(field, raw.get("$defs", {})), name in required, field.get("default"))
        for name, field in raw["properties"].items()
    }


def _offered(field: GraphQLInputField) -> tuple[str, bool, Any]:
    """(type, required, default) of a GraphQL input field: required means non-null without a default."""
    default = None if field.default_value is Undefined else getattr(field.default_value, "value", field.default_value)
    required = isinstance(field.type, GraphQLNonNull) and field.default_value is Undefined
    return _graphql_type(field.type), required, default


def test_every_input_is_paired() -> None:
    """A new GraphQL input type or input model names its counterpart here (or why it has none)."""
    graphql = {name for name, t in schema._schema.type_map.items() if isinstance(t, GraphQLInputObjectType)}
    assert graphql == set(GRAPHQL_INPUTS) | LIST_INPUTS
    models = {m.__name__ for m in GRAPHQL_INPUTS.values()}
    assert _all_inputs() - models == set(NOT_GRAPHQL_INPUTS)


@pytest.mark.parametrize("graphql_name", sorted(GRAPHQL_INPUTS))
def test_graphql_input_agrees_with_its_model(graphql_name: str) -> None:
    gql = schema._schema.type_map[graphql_name]
    assert isinstance(gql, GraphQLInputObjectType)
    declared = _shape(GRAPHQL_INPUTS[graphql_name])
    offered = {name: _offered(field) for name, field in gql.fields.items()}
    only = {"GraphQL": sorted(offered.keys() - declared.keys()), "model": sorted(declared.keys() - offered.keys())}
    assert only == {"GraphQL": [], "model": []}, f"{graphql_name}: fields on one side only: {only}"
    for name, (gql_type, gql_required, gql_default) in offered.items():
        model_type, model_required, model_default = declared[name]
        assert gql_required == model_required, f"{graphql_name}.{name}: required {gql_required} vs {model_required}"
        # A GraphQL default is sent as if the client wrote it: it must be the model's own.
        assert gql_default is None or gql_default == model_default, f"{graphql_name}.{name}: default"
        if (graphql_name, name) in PLAINER_IN_GRAPHQL:
            continue
        assert gql_type == model_type, f"{graphql_name}.{name}: {gql_type} in GraphQL, {model_type} in the model"


def test_the_plainer_graphql_fields_are_still_plainer() -> None:
    """An entry above that GraphQL has since caught up with must go."""
    for graphql_name, name in PLAINER_IN_GRAPHQL:
        gql = schema._schema.type_map[graphql_name]
        assert isinstance(gql, GraphQLInputObjectType)
        declared = _shape(GRAPHQL_INPUTS[graphql_name])[name][0]
        assert _graphql_type(gql.fields[name].type) != declared


@pytest.mark.parametrize("op", [op for op in OPERATIONS if op.body is not None], ids=lambda op: op.op_id)
def test_rest_request_schema_is_the_model(op: Any) -> None:
    """The served document's body lists the model's fields with the model's required ones."""
    body = document()["paths"][op.path][op.method]["requestBody"]["content"]["application/json"]["schema"]
    raw = op.body.model_json_schema(mode="validation")
    assert list(body["properties"]) == list(raw["properties"])
    assert body["required"] == raw.get("required", [])
