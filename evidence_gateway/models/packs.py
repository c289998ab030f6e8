"""Versioned evidence packs, their nine artifacts (content in the database), approvals."""

from __future__ import annotations

import enum
import uuid
from datetime import datetime

from sqlalchemy import BigInteger, Column, Index, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel

from evidence_gateway.models.base import counter_field, created_field, id_field, org_fk


class PackStatus(enum.StrEnum):
    draft = "draft"
    generated = "generated"
    in_review = "in_review"
    approved = "approved"
    published = "published"
    archived = "archived"
    failed = "failed"


class ArtifactType(enum.StrEnum):
    """Declaration order is the order of ``pack_hash``."""

    summary_pdf = "summary_pdf"
    shipment_csv = "shipment_csv"
    shipment_xlsx = "shipment_xlsx"
    machine_json = "machine_json"
    methodology_statement = "methodology_statement"
    evidence_register = "evidence_register"
    quality_report = "quality_report"
    audit_trail = "audit_trail"
    ileap_shipment_footprints = "ileap_shipment_footprints"


class ArtifactStatus(enum.StrEnum):
    pending = "pending"
    generated = "generated"
    failed = "failed"


class ApprovalActionType(enum.StrEnum):
    requested = "requested"
    approved = "approved"
    rejected = "rejected"
    published = "published"


class ReportPack(SQLModel, table=True):
    __tablename__ = "report_pack"
    # A unique constraint, not read-then-write, keeps version numbers unique under concurrency.
    __table_args__ = (
        UniqueConstraint("workspace_id", "version_number", name="uq_report_pack_workspace_version"),
        # The organisation's packs by cursor, and by status (list_queries.PACKS); 0017_list_indexes.
        Index("ix_report_pack_org_created_id", "org_id", "created_at", "id"),
        Index("ix_report_pack_org_status_created", "org_id", "status", "created_at", "id"),
        # A workspace's packs by cursor (resolvers/connections.py); 0007_keyset_indexes.
        Index("ix_report_pack_workspace_created_id", "workspace_id", "created_at", "id"),
        Index("ix_report_pack_status_lease", "status", "lease_expires_at"),
    )

    id: uuid.UUID = id_field()
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    org_id: uuid.UUID = org_fk()
    legacy_report_id: uuid.UUID | None = None
    version_number: int = Field(nullable=False)
    title: str = Field(max_length=300, nullable=False)
    audience_label: str | None = Field(default=None, max_length=200)
    status: str = Field(default=PackStatus.generated.value, max_length=16, nullable=False)
    methodology_profile_id: uuid.UUID | None = None
    calculation_run_id: uuid.UUID | None = Field(default=None, foreign_key="calculation_run.id")
    data_quality_assessment_id: uuid.UUID | None = Field(default=None, foreign_key="data_quality_assessment.id")
    export_template_id: uuid.UUID | None = None
    pack_hash: str | None = Field(default=None, max_length=64)
    rerun_hash: str | None = Field(default=None, max_length=64)
    superseded_pack_id: uuid.UUID | None = None
    # The acting key, for the audit trail.
    api_key_id: uuid.UUID | None = Field(default=None, foreign_key="api_key.id")
    created_at: datetime = created_field()
    approved_at: datetime | None = None
    published_at: datetime | None = None
    # Raised by every change of the pack or of its artifacts: the ETag.
    row_version: int = counter_field(1)
    # The organisation's last event sequence when the version was allocated: the audit trail
    # shows the log up to there.
    audit_sequence: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    # While rendering: which node renders it and until when (renewed); NULL owner = queued.
    lease_owner: str | None = Field(default=None, max_length=100)
    lease_expires_at: datetime | None = None


class PackArtifact(SQLModel, table=True):
    __tablename__ = "pack_artifact"
    __table_args__ = (UniqueConstraint("report_pack_id", "artifact_type", name="uq_pack_artifact_type"),)

    id: uuid.UUID = id_field()
    report_pack_id: uuid.UUID = Field(foreign_key="report_pack.id", nullable=False)
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    org_id: uuid.UUID = org_fk()
    artifact_type: str = Field(max_length=32, nullable=False)
    status: str = Field(default=ArtifactStatus.pending.value, max_length=16, nullable=False)
    file_name: str | None = Field(default=None, max_length=300)
    content_type: str | None = Field(default=None, max_length=200)
    content_sha256: str | None = Field(default=None, max_length=64)
    size_bytes: int | None = None
    error_message: str | None = Field(default=None, max_length=2000)
    created_at: datetime = created_field()
    generated_at: datetime | None = None


class ArtifactContent(SQLModel, table=True):
    """The bytes on SQLite, apart from the metadata, so listing artifacts never loads files.

    One BLOB per file, written and read a slice at a time through SQLite's incremental blob I/O
    (store/sqlite_blobs.py). On PostgreSQL this table stays empty: see
    ArtifactContentChunk.
    """

    __tablename__ = "artifact_content"

    artifact_id: uuid.UUID = Field(foreign_key="pack_artifact.id", primary_key=True)
    content: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class ArtifactContentChunk(SQLModel, table=True):
    """The bytes on PostgreSQL: a file as consecutive slices, ``seq`` 0, 1, 2, ...

    PostgreSQL has no incremental writes into one bytea value and its driver holds a bound
    value whole (plus a copy in its send buffer), so a 50 MB file stored as one value cost
    over 100 MB; slices are written and read one at a time (migration 0008). Empty on SQLite.
    """

    __tablename__ = "artifact_content_chunk"

    artifact_id: uuid.UUID = Field(foreign_key="pack_artifact.id", primary_key=True)
    seq: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class ApprovalAction(SQLModel, table=True):
    __tablename__ = "approval_action"
    __table_args__ = (Index("ix_approval_action_pack_created", "report_pack_id", "created_at"),)

    id: uuid.UUID = id_field()
    report_pack_id: uuid.UUID = Field(foreign_key="report_pack.id", nullable=False)
    workspace_id: uuid.UUID = Field(foreign_key="workspace.id", nullable=False)
    org_id: uuid.UUID = org_fk()
    action_type: str = Field(max_length=16, nullable=False)
    comment: str | None = Field(default=None, max_length=4000)
    status_before: str = Field(max_length=16, nullable=False)
    status_after: str = Field(max_length=16, nullable=False)
    api_key_id: uuid.UUID = Field(foreign_key="api_key.id", nullable=False)
    created_at: datetime = created_field()
