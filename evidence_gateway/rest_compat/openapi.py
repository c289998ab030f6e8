"""GET /api/openapi.json: the OpenAPI 3.1 description of every /api/v2 and /api/v1 operation.

Written from the contract (shared/spec/evidence-api-v2.md) and checked against the running
app by schemathesis (tests/test_openapi_contract.py). What we added beyond the contract is
marked ``x-extension: true``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway.core.events import EventType
from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.models import VerificationStatus
from evidence_gateway.rest_compat.openapi_schemas import (
    EXT,
    LABEL,
    NAME,
    SHORT_TEXT,
    Schema,
    array,
    as_input,
    boolean,
    component_schemas,
    data_envelope,
    date_,
    enum,
    free_object,
    integer,
    meta_envelope,
    nullable,
    obj,
    page_envelope,
    ref,
    request_obj,
    string,
    uuid_,
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

BODY_ERRORS = (400, 409, 413, 415, 422)

# Every POST: docs/write-path.md.
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": string(minLength=1, maxLength=255),
    "description": "1–255 printable characters; the same request again within 24 h gets the stored answer.",
    **EXT,
}
IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "schema": string(),
    "description": "ETag of the resource this write depends on; 412 when it has changed.",
    **EXT,
}
PREFER = {
    "name": "Prefer",
    "in": "header",
    "required": False,
    "schema": string(),
    "description": "respond-async (RFC 7240): answer 202 with the queued resource and its Location.",
    **EXT,
}
LOCATION = {"Location": {"required": True, "schema": string("uri"), "description": "The created resource."}}
ETAG = {"ETag": {"required": True, "schema": string(), "description": "Strong tag for If-Match."}}


# -- operation helpers --------------------------------------------------------------------------


def _json(schema: Schema) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def path_id(what: str) -> dict[str, Any]:
    return {"name": "id", "in": "path", "required": True, "schema": as_input(uuid_()), "description": f"{what} id."}


def page_query() -> list[dict[str, Any]]:
    return [
        {"name": "page", "in": "query", "schema": integer(minimum=1, maximum=10_000_000, default=1)},
        {"name": "per_page", "in": "query", "schema": integer(minimum=1, maximum=100, default=20)},
    ]


def body(schema: Schema, *, required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": _json(schema)}


def operation(
    op_id: str,
    summary: str,
    ok: tuple[int, Schema, str],
    errors: tuple[int, ...],
    *,
    tag: str,
    params: list[dict[str, Any]] | None = None,
    request: dict[str, Any] | None = None,
    extension: bool = False,
    deprecated: bool = False,
    security: list[dict[str, list[str]]] | None = None,
    ok_headers: dict[str, Any] | None = None,
    accepted: tuple[Schema, str] | None = None,
) -> dict[str, Any]:
    status, schema, description = ok
    success: dict[str, Any] = {"description": description, "content": _json(schema)}
    if ok_headers:
        success["headers"] = ok_headers
    if request is not None:
        params = [*(params or []), IDEMPOTENCY_KEY]
    out: dict[str, Any] = {
        "operationId": op_id,
        "summary": summary,
        "tags": [tag],
        "security": BEARER if security is None else security,
        "parameters": params or [],
        "responses": {
            str(status): success,
            **{
                str(code): {"$ref": f"#/components/responses/{ERRORS[code][0]}"}
                # Every keyed operation can meet a key whose scope is too narrow (403).
                for code in sorted({401, 429, *errors, *((403,) if security is None else ())})
            },
        },
    }
    if accepted is not None:
        out["responses"]["202"] = {
            "description": accepted[1],
            "content": _json(accepted[0]),
            "headers": {**LOCATION, "Preference-Applied": {"required": True, "schema": string(const="respond-async")}},
        }
    if request is not None:
        out["requestBody"] = request
    if extension:
        out.update(EXT)
    if deprecated:
        out["deprecated"] = True
    return out


# -- request bodies -----------------------------------------------------------------------------


def _workspace_create() -> Schema:
    return request_obj(
        {
            "name": NAME,
            "external_reference": SHORT_TEXT,
            "reporting_period_start": date_(),
            "reporting_period_end": date_(description="Not before reporting_period_start."),
            "default_methodology_profile_id": uuid_(),
        },
        required=["name"],
    )


def _import_create() -> Schema:
    return request_obj(
        {
            "source_row_count": integer(minimum=0, maximum=2**31 - 1),
            "source_filename": SHORT_TEXT,
            "source_file_type": SHORT_TEXT,
            "mapping_profile_name": SHORT_TEXT,
            "source_system": SHORT_TEXT,
            "shipments": {**array(ref("ShipmentRow")), **EXT, "description": "Optional shipment rows (extension)."},
        },
        required=["source_row_count"],
    )


def _calculate() -> Schema:
    return request_obj(
        {
            "legacy_report_id": uuid_(),
            "export_template_id": uuid_(),
            "assumptions_snapshot": free_object("Assumptions recorded with the run."),
        },
        required=[],
    )


def _pack_meta() -> Schema:
    """What the new version was built from; the contract leaves meta free-form."""
    return {
        **free_object("How this version was built (keys below; more may be added)."),
        "properties": {
            "calculation_run_id": nullable(uuid_()),
            "data_quality_assessment_id": nullable(uuid_()),
            "rerun_hash": nullable(string()),
            "legacy_report_id": nullable(uuid_()),
            "version_number": integer(minimum=1),
            "pack_hash": nullable(string()),
            "artifact_count": integer(minimum=0),
            "shipment_rows": integer(minimum=0),
            "evidence_item_count": integer(minimum=0),
            "supersedes_pack_id": nullable(uuid_()),
            "superseded_pack_ids": array(uuid_()),
            "superseded": boolean(),
        },
    }


def _approval() -> Schema:
    return request_obj(
        {"action_type": ref("ApprovalActionType"), "comment": string(maxLength=4000)}, required=["action_type"]
    )


def _evidence_create() -> Schema:
    return request_obj(
        {
            "evidence_type": ref("EvidenceType"),
            "title": string(minLength=1, maxLength=300, pattern=r"\S", description="Trimmed; 1–300 characters."),
            "file_name": string(minLength=1, maxLength=300, pattern=r"\S", description="Trimmed; 1–300 characters."),
            "file_url": string("uri", maxLength=2000, description="Absolute http or https URL."),
            "workspace_id": uuid_(),
            "report_pack_id": uuid_(),
            "shipment_id": uuid_(),
            "file_sha256": string(pattern="^[0-9a-fA-F]{64}$"),
            "mime_type": string(maxLength=200, description="A media type such as application/pdf."),
            "issue_date": date_(),
            "valid_from": date_(),
            "valid_to": date_(),
            "source_system": LABEL,
            "verification_status": {**ref("VerificationStatus"), "default": VerificationStatus.unverified.value},
            "attachment_scope": {
                **ref("AttachmentScope"),
                "description": "Derived from the references when absent; must agree with them.",
            },
            "extracted_metadata_json": free_object(),
            "notes": string(maxLength=4000),
        },
        required=["evidence_type", "title", "file_name", "file_url"],
    )


def _webhook_test() -> Schema:
    return request_obj(
        {
            "target_url": string("uri", description="http or https; required without endpoint_id."),
            "endpoint_id": uuid_(description="A registered endpoint: its URL and its own secret (extension)."),
            "event_type": string(minLength=1, maxLength=200, pattern=r"\S", description="Default pack.published."),
            "workspace_id": uuid_(),
            "report_pack_id": uuid_(),
        },
        required=[],
    )


def _endpoint_fields() -> dict[str, Schema]:
    return {
        "url": string("uri", maxLength=2000, description="http or https; must resolve to public addresses."),
        "description": string(maxLength=500),
        "event_types": array(ref("EventType"), uniqueItems=True, maxItems=50, description="Empty: every type."),
        "enabled": boolean(),
    }


def _endpoint_create() -> Schema:
    return request_obj(_endpoint_fields(), required=["url"])


def _endpoint_update() -> Schema:
    fields = _endpoint_fields()
    return request_obj(fields, required=[], not_null=frozenset(fields))


def _no_content(op: dict[str, Any], status: int, description: str) -> dict[str, Any]:
    """The operation answering ``status`` with no body (DELETE)."""
    responses = {k: v for k, v in op["responses"].items() if not k.startswith("2")}
    return {**op, "responses": {str(status): {"description": description}, **responses}}


def _webhook_endpoint_paths() -> dict[str, Any]:
    endpoint = [path_id("Webhook endpoint")]
    with_secret = data_envelope(ref("WebhookEndpointWithSecret"))
    return {
        "/v2/webhook-endpoints": {
            "get": operation(
                "listWebhookEndpoints",
                "The organisation's webhook endpoints, newest first",
                (200, page_envelope(ref("WebhookEndpoint")), "One page of endpoints."),
                (422,),
                tag="webhooks",
                params=page_query(),
                extension=True,
            ),
            "post": operation(
                "createWebhookEndpoint",
                "Register a webhook endpoint; the answer holds its secret, shown this once",
                (201, with_secret, "The endpoint and its secret."),
                BODY_ERRORS,
                tag="webhooks",
                request=body(_endpoint_create()),
                ok_headers=LOCATION,
                extension=True,
            ),
        },
        "/v2/webhook-endpoints/{id}": {
            "get": operation(
                "getWebhookEndpoint",
                "One webhook endpoint",
                (200, data_envelope(ref("WebhookEndpoint")), "The endpoint."),
                (404,),
                tag="webhooks",
                params=endpoint,
                extension=True,
            ),
            "patch": operation(
                "updateWebhookEndpoint",
                "Change the fields given; enabling again resumes from the newest event",
                (200, data_envelope(ref("WebhookEndpoint")), "The endpoint after the change."),
                (*BODY_ERRORS, 404),
                tag="webhooks",
                params=endpoint,
                request=body(_endpoint_update()),
                extension=True,
            ),
            "delete": _no_content(
                operation(
                    "deleteWebhookEndpoint",
                    "Delete a webhook endpoint; its recorded attempts stay in the delivery log",
                    (204, obj({}), "Deleted."),
                    (*BODY_ERRORS, 404),
                    tag="webhooks",
                    params=[*endpoint, IDEMPOTENCY_KEY],
                    extension=True,
                ),
                204,
                "Deleted.",
            ),
        },
        "/v2/webhook-endpoints/{id}/rotate-secret": {
            "post": operation(
                "rotateWebhookEndpointSecret",
                "A new secret; the old one keeps signing beside it for 24 hours",
                (200, with_secret, "The endpoint and its new secret."),
                (*BODY_ERRORS, 404),
                tag="webhooks",
                params=[*endpoint, IDEMPOTENCY_KEY],
                extension=True,
            )
        },
        "/v2/webhook-endpoints/{id}/deliveries": {
            "get": operation(
                "listWebhookEndpointDeliveries",
                "Every attempt to this endpoint, newest first",
                (200, page_envelope(ref("WebhookDelivery")), "One page of attempts."),
                (404, 422),
                tag="webhooks",
                params=[*endpoint, *page_query()],
                extension=True,
            )
        },
        "/v2/webhook-endpoints/deliveries/{id}/retry": {
            "post": operation(
                "retryWebhookDelivery",
                "Send the event of a recorded attempt to its endpoint again, now",
                (200, data_envelope(ref("WebhookDelivery")), "The endpoint answered 2xx: the new attempt."),
                (*BODY_ERRORS, 404, 502),
                tag="webhooks",
                params=[path_id("Webhook delivery"), IDEMPOTENCY_KEY],
                extension=True,
            )
        },
    }


# -- paths --------------------------------------------------------------------------------------


def _legacy_headers() -> dict[str, Any]:
    return {
        "Deprecation": {
            "description": "RFC 9745: this endpoint is deprecated.",
            "required": True,
            "schema": string(),
        },
        "Link": {
            "description": 'Successor: <…/api/v2/workspaces>; rel="successor-version".',
            "required": True,
            "schema": string(),
        },
        "Sunset": {"description": "RFC 8594 date, when configured.", "required": False, "schema": string()},
    }


def _deprecated(op: dict[str, Any]) -> dict[str, Any]:
    """v1 errors carry the deprecation headers too (rest_compat/legacy.py), so inline them."""
    shared = _error_responses()
    for status, response in list(op["responses"].items()):
        if "$ref" in response:
            inline = dict(shared[response["$ref"].rsplit("/", 1)[1]])
            inline["headers"] = {**inline.get("headers", {}), **_legacy_headers()}
            op["responses"][status] = inline
    return op


# The artifacts' own content types (evidence_gateway/artifacts/): the answer's Content-Type is one of them.
ARTIFACT_MEDIA_TYPES = (
    "application/pdf",
    "text/csv",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/json",
    "text/markdown",
)
BINARY = "application/octet-stream"


def _file(media: str) -> Schema:
    """A file's bytes (OpenAPI 3.1: ``contentMediaType``; ``format: binary`` for generators that read that)."""
    return {"type": "string", "format": "binary", "contentMediaType": media}


