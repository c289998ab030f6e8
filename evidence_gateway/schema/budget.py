"""The execution time budget of a GraphQL query (``EVIDENCE_GRAPHQL_EXECUTION_SECONDS``).

Armed only once the operation is known to be a query (schema/limits.py ``OperationChecks``):
stopping a read loses nothing, whereas a mutation stopped after its commit would tell the
client it failed when it did not. Mutations are bounded by their own statements instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from graphql import GraphQLError
from strawberry.types import ExecutionResult

TIMEOUT = "QUERY_TIMEOUT"


class ExecutionBudget:
    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._timeout: asyncio.Timeout | None = None
        self.reading = False  # the document runs a query (only a query may answer in parts)

    @asynccontextmanager
    async def scope(self) -> AsyncIterator[None]:
        async with asyncio.timeout(None) as timeout:
            self._timeout = timeout
            yield

    def reads_only(self) -> None:
        """The document runs a query: from now on it has ``seconds`` to finish."""
        self.reading = True
        if self._timeout is not None and self.seconds is not None:
            self._timeout.reschedule(asyncio.get_running_loop().time() + self.seconds)

    def deadline(self) -> float | None:
        """When the query must have ended (the loop's clock): the parts @defer/@stream send
        after the first keep it (schema/incremental.py)."""
        return None if self._timeout is None else self._timeout.when()

    def exceeded(self) -> ExecutionResult:
        return ExecutionResult(data=None, errors=[self.error()])

    def error(self) -> GraphQLError:
        message = (
            f"the query ran longer than its budget of {self.seconds} s "
            "(EVIDENCE_GRAPHQL_EXECUTION_SECONDS): request fewer items or fields"
        )
        return GraphQLError(message, extensions={"code": TIMEOUT})
