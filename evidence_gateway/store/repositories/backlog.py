"""The cluster's waiting work, read when ``/metrics`` is scraped (web/observability/saturation.py):
the respond-async queue by kind and the webhook backlog, in one indexed statement.

What counts as waiting is the claims' and the outbox's own conditions (claims.py, outbox.py), so
a gauge and the worker that empties the queue cannot disagree. Not org-scoped: shared state of
every organisation, with no caller, and only counts and times leave it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, NamedTuple

from sqlalchemy import CompoundSelect, func, literal, select, union_all

from evidence_gateway.models import CalculationRun, ReportPack, WebhookEndpoint, WebhookMessage
from evidence_gateway.models.base import table_of
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.claims import PACK_QUEUED, RUN_QUEUED
from evidence_gateway.store.repositories.outbox import OWED

_RUN = table_of(CalculationRun)
_PACK = table_of(ReportPack)
_ENDPOINT = table_of(WebhookEndpoint)
_MESSAGE = table_of(WebhookMessage)


class Waiting(NamedTuple):
    """How many wait, and the oldest one's time (created; for a webhook, its next attempt)."""

    items: int
    oldest: datetime | None


_QUEUED_RUNS = select(literal("calculation").label("kind"), func.count(), func.min(_RUN.c.created_at)).where(
    *RUN_QUEUED
)
_QUEUED_PACKS = select(literal("pack").label("kind"), func.count(), func.min(_PACK.c.created_at)).where(*PACK_QUEUED)
# Messages owed to enabled endpoints, and the earliest attempt time among them (due once past).
_BACKLOG = (
    select(literal("webhook").label("kind"), func.count(), func.min(_MESSAGE.c.next_attempt_at))
    .select_from(_MESSAGE)
    .join(_ENDPOINT, _ENDPOINT.c.id == _MESSAGE.c.endpoint_id)
    .where(*OWED)
)
_WAITING: CompoundSelect[Any] = union_all(_QUEUED_RUNS, _QUEUED_PACKS, _BACKLOG)


def _aware(value: Any) -> datetime | None:
    if value is None:
        return None
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value  # SQLite's aggregates: text
    if not isinstance(moment, datetime):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def waiting(db: Database) -> dict[str, Waiting]:
    """By kind (``calculation``, ``pack``, ``webhook``): what waits, and since when."""
    found = await db.fetch(_WAITING, {})
    return {row[0]: Waiting(int(row[1] or 0), _aware(row[2])) for row in found}
