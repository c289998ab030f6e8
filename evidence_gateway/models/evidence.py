"""Evidence items: supporting documents attached to an organisation, workspace or shipment."""

from __future__ import annotations

import enum
import uuid
from datetime import date, datetime
from typing import Any

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, json_field, org_fk


class EvidenceType(enum.StrEnum):
    fuel_receipt = "fuel_receipt"
    charging_invoice = "charging_invoice"
    telematics = "telematics"
    other = "other"


class VerificationStatus(enum.StrEnum):
    unverified = "unverified"
    verified = "verified"
    expired = "expired"
    rejected = "rejected"


class AttachmentScope(enum.StrEnum):
    organization = "organization"
    workspace = "workspace"
    shipment = "shipment"


class EvidenceItem(SQLModel, table=True):
    __tablename__ = "evidence_item"
    __table_args__ = (
        Index("ix_evidence_item_org_uploaded", "org_id", "uploaded_at", "id"),
        # A workspace's items by cursor (resolvers/connections.py); 0007_keyset_indexes.
        Index("ix_evidence_item_workspace_uploaded", "workspace_id", "uploaded_at", "id"),
        # By title, and by verification status (list_queries.EVIDENCE_ITEMS); 0017_list_indexes.
        Index("ix_evidence_item_org_title", "org_id", "title", "id"),
        Index("ix_evidence_item_org_verification_uploaded", "org_id", "verification_status", "uploaded_at", "id"),
    )

    id: uuid.UUID = id_field()
    workspace_id: uuid.UUID | None = Field(default=None, foreign_key="workspace.id")
    report_pack_id: uuid.UUID | None = Field(default=None, foreign_key="report_pack.id")
    shipment_id: uuid.UUID | None = Field(default=None, foreign_key="shipment.id")
    org_id: uuid.UUID = org_fk()
    evidence_type: str = Field(max_length=32, nullable=False)
    title: str = Field(max_length=300, nullable=False)
    file_name: str = Field(max_length=300, nullable=False)
    file_url: str = Field(max_length=2000, nullable=False)
    file_sha256: str | None = Field(default=None, max_length=64)
    mime_type: str | None = Field(default=None, max_length=200)
    issue_date: date | None = None
    valid_from: date | None = None
    valid_to: date | None = None
    source_system: str | None = Field(default=None, max_length=200)
    verification_status: str = Field(default=VerificationStatus.unverified.value, max_length=16, nullable=False)
    attachment_scope: str = Field(max_length=16, nullable=False)
    extracted_metadata_json: dict[str, Any] = json_field()
    notes: str | None = Field(default=None, max_length=4000)
    uploaded_at: datetime = created_field()
