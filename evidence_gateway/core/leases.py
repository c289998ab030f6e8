"""Leases on long work (DESIGN.md §15): who computes a run or renders a pack, until when.

The working node renews its lease every third of the lease period. A node that dies stops
renewing; the sweeper (any node) then fails the work. ``NODE_ID`` names this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import datetime, timedelta

from evidence_gateway.core.timeutil import utcnow

log = logging.getLogger(__name__)

NODE_ID = f"{socket.gethostname()[:60]}:{os.getpid()}:{secrets.token_hex(4)}"


def expiry(lease_seconds: float) -> datetime:
    return utcnow() + timedelta(seconds=lease_seconds)


@contextlib.asynccontextmanager
async def kept_alive(renew: Callable[[], Awaitable[None]], lease_seconds: float) -> AsyncIterator[None]:
    """Run the block while ``renew`` is called every third of the lease."""

    async def loop() -> None:
        while True:
            await asyncio.sleep(lease_seconds / 3)
            try:
                await renew()
            except Exception:  # a missed renewal is retried; the sweeper decides if it was too late
                log.exception("lease renewal failed")

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# Workers of this process (one per running app) waiting for queued work.
_waiting: set[asyncio.Event] = set()


def wake_workers() -> None:
    """Queued work was just committed: local workers look now instead of at their next poll."""
    for event in list(_waiting):
        event.set()


def register_waiter(event: asyncio.Event) -> None:
    _waiting.add(event)


def unregister_waiter(event: asyncio.Event) -> None:
    _waiting.discard(event)