def _download_content() -> dict[str, Any]:
    """Every download is a file to keep byte for byte (pack_hash is over the bytes). The generic binary
    type comes first: generators that type a response by its first media type they know (e.g.
    openapi-python-client) then return bytes, never text decoded from a PDF. The real types follow;
    a JSON artifact is also described as the JSON document it is."""
    content: dict[str, Any] = {
        BINARY: {"schema": {**_file(BINARY), "description": "Any artifact, read as bytes."}},
    }
    for media in ARTIFACT_MEDIA_TYPES:
        json_doc = {"description": "machine_json, ileap_shipment_footprints: a JSON document."}
        content[media] = {"schema": json_doc if media == "application/json" else _file(media)}
    return content


def _log_paths() -> dict[str, Any]:
    """The transparency log and a pack's bundle (docs/verification.md); hashes are base64."""
    b64 = string(description="Base64.")
    checkpoint = obj(
        {"origin": string(), "size": integer(minimum=0), "root_hash": b64, "key_id": string(),
         "issued_at": string("date-time"), "note": string(description="The C2SP signed note.")}
    )  # fmt: skip
    size = {"name": "size", "in": "query", "schema": integer(minimum=0), "description": "A checkpoint's tree size."}
    inclusion = obj(
        {"event_id": uuid_(), "sequence": integer(minimum=1), "leaf_index": integer(minimum=0),
         "tree_size": integer(minimum=1), "leaf_hash": b64, "leaf": nullable(b64), "audit_path": array(b64),
         "checkpoint": checkpoint}
    )  # fmt: skip
    consistency = obj(
        {"from_size": integer(minimum=0), "to_size": integer(minimum=0), "proof": array(b64),
         "from_checkpoint": checkpoint, "to_checkpoint": checkpoint}
    )  # fmt: skip
    bundle = operation(
        "getPackBundle",
        "The pack's verifiable bundle (zip): files, seal, statements, checkpoint, proofs, keys",
        (200, {}, "A zip; `evidence-gateway verify` checks it offline."),
        (404, 409),
        tag="packs",
        params=[path_id("Pack")],
        extension=True,
    )
    bundle["responses"]["200"]["content"] = {"application/zip": {"schema": _file("application/zip")}}
    tag = "events"
    return {
        "/v2/log/checkpoint": {
            "get": operation("getLogCheckpoint", "A signed checkpoint of the organisation's log",
                             (200, data_envelope(checkpoint), "The checkpoint."), (404, 422), tag=tag,
                             params=[size], extension=True)
        },
        "/v2/log/proof/inclusion": {
            "get": operation("getLogInclusionProof", "An event's leaf and its audit path to a checkpoint",
                             (200, data_envelope(inclusion), "The proof."), (404, 422), tag=tag,
                             params=[{"name": "event", "in": "query", "schema": uuid_(), "required": True}, size],
                             extension=True)
        },
        "/v2/log/proof/consistency": {
            "get": operation("getLogConsistencyProof", "That one checkpoint's tree extends another's",
                             (200, data_envelope(consistency), "The proof."), (404, 422), tag=tag,
                             params=[{"name": "from", "in": "query", "schema": integer(minimum=0), "required": True},
                                     {"name": "to", "in": "query", "schema": integer(minimum=0), "required": True}],
                             extension=True)
        },
        "/v2/packs/{id}/bundle": {"get": bundle},
    }  # fmt: skip


