"""Legacy v1 reports: org-scoped reads with successor links, matching for calculations, CLI import."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, model_validator
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.auth import Principal
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.events import EventType
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.core.uow import unit_of_work
from evidence_gateway.errors import InvalidInput, NotFound
from evidence_gateway.models import LegacyReport
from evidence_gateway.read_models.representation import legacy_report_json
from evidence_gateway.resolvers.list_queries import LEGACY_REPORTS, parse_list_query
from evidence_gateway.resolvers.organizations import get_or_create_org
from evidence_gateway.resolvers.pagination import Page, PageParams
from evidence_gateway.resolvers.validation import (
    IsoDate,
    StrictInput,
    UUIDField,
    WholeNumber,
    errors_to_fields,
    json_problems,
    parse_id,
)
from evidence_gateway.resolvers.workspaces import periods_overlap
from evidence_gateway.settings import get_settings
from evidence_gateway.store.db import Database
from evidence_gateway.store.record_types import LegacyReportRecord
from evidence_gateway.store.repositories.keys import OrganizationRepository
from evidence_gateway.store.repositories.legacy import LegacyReportRepository


@dataclass(frozen=True, slots=True)
class LegacyReportView:
    """A legacy report plus its successors: the newest workspace run / pack that used it."""

    report: LegacyReport | LegacyReportRecord
    successor_workspace_id: uuid.UUID | None = None
    successor_report_pack_id: uuid.UUID | None = None


async def _views(
    session: AsyncSession, ctx: Ctx, reports: Sequence[LegacyReport | LegacyReportRecord]
) -> list[LegacyReportView]:
    ws, packs = await LegacyReportRepository(ctx).successors(session, [r.id for r in reports])
    return [LegacyReportView(r, ws.get(r.id), packs.get(r.id)) for r in reports]


async def views_of(ctx: Ctx, reports: Sequence[LegacyReportRecord]) -> list[LegacyReportView]:
    """Reports with their successors (one read for them all)."""
    async with ctx.db.read() as session:
        return await _views(session, ctx, reports)


async def list_legacy_reports(
    ctx: Ctx, params: PageParams, filters: Any = None, order: Any = None
) -> Page[LegacyReportView]:
    """Newest first (or in ``order``), narrowed by ``filters`` (list_queries.LEGACY_REPORTS), like
    workspaces: the page and its total, then the successors."""
    page = await LegacyReportRepository(ctx).page(params, parse_list_query(LEGACY_REPORTS, filters, order))
    async with ctx.db.read() as session:
        items = await _views(session, ctx, page.items)
    return Page(items=items, page=page.page, per_page=page.per_page, total=page.total)


async def get_legacy_report(ctx: Ctx, report_id: Any) -> LegacyReportView:
    async with ctx.db.read() as session:
        report = await load_legacy_report(session, ctx, parse_id(report_id, "legacy report"))
        if report is None:
            raise NotFound("legacy report not found", resource="legacy_report", id=str(report_id))
        return (await _views(session, ctx, [report]))[0]


async def load_legacy_report(session: AsyncSession, ctx: Ctx, report_id: uuid.UUID) -> LegacyReport | None:
    """Another organisation's report is simply not there."""
    return await LegacyReportRepository(ctx).load(session, report_id)


async def find_compatible(session: AsyncSession, ctx: Ctx, start: date | None, end: date | None) -> LegacyReport | None:
    """The organisation's best legacy report overlapping the period: final first, then the latest."""
    reports = await LegacyReportRepository(ctx).all_of_org(session)
    candidates = [r for r in reports if periods_overlap(start, end, r.reporting_period_start, r.reporting_period_end)]
    if not candidates:
        return None
    candidates.sort(
        key=lambda r: (
            r.status == "final",
            r.reporting_period_end or date.min,
            r.updated_at,
            str(r.id),
        ),
        reverse=True,
    )
    return candidates[0]


# ---- CLI import -------------------------------------------------------------------------------


