"""Waiting for an observable state, never for a fixed time: poll a probe against a deadline."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")


async def eventually(probe: Callable[[], Any], what: str, within: float = 10.0) -> Any:
    """Poll ``probe`` (plain or async) until it returns something truthy; fail naming ``what``
    at the deadline. Returns what the probe found."""
    deadline = time.monotonic() + within
    while True:
        found = probe()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {within:.0f} s waiting for {what}")
        await asyncio.sleep(0.01)


def until(probe: Callable[[], T | None], what: str, within: float = 30.0, logs: Callable[[], str] = str) -> T:
    """The blocking twin of ``eventually``, for tests that drive processes or a browser without an
    event loop: poll ``probe`` until it returns something truthy; fail naming ``what`` (and the
    output ``logs`` gives) at the deadline."""
    deadline = time.monotonic() + within
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {within:.0f} s waiting for {what}\n{logs()}")
        time.sleep(0.02)
