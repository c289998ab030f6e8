"""SQLModel tables, one module per resource family."""

from evidence_gateway.models.calculation import (
    CalculationRun,
    DataQualityAssessment,
    DataTier,
    EmissionFactor,
    FactorVersion,
    MethodologyProfile,
    RunStatus,
    ShipmentEmission,
)
from evidence_gateway.models.events import Event, EventCounter, IdempotencyRecord, ListCount
from evidence_gateway.models.evidence import AttachmentScope, EvidenceItem, EvidenceType, VerificationStatus
from evidence_gateway.models.hubs import HubRow, HubType, TemperatureControl
from evidence_gateway.models.instance import InstanceSecret
from evidence_gateway.models.legacy import LegacyReport, LegacyReportStatus
from evidence_gateway.models.organization import ApiKey, Organization
from evidence_gateway.models.packs import (
    ApprovalAction,
    ApprovalActionType,
    ArtifactContent,
    ArtifactContentChunk,
    ArtifactStatus,
    ArtifactType,
    PackArtifact,
    PackStatus,
    ReportPack,
)
from evidence_gateway.models.persisted_queries import PersistedQuery
from evidence_gateway.models.sharing import (
    DataRecipient,
    ExchangeMessage,
    ExchangeSigningKey,
    PactVersion,
    Publication,
)
from evidence_gateway.models.tlog import EvidenceKey, SignedStatement, TlogCheckpoint, TlogSubtree
from evidence_gateway.models.webhooks import MessageStatus, WebhookDelivery, WebhookEndpoint, WebhookMessage
from evidence_gateway.models.workspace import (
    DistanceSource,
    DistanceType,
    FuelType,
    ImportBatch,
    IntensityBasis,
    IntensityCategory,
    IntensityDistanceBasis,
    Shipment,
    TransportMode,
    Workspace,
    WorkspaceStatus,
)

__all__ = [
    "EvidenceKey",
    "SignedStatement",
    "TlogCheckpoint",
    "TlogSubtree",
    "PersistedQuery",
    "ApiKey",
    "ApprovalAction",
    "ApprovalActionType",
    "ArtifactContent",
    "ArtifactContentChunk",
    "ArtifactStatus",
    "ArtifactType",
    "AttachmentScope",
    "CalculationRun",
    "DataQualityAssessment",
    "DataRecipient",
    "ExchangeMessage",
    "DataTier",
    "DistanceSource",
    "DistanceType",
    "EmissionFactor",
    "Event",
    "EventCounter",
    "EvidenceItem",
    "EvidenceType",
    "ExchangeSigningKey",
    "FactorVersion",
    "FuelType",
    "HubRow",
    "HubType",
    "IntensityBasis",
    "IntensityCategory",
    "IntensityDistanceBasis",
    "IdempotencyRecord",
    "ImportBatch",
    "InstanceSecret",
    "LegacyReport",
    "ListCount",
    "LegacyReportStatus",
    "MessageStatus",
    "MethodologyProfile",
    "Organization",
    "PackArtifact",
    "PackStatus",
    "PactVersion",
    "Publication",
    "ReportPack",
    "RunStatus",
    "Shipment",
    "ShipmentEmission",
    "TemperatureControl",
    "TransportMode",
    "VerificationStatus",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookMessage",
    "Workspace",
    "WorkspaceStatus",
]
