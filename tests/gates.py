"""Barriers at the checkpoints of long work: interleavings made deterministic, never timed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator

import pytest

from evidence_gateway.core import checkpoints


class Gate:
    """Holds the first ``times`` arrivals at a checkpoint until ``open()``; later ones pass."""

    def __init__(self, times: int) -> None:
        self.remaining = times
        self.reached = asyncio.Event()
        self._open = asyncio.Event()

    async def hook(self) -> None:
        if self.remaining == 0:
            return
        self.remaining -= 1
        self.reached.set()
        await self._open.wait()

    async def wait_reached(self) -> None:
        await asyncio.wait_for(self.reached.wait(), timeout=30)

    def open(self) -> None:
        self._open.set()


@pytest.fixture
def gate() -> Iterator[Callable[..., Gate]]:
    removers: list[Callable[[], None]] = []
    gates: list[Gate] = []

    def at(name: str, *, times: int = 1) -> Gate:
        made = Gate(times)
        removers.append(checkpoints.install(name, made.hook))
        gates.append(made)
        return made

    yield at
    for made in gates:
        made.open()
    for remove in removers:
        remove()
