"""Report packs, their artifacts and approval actions, and the one rule for download links."""

from __future__ import annotations

import enum
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evidence_gateway import models
from evidence_gateway.core import signing
from evidence_gateway.models import ApprovalActionType, ArtifactStatus, PackStatus
from evidence_gateway.read_models.base import EXTENSION, ReadModel, Uri, ext, render_optional
from evidence_gateway.read_models.calculations import CalculationRun, DataQualityAssessment
from evidence_gateway.settings import Settings


class ArtifactType(enum.StrEnum):
    """The v2 contract's closed enum of ``PackArtifact.artifact_type``: the stored types but the
    iLEAP export, which REST shows as the pack's ``ileap_shipment_footprints_url`` and
    ``ileap_shipment_footprints_sha256`` instead (GraphQL lists all nine)."""

    summary_pdf = "summary_pdf"
    shipment_csv = "shipment_csv"
    shipment_xlsx = "shipment_xlsx"
    machine_json = "machine_json"
    methodology_statement = "methodology_statement"
    evidence_register = "evidence_register"
    quality_report = "quality_report"
    audit_trail = "audit_trail"


# The listing order stays the pack_hash order, the iLEAP file last.
assert [t.value for t in ArtifactType] + [models.ArtifactType.ileap_shipment_footprints.value] == [
    t.value for t in models.ArtifactType
]
_LISTED = frozenset(t.value for t in ArtifactType)


def listed_artifacts(artifacts: Iterable[Any]) -> list[Any]:
    """What a v2 pack lists (``artifacts``, ``GET /v2/packs/{id}/artifacts``): the contract's types."""
    return [a for a in artifacts if a.artifact_type in _LISTED]


def downloadable(artifact: Any) -> bool:
    """An artifact has links only once its content is stored: pending and failed ones have none.

    Both transports ask this (REST bodies, event data, the GraphQL link fields), so the rule is here once.
    """
    return artifact is not None and artifact.status == ArtifactStatus.generated.value


def file_url(artifact: Any, settings: Settings) -> str | None:
    """The stable API link (needs the Bearer key), or null while the artifact is not downloadable."""
    return signing.file_url(settings, artifact.id) if downloadable(artifact) else None


def signed_download_url(artifact: Any, settings: Settings) -> str | None:
    """The time-limited link that needs no key, or null while the artifact is not downloadable."""
    return signing.signed_download_url(settings, artifact.id) if downloadable(artifact) else None


def pack_file_urls(artifacts: Iterable[Any], settings: Settings) -> dict[models.ArtifactType, str | None]:
    """Each artifact type's ``file_url`` among a pack's artifacts (null where missing or not generated)."""
    by_type = {a.artifact_type: a for a in artifacts}
    return {
        kind: file_url(by_type[kind.value], settings) if kind.value in by_type else None for kind in models.ArtifactType
    }


def _url_field(kind: models.ArtifactType) -> str:
    return f"{kind.value}_url"


def _ileap_sha256(artifacts: Iterable[Any]) -> str | None:
    """The iLEAP file's content SHA-256 once it is stored: with the listed artifacts' ``content_sha256``
    the nine inputs of ``pack_hash``."""
    kind = models.ArtifactType.ileap_shipment_footprints.value
    found: Any = next((a for a in artifacts if a.artifact_type == kind), None)
    return found.content_sha256 if downloadable(found) else None


class PackArtifact(ReadModel):
    """One file of a pack; its content is downloaded over HTTP."""

    internal = frozenset({"org_id", "error_message"})
    derived = frozenset({"file_url", "signed_download_url"})

    id: uuid.UUID
    report_pack_id: uuid.UUID
    workspace_id: uuid.UUID
    artifact_type: ArtifactType
    status: ArtifactStatus
    file_name: str | None
    content_type: str | None
    created_at: datetime
    generated_at: datetime | None
    file_url: str | None = Field(description="Stable download link; needs the Bearer key. Null until generated.")
    signed_download_url: Uri | None = Field(description="Time-limited link; no key needed. Null until generated.")
    content_sha256: str | None = ext("SHA-256 of the file (pack_hash input).", pattern="^[0-9a-f]{64}$")
    size_bytes: int | None = ext("File size.", ge=0)

    @classmethod
    def render_linked(cls, artifact: Any, settings: Settings) -> dict[str, Any]:
        links = {
            "file_url": file_url(artifact, settings),
            "signed_download_url": signed_download_url(artifact, settings),
        }
        return cls.compose(artifact, links)


