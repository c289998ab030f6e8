"""@defer and @stream (incremental delivery): who gets parts, and what the parts obey.

A query using them is answered in parts only to a client that says it reads them (``Accept:
multipart/mixed`` or ``text/event-stream``; schema/parts_http.py frames them) and only while
``EVIDENCE_GRAPHQL_INCREMENTAL_DELIVERY`` is on. Anyone else gets one complete result: the
directives are hints a service may ignore, and every client must be able to read an answer that
did (the incremental delivery edits to the GraphQL spec, §3 "@defer"). Mutations always answer
whole: an Idempotency-Key stores the complete answer.

The parts after the first run after ``EvidenceSchema.execute`` has returned, so they keep its
time budget here (the same deadline, not a new one) and end by waiting for the DataLoader reads
they started (``GraphQLContext.settle``): nothing reads for a request after its last frame.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Literal, cast

from graphql import GraphQLError
from graphql.execution import (
    CompletedResult,
    ExperimentalIncrementalExecutionResults,
    IncrementalDeferResult,
    IncrementalStreamResult,
    InitialIncrementalExecutionResult,
    SubsequentIncrementalExecutionResult,
)
from strawberry.types import ExecutionResult

Transport = Literal["multipart", "sse"]
MULTIPART: Transport = "multipart"
SSE: Transport = "sse"
# The payload format Apollo Client and the router name; a multipart/mixed without deferSpec is read as it.
DEFER_SPEC = "20220824"


def transport(accept: str | None) -> Transport | None:
    """The incremental transport an ``Accept`` header asks for, if any (q=0 excludes; the first
    listed wins among equals)."""
    best: tuple[float, Transport] | None = None
    for part in (accept or "").split(","):
        media, *params = (p.strip() for p in part.split(";"))
        named = {k.strip().lower(): v.strip().strip('"') for k, _, v in (p.partition("=") for p in params)}
        quality = _quality(named.get("q"))
        media = media.lower()
        if media == "multipart/mixed" and named.get("deferspec", DEFER_SPEC) == DEFER_SPEC:
            choice: Transport = MULTIPART
        elif media == "text/event-stream":
            choice = SSE
        else:
            continue
        if quality > 0 and (best is None or quality > best[0]):
            best = (quality, choice)
    return best[1] if best else None


def _quality(value: str | None) -> float:
    if value is None:
        return 1.0
    try:
        return min(max(float(value), 0.0), 1.0)
    except ValueError:
        return 0.0


class Paths:
    """Where each pending id delivers (``pending`` announces it, ``completed`` retires it)."""

    def __init__(self) -> None:
        self.open: dict[str, tuple[list[str | int], str | None]] = {}

    def announce(self, value: InitialIncrementalExecutionResult | SubsequentIncrementalExecutionResult) -> None:
        for pending in value.pending or ():
            self.open[pending.id] = (list(pending.path), pending.label)

    def retire(self, value: SubsequentIncrementalExecutionResult) -> None:
        for completed in value.completed or ():
            self.open.pop(completed.id, None)

    def path(self, entry: IncrementalDeferResult | IncrementalStreamResult) -> list[str | int]:
        base, _label = self.open.get(entry.id, ([], None))
        return [*base, *(entry.sub_path or ())]


def errors_of(value: SubsequentIncrementalExecutionResult) -> list[GraphQLError]:
    """Every error a subsequent part carries: in its entries and in its completed fragments."""
    found: list[GraphQLError] = []
    for entry in value.incremental or ():
        found.extend(entry.errors or ())
    for completed in value.completed or ():
        found.extend(completed.errors or ())
    return found


async def complete(results: ExperimentalIncrementalExecutionResults) -> ExecutionResult:
    """All the parts as the one result the query would have had without @defer/@stream."""
    initial = results.initial_result
    data: dict[str, Any] | None = initial.data
    errors = list(initial.errors or ())
    paths = Paths()
    paths.announce(initial)
    async for value in results.subsequent_results:
        paths.announce(value)
        for entry in value.incremental or ():
            target = _at(data, paths.path(entry))
            if isinstance(entry, IncrementalDeferResult) and isinstance(target, dict):
                _merge(target, entry.data)
            elif isinstance(entry, IncrementalStreamResult) and isinstance(target, list):
                target.extend(entry.items)
        errors.extend(errors_of(value))
        paths.retire(value)
    return ExecutionResult(data=data, errors=errors or None)


def _at(data: Any, path: list[str | int]) -> Any:
    for key in path:
        if isinstance(key, int) and isinstance(data, list) and key < len(data):
            data = data[key]
        elif isinstance(key, str) and isinstance(data, dict):
            data = data.get(key)
        else:
            return None
    return data


def _merge(target: dict[str, Any], extra: dict[str, Any]) -> None:
    for key, value in extra.items():
        held = target.get(key)
        if isinstance(held, dict) and isinstance(value, dict):
            _merge(held, value)
        else:
            target[key] = value


def within(
    results: ExperimentalIncrementalExecutionResults,
    deadline: float | None,
    timeout_error: Callable[[], GraphQLError],
    seen: Callable[[list[GraphQLError]], None],
    settle: Callable[[], Awaitable[None]],
) -> ExperimentalIncrementalExecutionResults:
    """The same parts, each awaited before ``deadline`` (past it: a last part completing every
    open fragment with ``timeout_error`` and ``hasNext: false``), their errors shown to ``seen``
    (the log of the unexpected), and the request's reads settled once the parts end, or once
    they are closed unread (the client went away, the first part was refused)."""
    parts = Parts(results, deadline, timeout_error, seen, settle)
    return ExperimentalIncrementalExecutionResults(results.initial_result, cast(Any, parts))


class Parts:
    """The subsequent parts under the query's budget (see ``within``); ``aclose`` always closes
    the source and settles, even when no part was read (a generator's ``finally`` would not run)."""

    def __init__(
        self,
        results: ExperimentalIncrementalExecutionResults,
        deadline: float | None,
        timeout_error: Callable[[], GraphQLError],
        seen: Callable[[list[GraphQLError]], None],
        settle: Callable[[], Awaitable[None]],
    ) -> None:
        self._source = results.subsequent_results
        self._deadline = deadline
        self._timeout_error = timeout_error
        self._seen = seen
        self._settle = settle
        self._paths = Paths()
        self._paths.announce(results.initial_result)
        self._ended = False
        self._closed = False
        self._timed_out = False

    def __aiter__(self) -> Parts:
        return self

    async def __anext__(self) -> SubsequentIncrementalExecutionResult:
        if self._ended:
            await self.aclose()
            raise StopAsyncIteration
        try:
            async with asyncio.timeout_at(self._deadline):
                value = await anext(self._source)
        except StopAsyncIteration:
            await self.aclose()
            raise
        except TimeoutError:
            self._timed_out = True
            error = self._timeout_error()
            value = SubsequentIncrementalExecutionResult(
                has_next=False, completed=[CompletedResult(i, [error]) for i in self._paths.open]
            )
        except BaseException:
            await self.aclose()
            raise
        self._paths.announce(value)
        self._paths.retire(value)
        self._seen(errors_of(value))
        self._ended = not value.has_next
        return value

    async def aclose(self) -> None:
        """Closing the source cancels the fragments still to run; the reads they started end
        here, unless the budget ran out: then, as for a whole query, they finish unawaited."""
        if self._closed:
            return
        self._closed = True
        try:
            await self._source.aclose()
        finally:
            if not self._timed_out:
                await self._settle()