class LegacyRecord(StrictInput):
    id: UUIDField | None = None
    title: Annotated[str, Field(min_length=1, max_length=300)]
    reporting_period_start: IsoDate | None = None
    reporting_period_end: IsoDate | None = None
    status: Literal["draft", "final"] = "final"
    total_co2e_kg: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    shipment_count: Annotated[WholeNumber, Field(ge=0, le=2**31 - 1)] = 0

    @model_validator(mode="after")
    def _period_in_order(self) -> LegacyRecord:
        start, end = self.reporting_period_start, self.reporting_period_end
        if start and end and end < start:
            raise ValueError("reporting_period_end must not be before reporting_period_start")
        return self


def _label(index: int, raw: Any) -> str:
    rid = raw.get("id") if isinstance(raw, dict) else None
    return f"record {index}" + (f" (id {rid})" if rid is not None else "")


def validate_records(data: Any) -> list[LegacyRecord]:
    """Every record or none: InvalidInput names each bad record by index and id."""
    if not isinstance(data, list):
        raise InvalidInput("legacy file must be a JSON array of report objects", fields={"file": "not an array"})
    fields: dict[str, str] = {}
    records: list[LegacyRecord] = []
    seen: dict[uuid.UUID, int] = {}
    for i, raw in enumerate(data):
        if not isinstance(raw, dict):
            fields[_label(i, raw)] = "must be a JSON object"
            continue
        # The same rule as every API input: text the database cannot store is refused.
        unstorable = json_problems(raw)
        for path, reason in unstorable.items():
            fields[f"{_label(i, raw)}: {path}"] = reason
        if unstorable:
            continue
        try:
            rec = LegacyRecord.model_validate(raw)
        except ValidationError as exc:
            for path, reason in errors_to_fields(exc).items():
                fields[f"{_label(i, raw)}: {path}"] = reason
            continue
        if rec.id is not None:
            if rec.id in seen:
                fields[f"{_label(i, raw)}: id"] = f"duplicates record {seen[rec.id]}"
            seen[rec.id] = i
        records.append(rec)
    if fields:
        raise InvalidInput("invalid legacy records", fields=fields)
    return records


async def import_legacy_reports(
    db: Database,
    org_name: str,
    data: Any,
    *,
    create_org: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> list[uuid.UUID]:
    """Insert or update (same id, same organisation) in one transaction; returns the stored ids.

    Without ``create_org`` (the CLI without --create-org) an unknown organisation is refused: a
    typo must not make a new one. ``progress(done, total)`` hears how far the store has got,
    every 500 records and at the end (the CLI draws a bar with it).
    """
    records = validate_records(data)
    if create_org:
        org = await get_or_create_org(db, org_name)
    else:
        async with db.read() as read:
            found = await OrganizationRepository.named(read, org_name)
        if found is None:
            raise NotFound(f"no organisation named {org_name!r} (--create-org makes it)")
        org = found
    report = progress or (lambda done, total: None)
    now = utcnow()
    stored: list[uuid.UUID] = []
    ctx = Ctx(db=db, settings=get_settings(), principal=Principal(org_id=org.id, key_id=None))
    async with unit_of_work(ctx) as uow:
        session = uow.session
        ids = [r.id for r in records if r.id is not None]
        existing = await LegacyReportRepository.any_org_by_ids(session, ids)
        foreign = {
            f"record {i} (id {r.id})": "id belongs to another organisation"
            for i, r in enumerate(records)
            if r.id in existing and existing[r.id].org_id != org.id
        }
        if foreign:
            raise InvalidInput("invalid legacy records", fields=foreign)
        for done, rec in enumerate(records, 1):
            if done % 500 == 0 or done == len(records):
                report(done, len(records))
            values = rec.model_dump(exclude={"id"})
            current = existing.get(rec.id) if rec.id is not None else None
            if current is not None:
                for key, value in values.items():
                    setattr(current, key, value)
                current.updated_at = now
                stored.append(current.id)
                uow.emit(EventType.legacy_report_imported, "legacy_report", current.id, legacy_report_json(current))
                continue
            new = LegacyReport(org_id=org.id, created_at=now, updated_at=now, **values)
            if rec.id is not None:
                new.id = rec.id
            session.add(new)
            stored.append(new.id)
            uow.emit(EventType.legacy_report_imported, "legacy_report", new.id, legacy_report_json(new))
    return stored
