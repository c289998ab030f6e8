"""GET /api/openapi.json: the OpenAPI 3.1 description of every /api/v2, /api/v1 and /api/sharing operation.

Generated, not written: answers from the read models (read_models/), request bodies from the
resolvers' input models (openapi_inputs.py), operations from one row each (openapi_routes.py),
and here the rules every operation follows (which errors a row implies, the write headers, the
legacy headers). Checked against the running app by schemathesis (tests/test_openapi_contract.py).
What we added beyond the contract (docs/evidence-api-v2.md) is marked ``x-extension: true``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway import read_models
from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.rest_compat.openapi_files import bundle_operation, download_operation
from evidence_gateway.rest_compat.openapi_inputs import input_schemas
from evidence_gateway.rest_compat.openapi_routes import (
    ETAG,
    IDEMPOTENCY_KEY,
    IF_MATCH,
    IF_NONE_MATCH,
    LINK,
    LINKS,
    LOCATION,
    OPERATIONS,
    PAGE,
    Answer,
    Op,
)
from evidence_gateway.rest_compat.openapi_schemas import (
    EXT,
    Schema,
    array,
    component_schemas,
    data_envelope,
    meta_envelope,
    open_object,
    page_envelope,
    ref,
    string,
)
from evidence_gateway.web.http_body import MAX_JSON_DEPTH

VERSION = "2.0.0"
BEARER: list[dict[str, list[str]]] = [{"bearerAuth": []}]

# Every error status we answer, as a shared response: (component name, description).
ERRORS = {
    400: (
        "BadRequest",
        "Malformed JSON, a body that is not a JSON object, a missing required body, "
        f"or JSON nested deeper than {MAX_JSON_DEPTH} levels.",
    ),
    401: ("Unauthenticated", "Missing, malformed, unknown, revoked or expired API key (one answer for all)."),
    403: (
        "Forbidden",
        "The API key's scope does not cover the operation (code insufficient_scope: read keys change "
        "nothing; webhook endpoints need admin), or a signed download link expired or was tampered with.",
    ),
    404: ("NotFound", "Unknown id, another organisation's id, or a malformed id in the path."),
    409: (
        "Conflict",
        "The current state forbids the operation (details name the state), or a request with the same "
        "Idempotency-Key is still running (code idempotency_key_in_use).",
    ),
    412: ("PreconditionFailed", "If-Match named another version than the current one (details.etag)."),
    413: ("PayloadTooLarge", "Request body over the size limit."),
    415: ("UnsupportedMediaType", "Body declared as something other than application/json or application/*+json."),
    422: (
        "InvalidInput",
        "Well-formed but invalid input; details.fields names each field. Also: the Idempotency-Key "
        "was used for a different request (code idempotency_key_reused).",
    ),
    429: (
        "RateLimited",
        "A rate limit is spent (details.policy: key, address or auth_failures); retry after Retry-After "
        "seconds. RateLimit and RateLimit-Policy say what is left of each budget on every answer.",
    ),
    502: ("UpstreamFailed", "The webhook target did not accept the test request; details carry the result."),
}
# Every write reads a body (or none) through the write path: docs/write-path.md.
WRITE_ERRORS = (400, 409, 413, 415, 422)
HEADERS: dict[str, dict[str, Any]] = {
    LOCATION: {"required": True, "schema": string("uri"), "description": "The created resource."},
    ETAG: {"required": True, "schema": string(), "description": "Strong tag for If-Match."},
    LINK: {
        "required": True,
        "schema": string(),
        "description": 'RFC 8288 links to the other pages, each keeping the request\'s filters: <url>; rel="first", '
        '"prev", "next", "last" (the event log: "first" and "next").',
    },
}
LEGACY_HEADERS: dict[str, dict[str, Any]] = {
    "Deprecation": {"description": "RFC 9745: this endpoint is deprecated.", "required": True, "schema": string()},
    "Link": {
        "description": 'Successor: <…/api/v2/workspaces>; rel="successor-version".',
        "required": True,
        "schema": string(),
    },
    "Sunset": {"description": "RFC 8594 date, when configured.", "required": False, "schema": string()},
}


def errors_of(op: Op) -> set[int]:
    """The error statuses a row implies: every keyed operation can meet a missing key (401), a key
    whose scope is too narrow (403) and a spent rate limit (429); a write the write path's errors;
    an id in the path 404; a page 422; If-Match a conflict or a failed precondition."""
    out = {401, 403, 429, *op.errors}
    if op.method != "get":
        out.update(WRITE_ERRORS)
    if "{id}" in op.path:
        out.add(404)
    if any(p in op.params for p in PAGE):
        out.add(422)
    if IF_MATCH in op.params:
        out.update((409, 412))
    return out


def _json(schema: Schema) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def answer_schema(answer: Answer) -> Schema:
    assert answer.model is not None
    item = ref(answer.model.__name__)
    envelopes = {
        "data": lambda: meta_envelope(item, open_object(answer.meta)) if answer.meta else data_envelope(item),
        "page": lambda: page_envelope(item),
        "list": lambda: data_envelope(array(item)),
        "bare": lambda: item,
    }
    return envelopes[answer.shape]()


def operation(op: Op, bodies: dict[str, Schema]) -> dict[str, Any]:
    """One operation object from its row."""
    ok = op.ok
    success: dict[str, Any] = {"description": ok.description}
    if ok.shape != "none":
        success["content"] = _json(answer_schema(ok))
    # Every paged list answers a Link header beside its pagination body (rest_compat/http.py).
    headers = (*op.headers, LINK) if ok.shape == "page" and LINK not in op.headers else op.headers
    if headers:
        success["headers"] = {name: HEADERS[name] for name in headers}
    responses: dict[str, Any] = {str(ok.status): success}
    for code in sorted(errors_of(op)):
        responses[str(code)] = {"$ref": f"#/components/responses/{ERRORS[code][0]}"}
    if IF_NONE_MATCH in op.params:
        responses["304"] = {
            "description": "Not modified: If-None-Match named the current ETag (no body).",
            "headers": {ETAG: HEADERS[ETAG]},
            **EXT,
        }
    if op.accepted is not None:
        responses[str(op.accepted.status)] = {
            "description": op.accepted.description,
            "content": _json(answer_schema(op.accepted)),
            "headers": {
                LOCATION: HEADERS[LOCATION],
                "Preference-Applied": {"required": True, "schema": string(const="respond-async")},
            },
        }
    out: dict[str, Any] = {
        "operationId": op.op_id,
        "summary": op.summary,
        "tags": [op.tag],
        "security": BEARER,
        "parameters": [*op.params, *((IDEMPOTENCY_KEY,) if op.method != "get" else ())],
        "responses": responses,
    }
    if op.body is not None:
        out["requestBody"] = {"required": op.body_required, "content": _json(bodies[op.body.__name__])}
    if op.extension:
        out.update(EXT)
    if op.deprecated:
        out["deprecated"] = True
        _legacy(out)
    return out


def _legacy(op: dict[str, Any]) -> None:
    """v1 answers carry the deprecation headers, errors too (rest_compat/legacy.py): inlined."""
    shared = error_responses()
    for status, response in list(op["responses"].items()):
        if "$ref" in response:
            response = op["responses"][status] = dict(shared[response["$ref"].rsplit("/", 1)[1]])
        response["headers"] = {**response.get("headers", {}), **LEGACY_HEADERS}


def paths(bodies: dict[str, Schema]) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        out.setdefault(op.path, {})[op.method] = operation(op, bodies)
    out["/v2/artifacts/{id}/download"] = {"get": download_operation(BEARER, error_ref)}
    out["/v2/packs/{id}/bundle"] = {"get": bundle_operation(BEARER, error_ref)}
    return _add_links(out)


def error_ref(code: int) -> Schema:
    return {"$ref": f"#/components/responses/{ERRORS[code][0]}"}


def _add_links(all_paths: dict[str, Any]) -> dict[str, Any]:
    operations = {op["operationId"]: op for item in all_paths.values() for op in item.values()}
    for (source, expression), targets in LINKS.items():
        responses = operations[source]["responses"]
        success = next(r for status, r in responses.items() if status.startswith("2"))
        links = success.setdefault("links", {})
        for target in targets:
            assert target in operations, target
            links[target] = {"operationId": target, "parameters": {"id": expression}}
    return all_paths


def error_responses() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for code, (name, description) in ERRORS.items():
        response: dict[str, Any] = {"description": description, "content": _json(ref("ErrorResponse"))}
        if code == 401:
            response["headers"] = {"WWW-Authenticate": {"required": True, "schema": string(const="Bearer")}}
        if code == 429:
            response["headers"] = {"Retry-After": {"required": True, "schema": {"type": "integer", "minimum": 1}}}
        if code == 415:
            response["headers"] = {"Accept-Post": {"required": True, "schema": string(const="application/json")}}
        out[name] = response
    return out


def response_models() -> tuple[type[BaseModel], ...]:
    """The read models the operations answer with, and the page position every page carries."""
    found: dict[type[BaseModel], None] = {read_models.PaginationMeta: None}
    for op in OPERATIONS:
        for answer in (op.ok, op.accepted):
            if answer is not None and answer.model is not None:
                found[answer.model] = None
    return tuple(found)


@lru_cache(maxsize=1)
def document() -> dict[str, Any]:
    """The whole document (built once; it depends on code only)."""
    bodies, input_components = input_schemas(tuple(dict.fromkeys(op.body for op in OPERATIONS if op.body)))
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Evidence Reporting Service API",
            "version": VERSION,
            "description": "Workspace-centric API for transport-emissions evidence. "
            "`x-extension: true` marks what this server adds beyond the published contract.",
        },
        "servers": [{"url": "/api"}],
        "security": BEARER,
        "tags": [
            {"name": t}
            for t in ("workspaces", "calculations", "packs", "evidence", "webhooks", "events", "sharing", "legacy")
        ],
        "paths": paths(bodies),
        "components": {
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Organisation API key: `evk_` + 48 lowercase hex characters.",
                }
            },
            "schemas": component_schemas(response_models(), input_components),
            "responses": error_responses(),
        },
    }


@lru_cache(maxsize=1)
def _rendered() -> bytes:
    return dumps(document())


async def openapi_json(_request: Request) -> Response:
    """GET /openapi.json: no key needed."""
    return Response(_rendered(), media_type="application/json")


routes = [Route("/openapi.json", openapi_json, methods=["GET"])]
