"""Named points inside long work where tests interleave other requests or kill the process.

In production nothing is registered and ``reached`` returns at once. Tests in-process register
hooks (a barrier); tests of a real process set ``EVIDENCE_PAUSE_AT`` so the work blocks at that
point for good, which makes "kill it mid-work" deterministic instead of a race against a timer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Hook = Callable[[], Awaitable[None]]
_hooks: dict[str, list[Hook]] = {}

CALCULATION_STARTED = "calculation.started"
CALCULATION_COMPUTED = "calculation.computed"
PACK_ALLOCATED = "pack.allocated"
PACK_ARTIFACT_STORED = "pack.artifact_stored"
IMPORT_STORED = "import.stored"


async def reached(name: str, pause_at: str = "") -> None:
    if pause_at and pause_at == name:
        log.warning("paused at checkpoint %s (EVIDENCE_PAUSE_AT)", name)
        await asyncio.Event().wait()
    for hook in list(_hooks.get(name, ())):
        await hook()


def install(name: str, hook: Hook) -> Callable[[], None]:
    """Register ``hook`` at ``name``; returns the function that removes it."""
    _hooks.setdefault(name, []).append(hook)

    def remove() -> None:
        _hooks[name].remove(hook)

    return remove
