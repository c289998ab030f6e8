"""Evidence items: supporting documents attached to the organisation, a workspace or a shipment."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, Field, StringConstraints
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import unit_of_work
from evidence_gateway.errors import Conflict, InvalidInput, NotFound
from evidence_gateway.models import (
    AttachmentScope,
    EvidenceItem,
    EvidenceType,
    ReportPack,
    VerificationStatus,
    Workspace,
    WorkspaceStatus,
)
from evidence_gateway.read_models.representation import evidence_item_json
from evidence_gateway.resolvers.list_queries import EVIDENCE_ITEMS, parse_list_query
from evidence_gateway.resolvers.pagination import Page, PageParams
from evidence_gateway.resolvers.validation import NOT_BLANK, IsoDate, OneOf, StrictInput, UUIDField, parse, parse_id
from evidence_gateway.store.record_types import EvidenceItemRecord
from evidence_gateway.store.repositories.evidence import EvidenceItemRepository
from evidence_gateway.store.repositories.packs import ReportPackRepository
from evidence_gateway.store.repositories.shipments import ShipmentRepository
from evidence_gateway.store.repositories.workspaces import WorkspaceRepository

EvidenceTypeName = Annotated[str, OneOf(EvidenceType)]
VerificationName = Annotated[str, OneOf(VerificationStatus)]
ScopeName = Annotated[str, OneOf(AttachmentScope)]

_MIME_RE = re.compile(r"^[A-Za-z0-9][\w!#$&^.+-]*/[A-Za-z0-9][\w!#$&^.+-]*(\s*;.*)?$")
_SHA256_RE = re.compile(r"^[0-9a-fA-F]{64}$")


def _http_url(value: str) -> str:
    """Absolute http(s) URL with a host, kept exactly as given."""
    if any(ch.isspace() for ch in value):
        raise ValueError("must be an absolute http or https URL without whitespace")
    try:
        parts = urlsplit(value)
        host = parts.hostname
        parts.port  # noqa: B018  (raises on a malformed port)
    except ValueError:
        raise ValueError("must be an absolute http or https URL") from None
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise ValueError("must be an absolute http or https URL")
    return value


def _sha256(value: str) -> str:
    if not _SHA256_RE.fullmatch(value):
        raise ValueError("must be 64 hexadecimal characters (SHA-256)")
    return value.lower()


def _mime(value: str) -> str:
    if not _MIME_RE.fullmatch(value):
        raise ValueError("must be a media type such as application/pdf")
    return value


# NUL and surrogates are refused for every input at once (validation.parse).
_TRIMMED = Field(description="Trimmed; 1–300 characters.", json_schema_extra=NOT_BLANK)
Title = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300), _TRIMMED]
FileName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300), _TRIMMED]
FileUrl = Annotated[
    str,
    StringConstraints(max_length=2000),
    AfterValidator(_http_url),
    Field(description="Absolute http or https URL.", json_schema_extra={"format": "uri"}),
]
Sha256 = Annotated[str, AfterValidator(_sha256), Field(json_schema_extra={"pattern": _SHA256_RE.pattern})]
MimeType = Annotated[
    str,
    StringConstraints(max_length=200),
    AfterValidator(_mime),
    Field(description="A media type such as application/pdf."),
]
Label = Annotated[str, StringConstraints(strip_whitespace=True, min_length=0, max_length=200)]
Notes = Annotated[str, StringConstraints(max_length=4000)]


class EvidenceCreate(StrictInput):
    evidence_type: EvidenceTypeName
    title: Title
    file_name: FileName
    file_url: FileUrl
    workspace_id: UUIDField | None = None
    report_pack_id: UUIDField | None = None
    shipment_id: UUIDField | None = None
    file_sha256: Sha256 | None = None
    mime_type: MimeType | None = None
    issue_date: IsoDate | None = None
    valid_from: IsoDate | None = None
    valid_to: IsoDate | None = None
    source_system: Label | None = None
    # null means "not given" for these, as for every optional field.
    verification_status: VerificationName | None = Field(
        default=None, json_schema_extra={"default": VerificationStatus.unverified.value}
    )
    attachment_scope: ScopeName | None = None
    """Derived from the references when absent; must agree with them."""
    extracted_metadata_json: dict[str, Any] | None = Field(default=None)
    """Free-form keys."""
    notes: Notes | None = None


def _cross_field_errors(data: Mapping[str, Any]) -> dict[str, str]:
    """Rules between fields, checked on the raw body so they are listed with per-field errors."""
    fields: dict[str, str] = {}
    start, end = _as_date(data.get("valid_from")), _as_date(data.get("valid_to"))
    if start and end and end < start:
        fields["valid_to"] = "must not be before valid_from"
    # An explicit scope must equal the one the references give (shipment > workspace > organization).
    scope = data.get("attachment_scope")
    has_shipment = data.get("shipment_id") is not None
    has_workspace = has_shipment or data.get("workspace_id") is not None or data.get("report_pack_id") is not None
    if scope == AttachmentScope.shipment.value and not has_shipment:
        fields["attachment_scope"] = "scope shipment requires shipment_id"
    elif scope == AttachmentScope.workspace.value and not has_workspace:
        fields["attachment_scope"] = "scope workspace requires workspace_id (or a report_pack_id that implies it)"
    elif scope == AttachmentScope.workspace.value and has_shipment:
        fields["attachment_scope"] = "an item with shipment_id has scope shipment"
    elif scope == AttachmentScope.organization.value and has_workspace:
        fields["attachment_scope"] = "scope organization takes no workspace_id, report_pack_id or shipment_id"
    return fields


def _as_date(value: Any) -> date | None:
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(value) if isinstance(value, str) and len(value) == 10 else None
    except ValueError:
        return None


def _derived_scope(p: EvidenceCreate) -> str:
    if p.shipment_id is not None:
        return AttachmentScope.shipment.value
    if p.workspace_id or p.report_pack_id:
        return AttachmentScope.workspace.value
    return AttachmentScope.organization.value


async def scoped_workspace(session: AsyncSession, ctx: Ctx, workspace_id: uuid.UUID) -> Workspace | None:
    return await WorkspaceRepository(ctx).load(session, workspace_id)


async def scoped_pack(session: AsyncSession, ctx: Ctx, pack_id: uuid.UUID) -> ReportPack | None:
    return await ReportPackRepository(ctx).load(session, pack_id)


async def resolve_workspace_refs(
    session: AsyncSession, ctx: Ctx, workspace_id: uuid.UUID | None, report_pack_id: uuid.UUID | None
) -> tuple[Workspace | None, ReportPack | None, dict[str, str]]:
    """The caller's workspace and pack named in a body; a pack implies its workspace.

    Unknown and other organisations' ids are reported alike, by field name.
    """
    fields: dict[str, str] = {}
    pack = None
    if report_pack_id is not None:
        pack = await scoped_pack(session, ctx, report_pack_id)
        if pack is None:
            fields["report_pack_id"] = "no such report pack"
        elif workspace_id is not None and workspace_id != pack.workspace_id:
            fields["workspace_id"] = "does not match the workspace of report_pack_id"
    workspace = None
    wanted = workspace_id or (pack.workspace_id if pack else None)
    if wanted is not None and "workspace_id" not in fields:
        workspace = await scoped_workspace(session, ctx, wanted)
        if workspace is None:
            fields["workspace_id"] = "no such workspace"
    return workspace, pack, fields


async def create_evidence_item(ctx: Ctx, data: Any) -> EvidenceItem:
    """Validates every field and reference, then stores the item (nothing on any error)."""
    try:
        p = parse(EvidenceCreate, data)
    except InvalidInput as exc:
        raise InvalidInput("invalid input", fields={**_cross_field_errors(data), **exc.fields}) from None
    fields = _cross_field_errors(data)
    if fields:
        raise InvalidInput("invalid input", fields=fields)
    async with unit_of_work(ctx) as uow:
        session = uow.session
        workspace, _pack, fields = await resolve_workspace_refs(session, ctx, p.workspace_id, p.report_pack_id)
        if p.shipment_id is not None:
            shipment = await ShipmentRepository(ctx).load(session, p.shipment_id)
            if shipment is None:
                fields["shipment_id"] = "no such shipment"
            elif workspace is not None and shipment.workspace_id != workspace.id:
                fields["shipment_id"] = "belongs to another workspace than workspace_id / report_pack_id"
            elif workspace is None and not fields:
                workspace = await scoped_workspace(session, ctx, shipment.workspace_id)
        if fields:
            raise InvalidInput("invalid input", fields=fields)
        if workspace is not None and workspace.status == WorkspaceStatus.archived.value:
            raise Conflict("workspace is archived", status=workspace.status, workspace_id=str(workspace.id))
        item = EvidenceItem(
            org_id=ctx.org_id,
            workspace_id=workspace.id if workspace else None,
            report_pack_id=p.report_pack_id,
            shipment_id=p.shipment_id,
            evidence_type=p.evidence_type,
            title=p.title,
            file_name=p.file_name,
            file_url=p.file_url,
            file_sha256=p.file_sha256,
            mime_type=p.mime_type,
            issue_date=p.issue_date,
            valid_from=p.valid_from,
            valid_to=p.valid_to,
            source_system=p.source_system,
            verification_status=p.verification_status or VerificationStatus.unverified.value,
            attachment_scope=p.attachment_scope or _derived_scope(p),
            extracted_metadata_json=p.extracted_metadata_json if p.extracted_metadata_json is not None else {},
            notes=p.notes,
            uploaded_at=utcnow(),
        )
        session.add(item)
        uow.emit(
            EventType.evidence_item_created,
            "evidence_item",
            item.id,
            evidence_item_json(item),
            workspace_id=item.workspace_id,
        )
        uow.respond(item)
    return item


async def get_evidence_item(ctx: Ctx, item_id: Any) -> EvidenceItemRecord:
    item = await EvidenceItemRepository(ctx).get(parse_id(item_id, "evidence item"))
    if item is None:
        raise NotFound("evidence item not found", resource="evidence_item", id=str(item_id))
    return item


class _ListFilter(StrictInput):
    workspace_id: UUIDField | None = None


async def list_evidence_items(
    ctx: Ctx, params: PageParams, workspace_id: Any = None, filters: Any = None, order: Any = None
) -> Page[EvidenceItemRecord]:
    """Newest first (or in ``order``), narrowed by ``filters`` (list_queries.EVIDENCE_ITEMS);
    optionally one workspace's items (unknown or foreign workspace: 404)."""
    wid = parse(_ListFilter, {"workspace_id": workspace_id}).workspace_id
    query = parse_list_query(EVIDENCE_ITEMS, filters, order)
    items = EvidenceItemRepository(ctx)
    if wid is None:
        return await items.page(params, query)
    if await WorkspaceRepository(ctx).get(wid) is None:
        raise NotFound("workspace not found", resource="workspace", id=str(wid))
    return await items.page_of_workspace(params, wid, query)


async def evidence_items_by_workspace_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[EvidenceItemRecord]]:
    """Batch read for DataLoaders (Workspace.evidenceItems), scoped to the caller's organisation."""
    return await EvidenceItemRepository(ctx).of_workspaces(ids)


async def evidence_items_by_pack_ids(ctx: Ctx, ids: list[uuid.UUID]) -> dict[uuid.UUID, list[EvidenceItemRecord]]:
    """Batch read for DataLoaders (Pack.evidenceItems), scoped to the caller's organisation."""
    return await EvidenceItemRepository(ctx).of_packs(ids)
