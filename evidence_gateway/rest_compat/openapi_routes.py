"""The REST operations as the OpenAPI document lists them: one row per operation.

A row names what the models cannot say: the path, the operation id and summary, the read model
of the answer and its envelope, the input model of the body, the parameters and the headers.
Schemas come from the models (openapi_schemas.py, openapi_inputs.py); errors follow from the
row (openapi.py ``errors_of``); only what a row adds beyond those rules is written here.
tests/test_openapi_contract.py checks the rows against the routes the app serves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from evidence_gateway import read_models as rm
from evidence_gateway.resolvers.approvals import ApprovalInput
from evidence_gateway.resolvers.calculations import CalculateInput
from evidence_gateway.resolvers.events import DEFAULT_LIMIT, MAX_LIMIT
from evidence_gateway.resolvers.evidence import EvidenceCreate
from evidence_gateway.resolvers.imports import ImportCreate
from evidence_gateway.resolvers.list_queries import (
    CALCULATION_RUNS,
    EVENTS,
    EVIDENCE_ITEMS,
    LEGACY_REPORTS,
    PACKS,
    WEBHOOK_DELIVERIES,
    WEBHOOK_ENDPOINTS,
    WORKSPACES,
)
from evidence_gateway.resolvers.packs import GeneratePackInput
from evidence_gateway.resolvers.pagination import PageParams
from evidence_gateway.resolvers.sharing import PublicationCreate, RecipientCreate, RecipientHost
from evidence_gateway.resolvers.webhook_endpoints import EndpointCreate, EndpointUpdate
from evidence_gateway.resolvers.webhooks import WebhookTestInput
from evidence_gateway.resolvers.workspaces import WorkspaceCreate
from evidence_gateway.rest_compat.openapi_inputs import list_parameters, query_parameters
from evidence_gateway.rest_compat.openapi_schemas import (
    EXT,
    as_input,
    integer,
    string,
    uuid_,
)

Param = dict[str, Any]
# data: {"data": model} (and "meta" when the answer has one); page: {"data": [model], "pagination"};
# list: {"data": [model]}; bare: the model itself; none: no body (204).
Shape = Literal["data", "page", "list", "bare", "none"]


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    model: type[BaseModel] | None
    description: str
    shape: Shape = "data"
    meta: type[BaseModel] | None = None


@dataclass(frozen=True, slots=True)
class Op:
    method: str
    path: str
    op_id: str
    summary: str
    tag: str
    ok: Answer
    params: tuple[Param, ...] = ()
    body: type[BaseModel] | None = None
    body_required: bool = True
    errors: tuple[int, ...] = ()  # beyond those the row implies (openapi.errors_of)
    headers: tuple[str, ...] = ()  # of the success answer: Location, ETag
    accepted: Answer | None = None  # Prefer: respond-async
    extension: bool = False
    deprecated: bool = False


def path_id(what: str) -> Param:
    return {"name": "id", "in": "path", "required": True, "schema": as_input(uuid_()), "description": f"{what} id."}


PAGE = query_parameters(PageParams)
LOG_SIZE: Param = {
    "name": "size",
    "in": "query",
    "schema": integer(minimum=0),
    "description": "A checkpoint's tree size.",
}
LOG_EVENT: Param = {
    "name": "event",
    "in": "query",
    "required": True,
    "schema": uuid_(),
    "description": "The event's id.",
}
LOG_FROM: Param = {"name": "from", "in": "query", "required": True, "schema": integer(minimum=0)}
LOG_TO: Param = {"name": "to", "in": "query", "required": True, "schema": integer(minimum=0)}
# Every write: docs/write-path.md.
IDEMPOTENCY_KEY: Param = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "schema": string(minLength=1, maxLength=255),
    "description": "1–255 printable characters; the same request again within 24 h gets the stored answer.",
    **EXT,
}
IF_MATCH: Param = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "schema": string(),
    "description": "ETag of the resource this write depends on; 412 when it has changed.",
    **EXT,
}
IF_NONE_MATCH: Param = {
    "name": "If-None-Match",
    "in": "header",
    "required": False,
    "schema": string(),
    "description": "ETag from an earlier GET; 304 without a body while it is still the current one.",
    **EXT,
}
PREFER: Param = {
    "name": "Prefer",
    "in": "header",
    "required": False,
    "schema": string(),
    "description": "respond-async (RFC 7240): answer 202 with the queued resource and its Location.",
    **EXT,
}
WORKSPACE, PACK, ENDPOINT = path_id("Workspace"), path_id("Report pack"), path_id("Webhook endpoint")
EVENTS_QUERY: tuple[Param, ...] = (
    {"name": "after", "in": "query", "schema": string(), "description": "A cursor from this API."},
    {"name": "limit", "in": "query", "schema": integer(minimum=1, maximum=MAX_LIMIT, default=DEFAULT_LIMIT)},
)
WORKSPACE_FILTER: Param = {
    "name": "workspace_id",
    "in": "query",
    "schema": as_input(uuid_()),
    "description": "Only this workspace's items (unknown or another organisation's: 404).",
}
RECIPIENT, PUBLICATION = path_id("Data recipient"), path_id("Publication")
RECIPIENT_FILTER: Param = {
    "name": "recipient_id",
    "in": "query",
    "schema": as_input(uuid_()),
    "description": "Only this recipient's publications (a malformed id: 404).",
}
LOCATION, ETAG, LINK = "Location", "ETag", "Link"


OPERATIONS: tuple[Op, ...] = (
    # -- workspaces --------------------------------------------------------------------------
    Op("get", "/v2/workspaces", "listWorkspaces", "List the organisation's workspaces, newest first", "workspaces",
       Answer(200, rm.Workspace, "One page of workspaces.", "page"), (*PAGE, *list_parameters(WORKSPACES))),
    Op("post", "/v2/workspaces", "createWorkspace", "Create a workspace (status draft)", "workspaces",
       Answer(201, rm.Workspace, "The new workspace."), body=WorkspaceCreate, headers=(LOCATION, ETAG)),
    Op("get", "/v2/workspaces/{id}", "getWorkspace",
       "Workspace detail with the latest run, pack and quality assessment", "workspaces",
       Answer(200, rm.WorkspaceDetail, "The workspace."), (WORKSPACE, IF_NONE_MATCH), headers=(ETAG,)),
    Op("post", "/v2/workspaces/{id}/imports", "registerImport",
       "Register an import batch (optionally with shipment rows)", "workspaces",
       Answer(201, rm.ImportBatch, "The import batch."), (WORKSPACE, IF_MATCH), ImportCreate,
       headers=(LOCATION,)),
    Op("get", "/v2/imports/{id}", "getImportBatch", "One import batch (the Location of a registered import)",
       "workspaces", Answer(200, rm.ImportBatch, "The import batch."), (path_id("Import batch"),), extension=True),
    # -- calculations ------------------------------------------------------------------------
    Op("post", "/v2/workspaces/{id}/calculate", "calculateWorkspace",
       "Create a calculation run and its data-quality assessment", "calculations",
       Answer(200, rm.CalculationResult, "The run and its assessment."), (WORKSPACE, IF_MATCH, PREFER),
       CalculateInput, body_required=False,
       accepted=Answer(202, rm.CalculationRun, "Prefer: respond-async: the run, queued.")),
    Op("get", "/v2/workspaces/{id}/quality", "getWorkspaceQuality", "Latest data-quality assessment of the workspace",
       "calculations", Answer(200, rm.DataQualityAssessment, "The latest assessment."), (WORKSPACE,)),
    Op("get", "/v2/calculation-runs", "listCalculationRuns",
       "List the organisation's calculation runs, newest first (filter and sort)", "calculations",
       Answer(200, rm.CalculationRun, "One page of runs.", "page"), (*PAGE, *list_parameters(CALCULATION_RUNS)),
       extension=True),
    Op("get", "/v2/calculation-runs/{id}", "getCalculationRun",
       "One calculation run with its assessment (the Location of an accepted calculation)", "calculations",
       Answer(200, rm.CalculationRunDetail, "The run."), (path_id("Calculation run"),), extension=True),
    Op("get", "/v2/methodology-profiles", "listMethodologyProfiles", "Seeded methodology profiles", "calculations",
       Answer(200, rm.MethodologyProfile, "Every profile.", "list"), extension=True),
    # -- packs -------------------------------------------------------------------------------
    Op("post", "/v2/workspaces/{id}/packs", "generatePack",
       "Generate or refresh the evidence pack from the current workspace state", "packs",
       Answer(201, rm.ReportPack, "The new pack version.", meta=rm.PackMeta), (WORKSPACE, IF_MATCH, PREFER),
       GeneratePackInput, body_required=False, headers=(LOCATION, ETAG),
       accepted=Answer(202, rm.ReportPack, "Prefer: respond-async: the version, queued.")),
    Op("get", "/v2/packs", "listPacks",
       "List the organisation's packs, newest first (filter and sort; status in_review: awaiting approval)",
       "packs", Answer(200, rm.ReportPack, "One page of packs.", "page"), (*PAGE, *list_parameters(PACKS)),
       extension=True),
    Op("get", "/v2/packs/{id}", "getPack", "Pack detail with its run, assessment and artifacts", "packs",
       Answer(200, rm.ReportPackDetail, "The pack."), (PACK, IF_NONE_MATCH), headers=(ETAG,)),
    Op("get", "/v2/packs/{id}/artifacts", "listPackArtifacts",
       "Every artifact of the pack, each with a signed download URL", "packs",
       Answer(200, rm.PackArtifact, "The artifacts in type order.", "list"), (PACK,)),
    Op("post", "/v2/packs/{id}/approvals", "recordApproval", "Record an approval action on the pack", "packs",
       Answer(201, rm.ApprovalActionResult, "Pack status before and after."), (PACK, IF_MATCH), ApprovalInput,
       headers=(LOCATION,)),
    Op("get", "/v2/approvals/{id}", "getApprovalAction", "One recorded approval action (the Location of a new one)",
       "packs", Answer(200, rm.ApprovalAction, "The approval action."), (path_id("Approval action"),),
       extension=True),
    # -- the transparency log (docs/verification.md) -----------------------------------------
    Op("get", "/v2/log/checkpoint", "getLogCheckpoint", "A signed checkpoint of the organisation's log", "events",
       Answer(200, rm.LogCheckpoint, "The checkpoint."), (LOG_SIZE,), errors=(404, 422), extension=True),
    Op("get", "/v2/log/proof/inclusion", "getLogInclusionProof", "An event's leaf and its audit path to a checkpoint",
       "events", Answer(200, rm.LogInclusionProof, "The proof."), (LOG_EVENT, LOG_SIZE), errors=(404, 422),
       extension=True),
    Op("get", "/v2/log/proof/consistency", "getLogConsistencyProof", "That one checkpoint's tree extends another's",
       "events", Answer(200, rm.LogConsistencyProof, "The proof."), (LOG_FROM, LOG_TO), errors=(404, 422),
       extension=True),
    # -- events and evidence -----------------------------------------------------------------
    Op("get", "/v2/events", "listEvents", "The organisation's event log after a cursor, oldest first (sort)", "events",
       Answer(200, rm.EventPage, "Events and the cursor to continue from.", "bare"),
       (*EVENTS_QUERY, *list_parameters(EVENTS)), errors=(422,), headers=(LINK,),
       extension=True),
    Op("get", "/v2/evidence-items", "listEvidenceItems", "List the organisation's evidence items, newest first",
       "evidence", Answer(200, rm.EvidenceItem, "One page of evidence items.", "page"),
       (*PAGE, WORKSPACE_FILTER, *list_parameters(EVIDENCE_ITEMS)),
       errors=(404,), extension=True),
    Op("post", "/v2/evidence-items", "createEvidenceItem", "Register an evidence item (supporting document)",
       "evidence", Answer(201, rm.EvidenceItem, "The evidence item."), body=EvidenceCreate, headers=(LOCATION,)),
    Op("get", "/v2/evidence-items/{id}", "getEvidenceItem", "Evidence item detail", "evidence",
       Answer(200, rm.EvidenceItem, "The evidence item."), (path_id("Evidence item"),), extension=True),
    # -- webhooks ----------------------------------------------------------------------------
    Op("post", "/v2/webhooks/test", "testWebhook",
       "Send a signed test payload to a client endpoint and record the outcome", "webhooks",
       Answer(200, rm.WebhookTestResult, "The target accepted the request."), body=WebhookTestInput, errors=(502,)),
    Op("get", "/v2/webhooks/deliveries", "listWebhookDeliveries", "Recorded webhook test attempts, newest first",
       "webhooks", Answer(200, rm.WebhookDelivery, "One page of deliveries.", "page"),
       (*PAGE, *list_parameters(WEBHOOK_DELIVERIES)), extension=True),
    Op("get", "/v2/webhook-endpoints", "listWebhookEndpoints", "The organisation's webhook endpoints, newest first",
       "webhooks", Answer(200, rm.WebhookEndpoint, "One page of endpoints.", "page"),
       (*PAGE, *list_parameters(WEBHOOK_ENDPOINTS)), extension=True),
    Op("post", "/v2/webhook-endpoints", "createWebhookEndpoint",
       "Register a webhook endpoint; the answer holds its secret, shown this once", "webhooks",
       Answer(201, rm.WebhookEndpointWithSecret, "The endpoint and its secret."), body=EndpointCreate,
       headers=(LOCATION,), extension=True),
    Op("get", "/v2/webhook-endpoints/{id}", "getWebhookEndpoint", "One webhook endpoint", "webhooks",
       Answer(200, rm.WebhookEndpoint, "The endpoint."), (ENDPOINT,), extension=True),
    Op("patch", "/v2/webhook-endpoints/{id}", "updateWebhookEndpoint",
       "Change the fields given; enabling again resumes from the newest event", "webhooks",
       Answer(200, rm.WebhookEndpoint, "The endpoint after the change."), (ENDPOINT,), EndpointUpdate,
       extension=True),
    Op("delete", "/v2/webhook-endpoints/{id}", "deleteWebhookEndpoint",
       "Delete a webhook endpoint; its recorded attempts stay in the delivery log", "webhooks",
       Answer(204, None, "Deleted.", "none"), (ENDPOINT,), extension=True),
    Op("post", "/v2/webhook-endpoints/{id}/rotate-secret", "rotateWebhookEndpointSecret",
       "A new secret; the old one keeps signing beside it for 24 hours", "webhooks",
       Answer(200, rm.WebhookEndpointWithSecret, "The endpoint and its new secret."), (ENDPOINT,), extension=True),
    Op("get", "/v2/webhook-endpoints/{id}/deliveries", "listWebhookEndpointDeliveries",
       "Every attempt to this endpoint, newest first", "webhooks",
       Answer(200, rm.WebhookDelivery, "One page of attempts.", "page"),
       (ENDPOINT, *PAGE, *list_parameters(WEBHOOK_DELIVERIES)), extension=True),
    Op("post", "/v2/webhook-endpoints/deliveries/{id}/retry", "retryWebhookDelivery",
       "Send the event of a recorded attempt to its endpoint again, now", "webhooks",
       Answer(200, rm.WebhookDelivery, "The endpoint answered 2xx: the new attempt."), (path_id("Webhook delivery"),),
       errors=(502,), extension=True),
    # -- sharing over PACT / iLEAP (docs/ileap.md): an admin key -----------------------------
    Op("get", "/sharing/recipients", "listDataRecipients",
       "The organisation's data recipients, revoked ones too, oldest first", "sharing",
       Answer(200, rm.DataRecipient, "Every recipient.", "list"), extension=True),
    Op("post", "/sharing/recipients", "createDataRecipient",
       "Make a data recipient with OAuth2 client credentials; the secret is shown this once", "sharing",
       Answer(201, rm.DataRecipientWithSecret, "The recipient and its client secret."), body=RecipientCreate,
       headers=(LOCATION,), extension=True),
    Op("post", "/sharing/recipients/{id}/revoke", "revokeDataRecipient",
       "Revoke a recipient's credentials: no new token, and its tokens are refused", "sharing",
       Answer(200, rm.DataRecipient, "The recipient, revoked."), (RECIPIENT,), extension=True),
    Op("put", "/sharing/recipients/{id}/host", "setDataRecipientHost",
       "Register the recipient's own PACT host, where answers to its requests go", "sharing",
       Answer(200, rm.DataRecipient, "The recipient with its host (never the secret)."), (RECIPIENT,),
       RecipientHost, extension=True),
    Op("delete", "/sharing/recipients/{id}/host", "clearDataRecipientHost",
       "Forget the recipient's host and its credentials: its requests are no longer answered", "sharing",
       Answer(200, rm.DataRecipient, "The recipient without a host."), (RECIPIENT,), extension=True),
    Op("get", "/sharing/publications", "listPublications",
       "The organisation's publications, withdrawn ones too, oldest first", "sharing",
       Answer(200, rm.Publication, "Every publication.", "list"), (RECIPIENT_FILTER,), errors=(404,),
       extension=True),
    Op("post", "/sharing/publications", "publishPack", "Share a pack with a data recipient", "sharing",
       Answer(201, rm.Publication, "The publication."), body=PublicationCreate, headers=(LOCATION,),
       extension=True),
    Op("post", "/sharing/publications/{id}/withdraw", "withdrawPublication",
       "Withdraw a publication: the pack is gone for the recipient", "sharing",
       Answer(200, rm.Publication, "The publication, withdrawn."), (PUBLICATION,), extension=True),
    # -- legacy ------------------------------------------------------------------------------
    Op("get", "/v1/reports", "listLegacyReports", "List legacy reports (deprecated)", "legacy",
       Answer(200, rm.LegacyReport, "One page of legacy reports.", "page"),
       (*PAGE, *list_parameters(LEGACY_REPORTS)), deprecated=True),
    Op("get", "/v1/reports/{id}", "getLegacyReport", "Legacy report detail (deprecated)", "legacy",
       Answer(200, rm.LegacyReport, "The legacy report."), (path_id("Legacy report"),), deprecated=True),
)  # fmt: skip

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