def _download() -> dict[str, Any]:
    op = operation(
        "downloadArtifact",
        "Artifact content: with a valid signed link (no key) or with the Bearer key",
        (200, {}, "The file, with its own content type (the artifact's content_type)."),
        (403, 404, 409),
        tag="packs",
        params=[
            path_id("Artifact"),
            {"name": "expires", "in": "query", "schema": integer(minimum=0), "description": "Unix time."},
            {"name": "signature", "in": "query", "schema": string(), "description": "HMAC-SHA256, hex."},
            {"name": "If-None-Match", "in": "header", "schema": string(), "description": "ETag from an earlier GET."},
        ],
        extension=True,
        security=[*BEARER, {}],
    )
    ok = op["responses"]["200"]
    ok["content"] = _download_content()
    ok["headers"] = {
        "ETag": {"required": True, "schema": string(description="Quoted SHA-256 of the content.")},
        "Content-Disposition": {"required": True, "schema": string()},
    }
    op["responses"]["304"] = {
        "description": "Not modified: If-None-Match matched the ETag.",
        "headers": {"ETag": {"required": True, "schema": string()}},
    }
    op["description"] = (
        "With `expires` and `signature` (from signed_download_url) no key is needed; an expired or "
        "tampered link is 403. Without them the Bearer key is required (401)."
    )
    return op


