"""GraphQL for evidence items (issue 5): thin fields over resolvers/evidence."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated, Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from evidence_gateway.resolvers import connections, evidence
from evidence_gateway.resolvers.pagination import page_params
from evidence_gateway.schema.common import LOOKUP_RULE, PageArg, PaginationMeta, PerPageArg, or_null
from evidence_gateway.schema.context import GraphQLContext
from evidence_gateway.schema.convert import from_model, input_to_dict
from evidence_gateway.schema.enums import AttachmentScope, EvidenceType, VerificationStatus
from evidence_gateway.schema.list_inputs import (
    FILTER_HELP,
    ORDER_HELP,
    EvidenceItemFilter,
    EvidenceItemOrder,
    filters_of,
    order_of,
)
from evidence_gateway.schema.outputs import MetadataEntry, json_deprecation, metadata_entries
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

GqlInfo = Info[GraphQLContext, None]


@strawberry.type(name="EvidenceItem", description="A supporting document (receipt, invoice, telematics export, …).")
class EvidenceItemType(Node):
    id: uuid.UUID = strawberry.field(description="Evidence item id.")
    workspace_id: uuid.UUID | None = strawberry.field(
        description="Workspace it belongs to (also set when implied by its pack or shipment)."
    )
    report_pack_id: uuid.UUID | None = strawberry.field(description="Evidence pack it supports.")
    shipment_id: uuid.UUID | None = strawberry.field(description="Shipment it documents.")
    org_id: uuid.UUID = strawberry.field(description="Owning organisation.")
    evidence_type: EvidenceType = strawberry.field(description="Kind of document.")
    title: str = strawberry.field(description="Title.")
    file_name: str = strawberry.field(description="File name of the document.")
    file_url: str = strawberry.field(description="Where the document lives (http or https URL).")
    file_sha256: str | None = strawberry.field(description="SHA-256 of the file, lowercase hex.")
    mime_type: str | None = strawberry.field(description="Media type, e.g. application/pdf.")
    issue_date: date | None = strawberry.field(description="Date the document was issued.")
    valid_from: date | None = strawberry.field(description="First day the document is valid.")
    valid_to: date | None = strawberry.field(description="Last day the document is valid.")
    source_system: str | None = strawberry.field(description="System the document came from.")
    verification_status: VerificationStatus = strawberry.field(description="Verification state (default unverified).")
    attachment_scope: AttachmentScope = strawberry.field(
        description="organization, workspace or shipment (derived from the references unless given)."
    )
    extracted_metadata_json: JSON = strawberry.field(
        description="Free-form metadata object, stored as given.",
        deprecation_reason=json_deprecation("extractedMetadata"),
    )
    notes: str | None = strawberry.field(description="Free-text notes.")
    uploaded_at: datetime = strawberry.field(description="When the item was registered.")

    @strawberry.field(description="The metadata object, key by key (its shape is the caller's).")
    def extracted_metadata(self) -> list[MetadataEntry]:
        return metadata_entries(self.extracted_metadata_json)


@strawberry.type(description="One page of evidence items.")
class EvidenceItemPage:
    items: list[EvidenceItemType] = strawberry.field(description="Evidence items on this page, newest first.")
    pagination: PaginationMeta = strawberry.field(description="Page position and total.")


@strawberry.input(description="A new evidence item; references must be the caller's own records.")
class CreateEvidenceItemInput:
    evidence_type: EvidenceType = strawberry.field(description="Kind of document.")
    title: str = strawberry.field(description="Title (1–300 characters).")
    file_name: str = strawberry.field(description="File name (1–300 characters).")
    file_url: str = strawberry.field(description="Absolute http or https URL of the document.")
    workspace_id: uuid.UUID | None = strawberry.field(default=None, description="Workspace to attach to.")
    report_pack_id: uuid.UUID | None = strawberry.field(
        default=None, description="Pack it supports (implies the pack's workspace)."
    )
    shipment_id: uuid.UUID | None = strawberry.field(
        default=None, description="Shipment it documents (implies the shipment's workspace)."
    )
    file_sha256: str | None = strawberry.field(default=None, description="SHA-256 of the file: 64 hex characters.")
    mime_type: str | None = strawberry.field(default=None, description="Media type, e.g. application/pdf.")
    issue_date: date | None = strawberry.field(default=None, description="Issue date.")
    valid_from: date | None = strawberry.field(default=None, description="Valid from (not after validTo).")
    valid_to: date | None = strawberry.field(default=None, description="Valid to.")
    source_system: str | None = strawberry.field(default=None, description="Source system.")
    verification_status: VerificationStatus | None = strawberry.field(
        default=None, description="Defaults to unverified."
    )
    attachment_scope: AttachmentScope | None = strawberry.field(
        default=None, description="Derived from the references when absent; must agree with them when given."
    )
    extracted_metadata_json: JSON | None = strawberry.field(default=None, description="A JSON object (default {}).")
    notes: str | None = strawberry.field(default=None, description="Free-text notes.")


def evidence_item(obj: object) -> EvidenceItemType:
    return from_model(EvidenceItemType, obj)


@strawberry.type
class WorkspaceEvidenceFields:
    """Fields this domain adds to `Workspace` (WorkspaceType inherits them)."""

    @strawberry.field(
        description="Evidence items attached to this workspace (incl. its packs and shipments), newest first, "
        "by cursor."
    )
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
        ws_id: Any = getattr(self, "id")  # noqa: B009 - the mixin's host type defines it
        return await nested_connection(
            info,
            "workspace.evidence_items",
            ws_id,
            evidence_item,
            first,
            after,
            last,
            before,
            filters_of(filter),
            order_of(order_by),
        )

    @strawberry.field(
        description="Evidence items attached to this workspace (incl. its packs and shipments).",
        deprecation_reason=deprecated_for("evidenceItemsConnection"),
    )
    async def evidence_items(self, info: GqlInfo) -> list[EvidenceItemType]:
        ws_id: Any = getattr(self, "id")  # noqa: B009 - the mixin's host type defines it
        items = await info.context.loader(evidence.evidence_items_by_workspace_ids, default=[]).load(ws_id)
        return [evidence_item(i) for i in items]


@strawberry.type
class Query:
    @strawberry.field(description=f"One evidence item; {LOOKUP_RULE}.")
    async def evidence_item(
        self, info: GqlInfo, id: Annotated[uuid.UUID, strawberry.argument(description="Evidence item id.")]
    ) -> EvidenceItemType | None:
        found = await or_null(evidence.get_evidence_item(info.context.ctx, id))
        return None if found is None else evidence_item(found)

    @strawberry.field(
        description="The caller's evidence items, newest first (or in orderBy's order), narrowed by filter, by "
        "cursor; optionally one workspace's "
        "(NOT_FOUND if the workspace is not the caller's, as evidenceItems)."
    )
    async def evidence_items_connection(
        self,
        info: GqlInfo,
        workspace_id: Annotated[
            uuid.UUID | None,
            strawberry.argument(description="Only the items of this workspace (incl. its packs and shipments)."),
        ] = None,
        first: First = None,
        after: After = None,
        last: Last = None,
        before: Before = None,
        filter: Annotated[EvidenceItemFilter | None, strawberry.argument(description=FILTER_HELP)] = None,
        order_by: Annotated[EvidenceItemOrder | None, strawberry.argument(description=ORDER_HELP)] = None,
    ) -> Connection[EvidenceItemType]:
        found = await connections.evidence_items(
            info.context.ctx,
            workspace_id,
            filters_of(filter),
            order_of(order_by),
            first=first,
            after=after,
            last=last,
            before=before,
        )
        return connection(found, evidence_item)

    @strawberry.field(
        description="The caller's evidence items, newest first; optionally one workspace's.",
        deprecation_reason=deprecated_for("evidenceItemsConnection"),
    )
    async def evidence_items(
        self,
        info: GqlInfo,
        workspace_id: Annotated[
            uuid.UUID | None,
            strawberry.argument(
                description="Only the items of this workspace (incl. its packs and shipments); null: all."
            ),
        ] = None,
        page: PageArg = 1,
        per_page: PerPageArg = 20,
    ) -> EvidenceItemPage:
        ctx = info.context.ctx
        result = await evidence.list_evidence_items(ctx, page_params(page, per_page), workspace_id)
        return EvidenceItemPage(items=[evidence_item(i) for i in result.items], pagination=PaginationMeta.of(result))


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Register an evidence item.")
    async def create_evidence_item(
        self,
        info: GqlInfo,
        input: Annotated[CreateEvidenceItemInput, strawberry.argument(description="The item to register.")],
    ) -> EvidenceItemType:
        return evidence_item(await evidence.create_evidence_item(info.context.ctx, input_to_dict(input)))
