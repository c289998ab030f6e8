"""Long work under a lease (DESIGN.md §15): renewed while it runs, recorded ``failed`` when it
ends early — with reason ``interrupted`` when cancelled (client gone, server stopping), so a
run or pack never stays "running" until the sweeper notices."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from evidence_gateway.core.context import Ctx
from evidence_gateway.core.leases import kept_alive
from evidence_gateway.core.uow import UnitOfWork, unit_of_work
from evidence_gateway.errors import DomainError, InternalError
from evidence_gateway.web.observability import metrics

log = logging.getLogger(__name__)

T = TypeVar("T")
INTERRUPTED = "interrupted"


class Fail(Protocol):
    async def __call__(self, uow: UnitOfWork, item_id: uuid.UUID, message: str, /, *, reason: str = ...) -> bool: ...


async def run_leased(
    ctx: Ctx,
    item_id: uuid.UUID,
    *,
    what: str,
    masked: tuple[str, str],
    renew: Callable[[], Awaitable[None]],
    work: Callable[[], Awaitable[T]],
    fail: Fail,
) -> T:
    """``work()`` while ``renew()`` keeps the lease; on any failure ``fail`` records it (with its
    event) and domain errors pass on; anything else becomes InternalError(message, id_field=id),
    ``masked`` being (message, id_field)."""
    try:
        with metrics.long_work(what):
            async with kept_alive(renew, ctx.settings.lease_seconds):
                return await work()
    except asyncio.CancelledError:
        await asyncio.shield(_record(ctx, item_id, what, fail, None))
        raise
    except Exception as exc:
        await _record(ctx, item_id, what, fail, exc)
        if isinstance(exc, DomainError):
            raise
        log.exception("%s %s failed", what, item_id)
        message, id_field = masked
        raise InternalError(message, **{id_field: str(item_id)}) from exc


async def _record(ctx: Ctx, item_id: uuid.UUID, what: str, fail: Fail, exc: Exception | None) -> None:
    if exc is None:
        message = f"{INTERRUPTED}: the request was cancelled or the server stopped before the {what} finished"
        reason = INTERRUPTED
    else:
        message = exc.message if isinstance(exc, DomainError) else f"{type(exc).__name__}: {exc}"
        reason = "error"
    try:
        async with unit_of_work(ctx) as uow:
            await fail(uow, item_id, message, reason=reason)
    except Exception:  # the original error is what the caller must see
        log.exception("could not mark %s %s failed", what, item_id)
