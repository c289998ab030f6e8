"""The event catalogue and how a unit of work appends to the log (DESIGN.md §13).

Sequences come from the organisation's counter row, bumped by ``UPDATE … RETURNING`` just before
the commit: the row lock orders committing writers of one organisation, so a reader paging by
sequence never sees a later number before an earlier one, and a rolled-back transaction gives
its numbers back (no gaps).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import insert, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlmodel import col

from evidence_gateway.jsoncodec import plain
from evidence_gateway.models import Event, Organization
from evidence_gateway.timeutil import utcnow


class EventType(enum.StrEnum):
    """``resource.past_tense_verb``; docs/events.md has a JSON Schema for each."""

    workspace_created = "workspace.created"
    workspace_status_changed = "workspace.status_changed"
    import_registered = "import.registered"
    calculation_completed = "calculation.completed"
    calculation_failed = "calculation.failed"
    pack_generated = "pack.generated"
    pack_failed = "pack.failed"
    pack_status_changed = "pack.status_changed"
    evidence_item_created = "evidence_item.created"
    legacy_report_imported = "legacy_report.imported"


@dataclass(frozen=True, slots=True)
class PendingEvent:
    type: EventType
    subject_type: str
    subject_id: uuid.UUID
    workspace_id: uuid.UUID | None
    data: dict[str, Any]


def pending(
    type_: EventType,
    subject_type: str,
    subject_id: uuid.UUID,
    data: Mapping[str, Any],
    *,
    workspace_id: uuid.UUID | None = None,
) -> PendingEvent:
    """Rendered now, to JSON-safe values: the row shows the resource as it was at this change."""
    return PendingEvent(type_, subject_type, subject_id, workspace_id, plain(dict(data)))


async def append(
    session: AsyncSession,
    org_id: uuid.UUID,
    events: list[PendingEvent],
    *,
    actor: uuid.UUID | None,
    request_id: str | None,
) -> list[int]:
    """Number and insert the events in the caller's transaction; returns their sequences."""
    if not events:
        return []
    bumped = await session.execute(
        update(Organization)
        .where(col(Organization.id) == org_id)
        .values(last_event_sequence=col(Organization.last_event_sequence) + len(events))
        .returning(col(Organization.last_event_sequence))
    )
    last = int(bumped.scalar_one())
    first = last - len(events) + 1
    now = utcnow()
    await session.execute(
        insert(Event.__table__),  # type: ignore[attr-defined]
        [
            {
                "id": uuid.uuid4(),
                "org_id": org_id,
                "sequence": first + i,
                "type": e.type.value,
                "occurred_at": now,
                "actor": actor,
                "request_id": request_id,
                "subject_type": e.subject_type,
                "subject_id": e.subject_id,
                "workspace_id": e.workspace_id,
                "data": e.data,
            }
            for i, e in enumerate(events)
        ],
    )
    return list(range(first, last + 1))