def paths() -> dict[str, Any]:
    ws = path_id("Workspace")
    pack = path_id("Report pack")
    return {
        "/v2/workspaces": {
            "get": operation(
                "listWorkspaces",
                "List the organisation's workspaces, newest first",
                (200, page_envelope(ref("Workspace")), "One page of workspaces."),
                (422,),
                tag="workspaces",
                params=page_query(),
            ),
            "post": operation(
                "createWorkspace",
                "Create a workspace (status draft)",
                (201, data_envelope(ref("Workspace")), "The new workspace."),
                BODY_ERRORS,
                tag="workspaces",
                request=body(_workspace_create()),
                ok_headers={**LOCATION, **ETAG},
            ),
        },
        "/v2/workspaces/{id}": {
            "get": operation(
                "getWorkspace",
                "Workspace detail with the latest run, pack and quality assessment",
                (200, data_envelope(ref("WorkspaceDetail")), "The workspace."),
                (404,),
                tag="workspaces",
                params=[ws],
                ok_headers=ETAG,
            )
        },
        "/v2/workspaces/{id}/imports": {
            "post": operation(
                "registerImport",
                "Register an import batch (optionally with shipment rows)",
                (201, data_envelope(ref("ImportBatch")), "The import batch."),
                (*BODY_ERRORS, 404, 409, 412),
                tag="workspaces",
                params=[ws, IF_MATCH],
                request=body(_import_create()),
                ok_headers=LOCATION,
            )
        },
        "/v2/workspaces/{id}/calculate": {
            "post": operation(
                "calculateWorkspace",
                "Create a calculation run and its data-quality assessment",
                (200, data_envelope(ref("CalculationResult")), "The run and its assessment."),
                (*BODY_ERRORS, 404, 409, 412),
                tag="calculations",
                params=[ws, IF_MATCH, PREFER],
                request=body(_calculate(), required=False),
                accepted=(data_envelope(ref("CalculationRun")), "Prefer: respond-async: the run, queued."),
            )
        },
        "/v2/workspaces/{id}/quality": {
            "get": operation(
                "getWorkspaceQuality",
                "Latest data-quality assessment of the workspace",
                (200, data_envelope(ref("DataQualityAssessment")), "The latest assessment."),
                (404,),
                tag="calculations",
                params=[ws],
            )
        },
        "/v2/workspaces/{id}/packs": {
            "post": operation(
                "generatePack",
                "Generate or refresh the evidence pack from the current workspace state",
                (201, meta_envelope(ref("ReportPack"), _pack_meta()), "The new pack version."),
                (*BODY_ERRORS, 404, 409, 412),
                tag="packs",
                params=[ws, IF_MATCH, PREFER],
                request=body(request_obj({"legacy_report_id": uuid_()}, required=[]), required=False),
                ok_headers={**LOCATION, **ETAG},
                accepted=(data_envelope(ref("ReportPack")), "Prefer: respond-async: the version, queued."),
            )
        },
        "/v2/packs/{id}": {
            "get": operation(
                "getPack",
                "Pack detail with its run, assessment and artifacts",
                (200, data_envelope(ref("ReportPackDetail")), "The pack."),
                (404,),
                tag="packs",
                params=[pack],
                ok_headers=ETAG,
            )
        },
        "/v2/packs/{id}/artifacts": {
            "get": operation(
                "listPackArtifacts",
                "Every artifact of the pack, each with a signed download URL",
                (200, data_envelope(array(ref("PackArtifact"))), "The artifacts in type order."),
                (404,),
                tag="packs",
                params=[pack],
            )
        },
        "/v2/packs/{id}/approvals": {
            "post": operation(
                "recordApproval",
                "Record an approval action on the pack",
                (201, data_envelope(ref("ApprovalActionResult")), "Pack status before and after."),
                (*BODY_ERRORS, 404, 409, 412),
                tag="packs",
                params=[pack, IF_MATCH],
                request=body(_approval()),
                ok_headers=LOCATION,
            )
        },
        "/v2/approvals/{id}": {
            "get": operation(
                "getApprovalAction",
                "One recorded approval action (the Location of a new one)",
                (200, data_envelope(ref("ApprovalAction")), "The approval action."),
                (404,),
                tag="packs",
                params=[path_id("Approval action")],
                extension=True,
            )
        },
        "/v2/imports/{id}": {
            "get": operation(
                "getImportBatch",
                "One import batch (the Location of a registered import)",
                (200, data_envelope(ref("ImportBatch")), "The import batch."),
                (404,),
                tag="workspaces",
                params=[path_id("Import batch")],
                extension=True,
            )
        },
        "/v2/calculation-runs/{id}": {
            "get": operation(
                "getCalculationRun",
                "One calculation run with its assessment (the Location of an accepted calculation)",
                (200, data_envelope(ref("CalculationRunDetail")), "The run."),
                (404,),
                tag="calculations",
                params=[path_id("Calculation run")],
                extension=True,
            )
        },
        "/v2/events": {
            "get": operation(
                "listEvents",
                "The organisation's event log after a cursor, oldest first",
                (200, ref("EventPage"), "Events and the cursor to continue from."),
                (422,),
                tag="events",
                params=[
                    {"name": "after", "in": "query", "schema": string(), "description": "A cursor from this API."},
                    {"name": "limit", "in": "query", "schema": integer(minimum=1, maximum=200, default=50)},
                ],
                extension=True,
            )
        },
        "/v2/artifacts/{id}/download": {"get": _download()},
        **_log_paths(),
        "/v2/evidence-items": {
            "get": operation(
                "listEvidenceItems",
                "List the organisation's evidence items, newest first",
                (200, page_envelope(ref("EvidenceItem")), "One page of evidence items."),
                (404, 422),
                tag="evidence",
                params=[
                    *page_query(),
                    {
                        "name": "workspace_id",
                        "in": "query",
                        "schema": as_input(uuid_()),
                        "description": "Only this workspace's items (unknown or another organisation's: 404).",
                    },
                ],
                extension=True,
            ),
            "post": operation(
                "createEvidenceItem",
                "Register an evidence item (supporting document)",
                (201, data_envelope(ref("EvidenceItem")), "The evidence item."),
                BODY_ERRORS,
                tag="evidence",
                request=body(_evidence_create()),
                ok_headers=LOCATION,
            ),
        },
        "/v2/evidence-items/{id}": {
            "get": operation(
                "getEvidenceItem",
                "Evidence item detail",
                (200, data_envelope(ref("EvidenceItem")), "The evidence item."),
                (404,),
                tag="evidence",
                params=[path_id("Evidence item")],
                extension=True,
            )
        },
        "/v2/webhooks/test": {
            "post": operation(
                "testWebhook",
                "Send a signed test payload to a client endpoint and record the outcome",
                (200, data_envelope(ref("WebhookTestResult")), "The target accepted the request."),
                (*BODY_ERRORS, 502),
                tag="webhooks",
                request=body(_webhook_test()),
            )
        },
        "/v2/webhooks/deliveries": {
            "get": operation(
                "listWebhookDeliveries",
                "Recorded webhook test attempts, newest first",
                (200, page_envelope(ref("WebhookDelivery")), "One page of deliveries."),
                (422,),
                tag="webhooks",
                params=page_query(),
                extension=True,
            )
        },
        **_webhook_endpoint_paths(),
        "/v2/methodology-profiles": {
            "get": operation(
                "listMethodologyProfiles",
                "Seeded methodology profiles",
                (200, data_envelope(array(ref("MethodologyProfile"))), "Every profile."),
                (),
                tag="calculations",
                extension=True,
            )
        },
        "/v1/reports": {
            "get": _deprecated(
                operation(
                    "listLegacyReports",
                    "List legacy reports (deprecated)",
                    (200, page_envelope(ref("LegacyReport")), "One page of legacy reports."),
                    (422,),
                    tag="legacy",
                    params=page_query(),
                    deprecated=True,
                    ok_headers=_legacy_headers(),
                )
            )
        },
        "/v1/reports/{id}": {
            "get": _deprecated(
                operation(
                    "getLegacyReport",
                    "Legacy report detail (deprecated)",
                    (200, data_envelope(ref("LegacyReport")), "The legacy report."),
                    (404,),
                    tag="legacy",
                    params=[path_id("Legacy report")],
                    deprecated=True,
                    ok_headers=_legacy_headers(),
                )
            )
        },
    }


