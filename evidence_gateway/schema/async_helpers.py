"""The resolve info's async helpers, holding their executor weakly.

graphql-core gives every executor helpers that are its own bound methods (``gather``, ``track``),
so every executor, and all it holds (the request's context, its loaders, their rows), was a
reference cycle that only a full collection freed. Under load, finished requests piled up
between full collections: megabytes of resident memory that stayed (docs/performance.md,
"Memory, third pass"). Held weakly, a request's state goes with its response. The helpers are
only called while their executor runs, so it is there whenever they are.
"""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Sequence
from typing import Any

from graphql import GraphQLResolveInfoHelpers
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext


class _Weak:
    __slots__ = ("owner",)

    def __init__(self, owner: StrawberryGraphQLCoreExecutionContext) -> None:
        self.owner = weakref.ref(owner)

    def _executor(self) -> StrawberryGraphQLCoreExecutionContext:
        executor = self.owner()
        if executor is None:
            raise RuntimeError("an executor's async helpers were called after it finished")
        return executor

    def gather(self, values: Sequence[Awaitable[Any]]) -> Awaitable[list[Any]]:
        return self._executor().gather_async_work(values)

    def track(self, values: Sequence[Any]) -> None:
        self._executor().track_async_work(values)


def weak_helpers(executor: StrawberryGraphQLCoreExecutionContext) -> GraphQLResolveInfoHelpers:
    helpers = _Weak(executor)
    return GraphQLResolveInfoHelpers(gather=helpers.gather, track=helpers.track)