class ReportPack(ReadModel):
    """A versioned evidence pack: its artifacts built from one calculation run."""

    internal = frozenset({"api_key_id", "audit_sequence", "lease_owner", "lease_expires_at", "row_version"})
    derived = frozenset({*(_url_field(kind) for kind in models.ArtifactType), "ileap_shipment_footprints_sha256"})

    id: uuid.UUID
    workspace_id: uuid.UUID
    org_id: uuid.UUID
    legacy_report_id: uuid.UUID | None
    version_number: int = Field(ge=1)
    title: str
    audience_label: str | None
    status: PackStatus
    methodology_profile_id: uuid.UUID | None
    calculation_run_id: uuid.UUID | None
    data_quality_assessment_id: uuid.UUID | None
    export_template_id: uuid.UUID | None
    pack_hash: str | None
    rerun_hash: str | None
    # One link per stored artifact type, in its order (a test checks the two lists agree).
    summary_pdf_url: str | None
    shipment_csv_url: str | None
    shipment_xlsx_url: str | None
    machine_json_url: str | None
    methodology_statement_url: str | None
    evidence_register_url: str | None
    quality_report_url: str | None
    audit_trail_url: str | None
    ileap_shipment_footprints_url: str | None = ext(
        "The iLEAP ShipmentFootprints file (JSON); not in `artifacts`, whose types the contract closes."
    )
    ileap_shipment_footprints_sha256: str | None = ext(
        "SHA-256 of that file, the last pack_hash input; null until generated.", pattern="^[0-9a-f]{64}$"
    )
    created_at: datetime
    approved_at: datetime | None
    published_at: datetime | None
    superseded_pack_id: uuid.UUID | None = ext("The version this one replaced when it was generated.")

    @classmethod
    def render_linked(cls, pack: Any, artifacts: Iterable[Any], settings: Settings) -> dict[str, Any]:
        artifacts = list(artifacts)
        urls: dict[str, Any] = {_url_field(kind): url for kind, url in pack_file_urls(artifacts, settings).items()}
        urls["ileap_shipment_footprints_sha256"] = _ileap_sha256(artifacts)
        return cls.compose(pack, urls)


class ReportPackDetail(ReportPack):
    """A pack with the run and assessment it was built from and its artifacts (the contract's eight types)."""

    calculation_run: CalculationRun | None
    quality_assessment: DataQualityAssessment | None
    artifacts: list[PackArtifact]

    @classmethod
    def render_detail(cls, detail: Any, settings: Settings) -> dict[str, Any]:
        return {
            **ReportPack.render_linked(detail.pack, detail.artifacts, settings),
            "calculation_run": render_optional(CalculationRun, detail.calculation_run),
            "quality_assessment": render_optional(DataQualityAssessment, detail.quality_assessment),
            "artifacts": [PackArtifact.render_linked(a, settings) for a in listed_artifacts(detail.artifacts)],
        }


class ApprovalAction(ReadModel):
    """A recorded approval action: who, when, and the pack status before and after."""

    internal = frozenset({"org_id"})
    model_config = ConfigDict(json_schema_extra=EXTENSION)

    id: uuid.UUID
    report_pack_id: uuid.UUID
    workspace_id: uuid.UUID
    action_type: ApprovalActionType
    comment: str | None
    status_before: PackStatus
    status_after: PackStatus
    api_key_id: uuid.UUID
    created_at: datetime


class ApprovalActionResult(ReadModel):
    """The answer to a recorded approval (the contract spells these keys in camelCase)."""

    report_pack_id: uuid.UUID = Field(serialization_alias="reportPackId")
    workspace_id: uuid.UUID = Field(serialization_alias="workspaceId")
    status_before: PackStatus = Field(serialization_alias="statusBefore")
    status_after: PackStatus = Field(serialization_alias="statusAfter")


class PackMeta(BaseModel):
    """How this version was built (keys below; more may be added)."""

    calculation_run_id: uuid.UUID | None
    data_quality_assessment_id: uuid.UUID | None
    rerun_hash: str | None
    legacy_report_id: uuid.UUID | None
    version_number: int = Field(ge=1)
    pack_hash: str | None
    artifact_count: int = Field(ge=0)
    shipment_rows: int = Field(ge=0)
    evidence_item_count: int = Field(ge=0)
    supersedes_pack_id: uuid.UUID | None
    superseded_pack_ids: list[uuid.UUID]
    superseded: bool