# Where an id in a success response is used next (OpenAPI links; stateful test tools follow them).
LINKS: dict[tuple[str, str], tuple[str, ...]] = {
    ("createWorkspace", "$response.body#/data/id"): (
        "getWorkspace",
        "registerImport",
        "calculateWorkspace",
        "generatePack",
    ),
    ("listWorkspaces", "$response.body#/data/0/id"): ("getWorkspace",),
    ("calculateWorkspace", "$response.body#/data/workspace_id"): ("getWorkspaceQuality", "generatePack"),
    ("generatePack", "$response.body#/data/id"): ("getPack", "listPackArtifacts", "recordApproval"),
    ("registerImport", "$response.body#/data/id"): ("getImportBatch",),
    ("listPackArtifacts", "$response.body#/data/0/id"): ("downloadArtifact",),
    ("createEvidenceItem", "$response.body#/data/id"): ("getEvidenceItem",),
    ("listEvidenceItems", "$response.body#/data/0/id"): ("getEvidenceItem",),
    ("listLegacyReports", "$response.body#/data/0/id"): ("getLegacyReport",),
}


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


def _error_responses() -> dict[str, Any]:
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


@lru_cache(maxsize=1)
def document() -> dict[str, Any]:
    """The whole document (built once; it depends on code only)."""
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
            {"name": t} for t in ("workspaces", "calculations", "packs", "evidence", "webhooks", "events", "legacy")
        ],
        "paths": _add_links(paths()),
        "components": {
            "securitySchemes": {
                "bearerAuth": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Organisation API key: `evk_` + 48 lowercase hex characters.",
                }
            },
            "schemas": component_schemas({"EventType": enum(EventType)}),
            "responses": _error_responses(),
        },
    }


@lru_cache(maxsize=1)
def _rendered() -> bytes:
    return dumps(document())


async def openapi_json(_request: Request) -> Response:
    """GET /openapi.json: no key needed."""
    return Response(_rendered(), media_type="application/json")


routes = [Route("/openapi.json", openapi_json, methods=["GET"])]
