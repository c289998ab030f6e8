"""SQLModel tables, one module per resource family."""

from evidence_gateway.models.organization import ApiKey, Organization
from evidence_gateway.models.workspace import (
    DistanceSource,
    FuelType,
    ImportBatch,
    Shipment,
    TransportMode,
    Workspace,
    WorkspaceStatus,
)

__all__ = [
    "ApiKey",
    "DistanceSource",
    "FuelType",
    "ImportBatch",
    "Organization",
    "Shipment",
    "TransportMode",
    "Workspace",
    "WorkspaceStatus",
]
