"""PostgreSQL's LISTEN, on a connection of its own (asyncpg): the cross-node half of wake-ups.

The event append runs ``pg_notify`` in the committing transaction (store/event_log.py); this
keeps one ``LISTEN`` connection per node open, re-opening it when it drops, and hands each
payload to the caller (core/wakeups.py turns them into local wake-ups).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from sqlalchemy.engine import make_url

from evidence_gateway.store.db import Database

log = logging.getLogger(__name__)

CHANNEL = "evidence_events"
# Between attempts to re-open a lost LISTEN connection (listeners keep polling meanwhile).
RECONNECT_SECONDS = 1.0


def listens(db: Database) -> bool:
    """Whether other nodes can share this database (and so need telling): PostgreSQL."""
    return not db.is_sqlite


def _setter(event: asyncio.Event) -> Callable[[object], None]:
    return lambda _connection: event.set()


async def listen_forever(
    database_url: str, on_payload: Callable[[str], None], on_listening: Callable[[], None]
) -> None:
    """LISTEN until cancelled: ``on_listening()`` each time the connection is (re)opened (news
    may have been missed meanwhile), ``on_payload(payload)`` for every notification."""
    import asyncpg  # PostgreSQL's alone: a node on SQLite never loads the driver

    dsn = make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)

    def on_notify(_conn: object, _pid: int, _channel: str, payload: str) -> None:
        on_payload(payload)

    while True:
        connection = None
        try:
            connection = await asyncpg.connect(dsn)
            lost = asyncio.Event()
            connection.add_termination_listener(_setter(lost))
            await connection.add_listener(CHANNEL, on_notify)
            on_listening()
            await lost.wait()
            log.warning("LISTEN connection lost; re-opening")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("LISTEN %s failed (%s); retrying in %ss", CHANNEL, exc, RECONNECT_SECONDS)
        finally:
            if connection is not None and not connection.is_closed():
                with contextlib.suppress(Exception):
                    await asyncio.shield(connection.close(timeout=2))
        await asyncio.sleep(RECONNECT_SECONDS)
