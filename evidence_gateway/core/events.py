"""The event catalogue (DESIGN.md §13), the events a change emits, and the log's cursors.

A unit of work collects ``PendingEvent``s and appends them in its committing transaction; the
append itself, per database, is store/event_log.py.
"""

from __future__ import annotations

import base64
import binascii
import enum
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.errors import InvalidInput


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
    webhook_endpoint_created = "webhook_endpoint.created"
    webhook_endpoint_updated = "webhook_endpoint.updated"
    webhook_endpoint_secret_rotated = "webhook_endpoint.secret_rotated"
    webhook_endpoint_disabled = "webhook_endpoint.disabled"
    webhook_endpoint_deleted = "webhook_endpoint.deleted"
    api_key_created = "api_key.created"
    api_key_revoked = "api_key.revoked"
    data_recipient_created = "data_recipient.created"
    data_recipient_revoked = "data_recipient.revoked"
    data_recipient_host_changed = "data_recipient.host_changed"
    publication_created = "publication.created"
    publication_withdrawn = "publication.withdrawn"


@dataclass(frozen=True, slots=True)
class PendingEvent:
    type: EventType
    subject_type: str
    subject_id: uuid.UUID
    workspace_id: uuid.UUID | None
    # The resource as REST renders it, already encoded: captured at emit time.
    data: str


def pending(
    type_: EventType,
    subject_type: str,
    subject_id: uuid.UUID,
    data: Mapping[str, Any],
    *,
    workspace_id: uuid.UUID | None = None,
) -> PendingEvent:
    """Encoded now: the row shows the resource as it was at this change, not at commit."""
    return PendingEvent(type_, subject_type, subject_id, workspace_id, dumps(dict(data)).decode())


# ---- cursors: a position in an organisation's log, as clients see it -----------------------------

_CURSOR_PREFIX = "evs1:"


def cursor_of(sequence: int) -> str:
    """Opaque to clients: a position in the organisation's log."""
    return base64.urlsafe_b64encode(f"{_CURSOR_PREFIX}{sequence}".encode()).decode().rstrip("=")


def sequence_of(cursor: str | None, field: str = "after") -> int:
    if not cursor:
        return 0
    refused = InvalidInput(fields={field: "not a cursor returned by this API"})
    try:
        text = base64.urlsafe_b64decode((cursor + "=" * (-len(cursor) % 4)).encode("ascii")).decode("ascii")
    except (ValueError, binascii.Error, UnicodeError):
        raise refused from None
    number = text.removeprefix(_CURSOR_PREFIX)
    if not text.startswith(_CURSOR_PREFIX) or not number.isdigit() or len(number) > 18:
        raise refused
    return int(number)
