"""Legacy v1 reports (DESIGN.md §10): imported by the CLI, read through the deprecated /v1 API."""

from __future__ import annotations

import enum
import uuid
from datetime import date, datetime

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import created_field, id_field, org_fk


class LegacyReportStatus(enum.StrEnum):
    draft = "draft"
    final = "final"


class LegacyReport(SQLModel, table=True):
    __tablename__ = "legacy_report"
    __table_args__ = (Index("ix_legacy_report_org_created", "org_id", "created_at", "id"),)

    # Ids come from the integrators' files where given: they already hold them.
    id: uuid.UUID = id_field()
    org_id: uuid.UUID = org_fk()
    title: str = Field(max_length=300, nullable=False)
    reporting_period_start: date | None = None
    reporting_period_end: date | None = None
    status: str = Field(default=LegacyReportStatus.final.value, max_length=16, nullable=False)
    total_co2e_kg: float = Field(nullable=False)
    shipment_count: int = Field(default=0, nullable=False)
    created_at: datetime = created_field()
    updated_at: datetime = created_field()
