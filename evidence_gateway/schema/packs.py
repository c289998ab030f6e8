"""GraphQL for evidence packs, artifacts and approvals (issue 4): thin fields over resolvers/packs."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

import strawberry
from sqlalchemy import Row
from strawberry.types import Info

from evidence_gateway.models import ApprovalAction, PackArtifact, ReportPack
from evidence_gateway.read_models import packs as links
from evidence_gateway.resolvers import approvals, calculation_reads, connections, pack_reads, packs
from evidence_gateway.resolvers.evidence import evidence_items_by_pack_ids
from evidence_gateway.schema.calculations import CalculationRunType, DataQualityAssessmentType
from evidence_gateway.schema.common import LOOKUP_RULE, or_null
from evidence_gateway.schema.context import GraphQLContext, relation
from evidence_gateway.schema.convert import from_model, input_to_dict
from evidence_gateway.schema.enums import ApprovalActionType, ArtifactStatus, ArtifactType, PackStatus
from evidence_gateway.schema.evidence import EvidenceItemType, evidence_item
from evidence_gateway.schema.list_inputs import (
    FILTER_HELP,
    ORDER_HELP,
    EvidenceItemFilter,
    EvidenceItemOrder,
    ReportPackFilter,
    ReportPackOrder,
    filters_of,
    order_of,
)
from evidence_gateway.schema.relay import (
    After,
    Before,
    Connection,
    First,
    Last,
    Node,
    connection,
    deprecated_for,
    nested_connection,
)
from evidence_gateway.store.record_types import ApprovalActionRecord as StoredApproval
from evidence_gateway.store.record_types import PackArtifactRecord, ReportPackRecord

GqlInfo = Info[GraphQLContext, None]


@strawberry.type(name="PackArtifact", description="One file of a pack; content is downloaded over HTTP, not GraphQL.")
class PackArtifactType:
    id: uuid.UUID = strawberry.field(description="Artifact id.")
    report_pack_id: uuid.UUID = strawberry.field(description="Pack the artifact belongs to.")
    workspace_id: uuid.UUID = strawberry.field(description="Workspace of the pack.")
    artifact_type: ArtifactType = strawberry.field(description="Artifact family.")
    status: ArtifactStatus = strawberry.field(description="pending, generated or failed.")
    file_name: str | None = strawberry.field(description="File name served in Content-Disposition.")
    content_type: str | None = strawberry.field(description="Media type of the file.")
    content_sha256: str | None = strawberry.field(description="SHA-256 hex of the file (input to packHash).")
    size_bytes: int | None = strawberry.field(description="File size in bytes.")
    created_at: datetime = strawberry.field(description="When the artifact record was created.")
    generated_at: datetime | None = strawberry.field(description="When the file was rendered.")

    @strawberry.field(description="Stable download link; needs the Bearer key of the organisation.")
    def file_url(self, info: GqlInfo) -> str | None:
        return links.file_url(self, info.context.settings)

    @strawberry.field(description="Time-limited download link that needs no key (HMAC-signed, default 15 min).")
    def signed_download_url(self, info: GqlInfo) -> str | None:
        return links.signed_download_url(self, info.context.settings)


@strawberry.type(name="ApprovalAction", description="A recorded approval action: who, when, before and after.")
class ApprovalActionRecord:
    id: uuid.UUID = strawberry.field(description="Action id.")
    report_pack_id: uuid.UUID = strawberry.field(description="Pack acted on.")
    workspace_id: uuid.UUID = strawberry.field(description="Workspace of the pack.")
    action_type: ApprovalActionType = strawberry.field(description="The action.")
    comment: str | None = strawberry.field(description="Comment given with the action.")
    status_before: PackStatus = strawberry.field(description="Pack status before the action.")
    status_after: PackStatus = strawberry.field(description="Pack status after the action.")
    api_key_id: uuid.UUID = strawberry.field(description="API key that recorded the action.")
    created_at: datetime = strawberry.field(description="When the action was recorded.")


async def _artifact_url(info: GqlInfo, pack_id: uuid.UUID, kind: ArtifactType) -> str | None:
    artifacts = await info.context.loader(pack_reads.artifacts_by_pack_ids, default=[]).load(pack_id)
    return links.pack_file_urls(artifacts, info.context.settings)[kind]


@strawberry.type(name="ReportPack", description="A versioned evidence pack: nine artifacts built from one run.")
class ReportPackType(Node):
    id: uuid.UUID = strawberry.field(description="Pack id.")
    workspace_id: uuid.UUID = strawberry.field(description="Workspace the pack was built from.")
    org_id: uuid.UUID = strawberry.field(description="Owning organisation.")
    legacy_report_id: uuid.UUID | None = strawberry.field(description="Legacy v1 report this pack succeeds.")
    version_number: int = strawberry.field(description="1, 2, 3... per workspace.")
    title: str = strawberry.field(description="Display title.")
    audience_label: str | None = strawberry.field(description="Intended audience.")
    status: PackStatus = strawberry.field(description="Lifecycle state.")
    methodology_profile_id: uuid.UUID | None = strawberry.field(description="Methodology profile of the run.")
    calculation_run_id: uuid.UUID | None = strawberry.field(description="Run the pack was built from.")
    data_quality_assessment_id: uuid.UUID | None = strawberry.field(description="Assessment of that run.")
    export_template_id: uuid.UUID | None = strawberry.field(description="Template bundle named by the run.")
    pack_hash: str | None = strawberry.field(
        description="SHA-256 over the artifacts' SHA-256 hex digests in ArtifactType order (docs/packs.md)."
    )
    rerun_hash: str | None = strawberry.field(description="The run's rerun hash.")
    superseded_pack_id: uuid.UUID | None = strawberry.field(description="The workspace's latest pack before this.")
    created_at: datetime = strawberry.field(description="When generation started.")
    approved_at: datetime | None = strawberry.field(description="When the pack was approved.")
    published_at: datetime | None = strawberry.field(description="When the pack was published.")

    @strawberry.field(description="The calculation run the pack was built from.")
    async def calculation_run(self, info: GqlInfo) -> CalculationRunType | None:
        if self.calculation_run_id is None:
            return None
        run = await info.context.loader(calculation_reads.runs_by_ids).load(self.calculation_run_id)
        return None if run is None else from_model(CalculationRunType, run)

    @strawberry.field(description="The quality assessment of that run.")
    async def quality_assessment(self, info: GqlInfo) -> DataQualityAssessmentType | None:
        if self.calculation_run_id is None:
            return None
        found = await info.context.loader(calculation_reads.assessments_by_run_ids).load(self.calculation_run_id)
        return None if found is None else from_model(DataQualityAssessmentType, found)

    @strawberry.field(description="The nine artifacts, in pack_hash order.")
    async def artifacts(self, info: GqlInfo) -> list[PackArtifactType]:
        found = await info.context.loader(pack_reads.artifacts_by_pack_ids, default=[]).load(self.id)
        return [artifact_type(a) for a in found]

    @strawberry.field(description="Approval actions recorded on this pack, oldest first.")
    async def approvals(self, info: GqlInfo) -> list[ApprovalActionRecord]:
        found = await info.context.loader(pack_reads.approvals_by_pack_ids, default=[]).load(self.id)
        return [approval_record(a) for a in found]

    @strawberry.field(description="Link to the summary PDF (needs the Bearer key).")
    async def summary_pdf_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.summary_pdf)

    @strawberry.field(description="Link to the shipment CSV (needs the Bearer key).")
    async def shipment_csv_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.shipment_csv)

    @strawberry.field(description="Link to the shipment XLSX (needs the Bearer key).")
    async def shipment_xlsx_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.shipment_xlsx)

    @strawberry.field(
        description="Link to the iLEAP ShipmentFootprints (TCEs with co2eWTW/co2eTTW, and their TOCs) of the "
        "pack's run, as JSON (needs the Bearer key)."
    )
    async def ileap_shipment_footprints_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.ileap_shipment_footprints)

    @strawberry.field(description="Link to the machine-readable JSON (needs the Bearer key).")
    async def machine_json_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.machine_json)

    @strawberry.field(description="Link to the methodology statement (needs the Bearer key).")
    async def methodology_statement_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.methodology_statement)

    @strawberry.field(description="Link to the evidence register (needs the Bearer key).")
    async def evidence_register_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.evidence_register)

    @strawberry.field(description="Link to the quality report (needs the Bearer key).")
    async def quality_report_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.quality_report)

    @strawberry.field(description="Link to the audit trail (needs the Bearer key).")
    async def audit_trail_url(self, info: GqlInfo) -> str | None:
        return await _artifact_url(info, self.id, ArtifactType.audit_trail)

    @strawberry.field(description="Evidence items that name this pack (report_pack_id), newest first, by cursor.")
    async def evidence_items_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[EvidenceItemFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[EvidenceItemOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[EvidenceItemType]:
        return await nested_connection(
            info,
            "pack.evidence_items",
            self.id,
            evidence_item,
            first,
            after,
            last,
            before,
            filters_of(filter),
            order_of(order_by),
        )

    @strawberry.field(
        description="Evidence items that name this pack (report_pack_id), newest first.",
        deprecation_reason=deprecated_for("evidenceItemsConnection"),
    )
    async def evidence_items(self, info: GqlInfo) -> list[EvidenceItemType]:
        found = await info.context.loader(evidence_items_by_pack_ids, default=[]).load(self.id)
        return [evidence_item(e) for e in found]


def pack_type(pack: ReportPack | ReportPackRecord | Row[Any]) -> ReportPackType:
    return from_model(ReportPackType, pack)


def artifact_type(artifact: PackArtifact | PackArtifactRecord) -> PackArtifactType:
    return from_model(PackArtifactType, artifact)


def approval_record(action: ApprovalAction | StoredApproval | Row[Any]) -> ApprovalActionRecord:
    return from_model(ApprovalActionRecord, action)


@strawberry.type(description="Result of an approval action (same fields as the REST ApprovalActionResult).")
class ApprovalActionResult:
    report_pack_id: uuid.UUID = strawberry.field(description="Pack acted on.")
    workspace_id: uuid.UUID = strawberry.field(description="Workspace of the pack.")
    status_before: PackStatus = strawberry.field(description="Pack status before the action.")
    status_after: PackStatus = strawberry.field(description="Pack status after the action.")


@strawberry.type(description="A generated pack and what it was built from (the REST response's meta).")
class GeneratePackPayload:
    pack: ReportPackType = strawberry.field(description="The new version.")
    calculation_run_id: uuid.UUID | None = strawberry.field(description="Run it was built from.")
    rerun_hash: str | None = strawberry.field(description="That run's rerun hash.")
    artifact_count: int = strawberry.field(description="Artifacts rendered (8).")
    supersedes_pack_id: uuid.UUID | None = strawberry.field(description="The workspace's previous latest pack.")
    superseded_pack_ids: list[uuid.UUID] = strawberry.field(description="Older unpublished versions now archived.")


@strawberry.input(description="Options for generating a pack.")
class GeneratePackInput:
    legacy_report_id: uuid.UUID | None = strawberry.field(
        default=None, description="Legacy v1 report this pack succeeds (the organisation's own)."
    )


@strawberry.input(description="An approval action.")
class RecordApprovalInput:
    action_type: ApprovalActionType = strawberry.field(description="requested, approved, rejected, published.")
    comment: str | None = strawberry.field(default=None, description="Optional comment (up to 4000 characters).")


@strawberry.type
class WorkspacePackFields:
    """Fields this domain adds to `Workspace` (WorkspaceType inherits them)."""

    @strawberry.field(description="The workspace's current pack (latest successful generation).")
    @relation(
        pack_reads.packs_by_ids, "latest_report_pack_id", lambda found: None if found is None else pack_type(found)
    )
    def latest_pack(self, info: GqlInfo) -> ReportPackType | None: ...

    @strawberry.field(description="The workspace's packs, newest first, by cursor.")
    async def packs_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[ReportPackFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[ReportPackOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[ReportPackType]:
        workspace_id: Any = getattr(self, "id")  # noqa: B009 - the mixin's host type defines it
        return await nested_connection(
            info,
            "workspace.packs",
            workspace_id,
            pack_type,
            first,
            after,
            last,
            before,
            filters_of(filter),
            order_of(order_by),
        )

    @strawberry.field(
        description="Every pack of the workspace, newest version first.",
        deprecation_reason=deprecated_for("packsConnection"),
    )
    async def packs(self, info: GqlInfo) -> list[ReportPackType]:
        workspace_id: Any = getattr(self, "id")  # noqa: B009 - the mixin's host type defines it
        found = await info.context.loader(pack_reads.packs_by_workspace_ids, default=[]).load(workspace_id)
        return [pack_type(p) for p in found]


@strawberry.type
class Query:
    @strawberry.field(
        description="Every pack of the caller's workspaces, newest first (or in orderBy's order), narrowed by "
        "filter (packs awaiting approval: status IN_REVIEW), by cursor."
    )
    async def packs_connection(
        self,
        info: GqlInfo,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[ReportPackFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[ReportPackOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[ReportPackType]:
        found = await connections.packs(
            info.context.ctx,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, pack_type)

    @strawberry.field(description=f"One pack; {LOOKUP_RULE}.")
    async def pack(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Pack id.")]
    ) -> ReportPackType | None:
        found = await or_null(pack_reads.get_pack(info.context.ctx, id))
        return None if found is None else pack_type(found)


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Generate the next pack version from the workspace's latest completed run.")
    async def generate_pack(
        self,
        info: GqlInfo,
        workspace_id: Annotated[uuid.UUID, strawberry.argument(description="Workspace to build the pack from.")],
        input: Annotated[GeneratePackInput | None, strawberry.argument(description="Options; all optional.")] = None,
    ) -> GeneratePackPayload:
        result = await packs.generate_pack(info.context.ctx, workspace_id, input_to_dict(input) if input else {})
        assert isinstance(result, packs.GeneratedPack)  # GraphQL never asks for respond-async
        meta = result.meta
        return GeneratePackPayload(
            pack=pack_type(result.pack),
            calculation_run_id=meta["calculation_run_id"],
            rerun_hash=meta["rerun_hash"],
            artifact_count=meta["artifact_count"],
            supersedes_pack_id=meta["supersedes_pack_id"],
            superseded_pack_ids=meta["superseded_pack_ids"],
        )

    @strawberry.mutation(description="Record an approval action; CONFLICT names the allowed actions.")
    async def record_approval(
        self,
        info: GqlInfo,
        pack_id: Annotated[uuid.UUID, strawberry.argument(description="Pack to act on.")],
        input: Annotated[RecordApprovalInput, strawberry.argument(description="The action and an optional comment.")],
    ) -> ApprovalActionResult:
        result = await approvals.record_approval(info.context.ctx, pack_id, input_to_dict(input))
        return ApprovalActionResult(
            report_pack_id=result.report_pack_id,
            workspace_id=result.workspace_id,
            status_before=PackStatus(result.status_before),
            status_after=PackStatus(result.status_after),
        )
