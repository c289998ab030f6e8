"""Wake-ups when events commit, on this node and across nodes (DESIGN.md §13, §16).

The event table is the truth; a wake-up only says "organisation X has new events, look now".
Whatever listens (the webhook dispatcher, GraphQL subscriptions) reads the table after its own
cursor, so a lost or duplicated wake-up costs latency, never an event: every listener also
polls on its own, slowly.

- On this node the unit of work calls ``published(org_id)`` after a commit that appended events.
- On PostgreSQL the append itself runs ``pg_notify`` (delivered at commit, dropped on rollback),
  and ``PgListener`` — one ``LISTEN`` connection per node — turns those into local wake-ups, so a
  change made through node A wakes the listeners of node B.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable

from evidence_gateway.store import notifications
from evidence_gateway.store.db import Database

log = logging.getLogger(__name__)


Listener = Callable[[uuid.UUID | None], None]

_listeners: set[Listener] = set()


def listen(listener: Listener) -> None:
    """Call ``listener(org_id)`` on every wake-up (``None``: any organisation may have news)."""
    _listeners.add(listener)


def unlisten(listener: Listener) -> None:
    _listeners.discard(listener)


def published(org_id: uuid.UUID | None) -> None:
    for listener in list(_listeners):
        try:
            listener(org_id)
        except Exception:  # one broken listener must not stop the others, nor the request
            log.exception("wake-up listener failed")


def _from_payload(payload: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(payload)
    except ValueError:
        return None


class PgListener:
    """One ``LISTEN evidence_events`` connection for this node, re-opened when it drops."""

    def __init__(self, database_url: str) -> None:
        self._url = database_url
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())
        # Wait for the first LISTEN (bounded): a subscriber attached right after start-up
        # must not miss the other node's next change. Polling covers a slow connect.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), 5)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        def listening() -> None:
            self._ready.set()
            # Anything committed while we were not listening: everyone looks once.
            published(None)

        await notifications.listen_forever(self._url, lambda payload: published(_from_payload(payload)), listening)


def node_listener(db: Database) -> PgListener | None:
    """This node's listener for other nodes' commits; None where no other node can share the
    database (SQLite)."""
    return PgListener(db.url) if notifications.listens(db) else None
