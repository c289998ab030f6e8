"""Evidence items: the supporting documents of workspaces, packs and shipments."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Any

from pydantic import Field

from evidence_gateway.models import AttachmentScope, EvidenceType, VerificationStatus
from evidence_gateway.read_models.base import ReadModel


class EvidenceItem(ReadModel):
    """A supporting document (receipt, invoice, telematics export, …)."""

    id: uuid.UUID
    workspace_id: uuid.UUID | None
    report_pack_id: uuid.UUID | None
    shipment_id: uuid.UUID | None
    org_id: uuid.UUID
    evidence_type: EvidenceType
    title: str
    file_name: str
    file_url: str = Field(description="Where the document lives (http or https URL).")
    file_sha256: str | None
    mime_type: str | None
    issue_date: date | None
    valid_from: date | None
    valid_to: date | None
    source_system: str | None
    verification_status: VerificationStatus
    attachment_scope: AttachmentScope
    extracted_metadata_json: dict[str, Any]
    notes: str | None
    uploaded_at: datetime
