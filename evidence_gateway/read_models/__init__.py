"""One read model per resource: the single declaration of what each resource looks like on the wire.

REST bodies and the event log's data are rendered from these (``render``), the OpenAPI components
are generated from them (``openapi.component_schemas``), and a test checks each GraphQL type's
fields against its read model. Adding a column to a resource means adding its field here once.
"""

from __future__ import annotations

from evidence_gateway.read_models.base import PaginationMeta, ReadModel, render_optional
from evidence_gateway.read_models.calculations import (
    CalculationResult,
    CalculationRun,
    CalculationRunDetail,
    DataQualityAssessment,
    MethodologyProfile,
)
from evidence_gateway.read_models.events import Event, EventPage
from evidence_gateway.read_models.evidence import EvidenceItem
from evidence_gateway.read_models.legacy import LegacyReport, LegacyReportRecord
from evidence_gateway.read_models.packs import (
    ApprovalAction,
    ApprovalActionResult,
    PackArtifact,
    PackMeta,
    ReportPack,
    ReportPackDetail,
    listed_artifacts,
)
from evidence_gateway.read_models.sharing import DataRecipient, DataRecipientWithSecret, Publication, RecipientHost
from evidence_gateway.read_models.tlog import LogCheckpoint, LogConsistencyProof, LogInclusionProof
from evidence_gateway.read_models.webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEndpointWithSecret,
    WebhookMessageStatus,
    WebhookTestResult,
)
from evidence_gateway.read_models.workspaces import ImportBatch, Workspace, WorkspaceDetail

__all__ = [
    "LogCheckpoint",
    "LogConsistencyProof",
    "LogInclusionProof",
    "ApprovalAction",
    "ApprovalActionResult",
    "CalculationResult",
    "CalculationRun",
    "CalculationRunDetail",
    "DataQualityAssessment",
    "DataRecipient",
    "DataRecipientWithSecret",
    "Event",
    "EventPage",
    "EvidenceItem",
    "ImportBatch",
    "LegacyReport",
    "LegacyReportRecord",
    "MethodologyProfile",
    "PackArtifact",
    "PackMeta",
    "PaginationMeta",
    "Publication",
    "RecipientHost",
    "ReadModel",
    "ReportPack",
    "ReportPackDetail",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEndpointWithSecret",
    "WebhookMessageStatus",
    "WebhookTestResult",
    "Workspace",
    "WorkspaceDetail",
    "listed_artifacts",
    "render_optional",
]
