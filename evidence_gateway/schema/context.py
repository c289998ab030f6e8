"""Per-request GraphQL context: the caller and the request's DataLoaders."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from starlette.requests import HTTPConnection
from starlette.responses import Response
from strawberry.dataloader import DataLoader

from evidence_gateway.auth import Principal
from evidence_gateway.core.context import Ctx
from evidence_gateway.core.idempotency import Claim
from evidence_gateway.errors import Unauthenticated
from evidence_gateway.schema.budget import ExecutionBudget
from evidence_gateway.schema.incremental import Transport
from evidence_gateway.settings import Settings
from evidence_gateway.store.db import Database
from evidence_gateway.web.request_id import request_id_of

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
R = TypeVar("R")
BatchFn = Callable[[Ctx, list[K]], Awaitable[Mapping[K, V]]]


NOT_HELD: Any = object()


@dataclass(frozen=True, slots=True)
class Relation:
    """A field that is one record of another type, named by a key column of its parent: what
    ``relation`` declares, kept on the resolver so the executor can answer the field itself
    when the record is held (schema/execution.py)."""

    batch: BatchFn[Any, Any]
    key: str
    convert: Callable[[Any], Any]


RELATION = "_evidence_relation"


def relation(
    batch: BatchFn[Any, Any], key: str, convert: Callable[[Any], Any]
) -> Callable[[Callable[..., R]], Callable[..., R]]:
    """The resolver of a to-one relation: the record whose id sits in the parent's ``key``
    column, read through the request's DataLoader for ``batch`` and made a GraphQL object by
    ``convert``. The decorated function gives the field its name, annotations and docstring;
    its body is not run."""
    declared = Relation(batch, key, convert)

    def decorate(stub: Callable[..., R]) -> Callable[..., R]:
        def resolve(self: Any, info: Any) -> Any:
            value = getattr(self, key, None)
            if value is None:
                return None
            context: GraphQLContext = info.context
            return context.related(batch, value, convert)

        functools.update_wrapper(resolve, stub)
        setattr(resolve, RELATION, declared)
        return resolve

    return decorate


@dataclass
class GraphQLContext:
    # A Request over HTTP, the WebSocket for subscriptions (schema/websocket.py): both carry
    # the headers, scope and state the fields read.
    request: HTTPConnection
    response: Response
    db: Database
    settings: Settings
    principal: Principal | None
    # Idempotency-Key held for a document that runs exactly one mutation field (schema/view.py).
    idempotency: Claim | None = None
    # Set per execution by the schema (schema/budget.py).
    execution_budget: ExecutionBudget | None = None
    # The client reads @defer/@stream parts over this transport (schema/incremental.py); None: one result.
    incremental: Transport | None = None
    _loaders: dict[Any, DataLoader[Any, Any]] = field(default_factory=dict)
    # DataLoader batches still reading (see ``settle``).
    _batches: set[asyncio.Task[Any]] = field(default_factory=set)

    @property
    def ctx(self) -> Ctx:
        """The resolver context; every data field needs a valid key, introspection does not."""
        if self.principal is None:
            raise Unauthenticated()
        return Ctx(
            db=self.db,
            settings=self.settings,
            principal=self.principal,
            request_id=request_id_of(self.request.scope),
            idempotency=self.idempotency,
        )

    def related(self, batch: BatchFn[K, V], key: K, convert: Callable[[V | None], R]) -> R:
        """One record of a relation, converted: at once when this request already holds it (a
        list prefetched it for its page), else an awaitable through the request's DataLoader.

        Answering at once keeps the field synchronous: graphql-core schedules every awaitable
        field of every item as a task, which cost more than the read itself (bench/layers.py).
        Typed as the converted value because a field's annotation names its GraphQL type, not
        the awaitable graphql-core resolves in its place.
        """
        found = self.held(batch, key)
        if found is not NOT_HELD:
            return convert(found)
        return cast(R, _converted(self.loader(batch).load(key), convert))

    def held(self, batch: BatchFn[K, V], key: K) -> Any:
        """The record of ``key`` when this request already read it (None: it does not exist),
        else ``NOT_HELD``."""
        loader = self._loaders.get(batch)
        pending = None if loader is None else loader.cache_map.get(key)
        if pending is not None and pending.done() and not pending.cancelled() and pending.exception() is None:
            return pending.result()
        return NOT_HELD

    async def settle(self) -> None:
        """Wait for the DataLoader batches still reading once the execution has ended.

        When a field fails, graphql-core cancels its siblings and the DataLoader then cancels
        their batches; the reads themselves are shielded (``loader``) and finish here, so none
        outlives its request or is cut off inside the driver. A batch is scheduled with
        ``call_soon`` and starts a step later, hence the two yields before each look. A request
        whose loaders were never asked to load (none, or primed by ``prefetch`` only) has no
        batch to wait for, and no yields either.
        """
        if all(loader.batch is None for loader in self._loaders.values()):
            return
        while True:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            reading = [task for task in self._batches if not task.done()]
            if not reading:
                return
            done, _ = await asyncio.wait(reading)
            for task in done:
                if not task.cancelled():
                    task.exception()  # seen here: no caller is left to see it

    async def prefetch(self, batch: BatchFn[K, V], keys: Iterable[K | None]) -> None:
        """Read a relation for a whole page in one batch, into the request's DataLoader."""
        loader = self.loader(batch)
        wanted = [k for k in dict.fromkeys(keys) if k is not None and loader.cache_map.get(k) is None]
        if wanted:
            found = await batch(self.ctx, wanted)
            # An absent key is primed as None, which is what a load of it answers too.
            loader.prime_many(cast(Mapping[K, V], {k: found.get(k) for k in wanted}))

    def loader(self, batch: BatchFn[K, V], default: Any = None) -> DataLoader[K, V]:
        """One DataLoader per batch function per request, named by that function."""
        existing = self._loaders.get(batch)
        if existing is not None:
            return existing
        # Not ``self``: the loader is kept here, so a closure over the context would make every
        # request's context a reference cycle, freed only by a full collection.
        ctx, batches = self.ctx, self._batches

        async def load(keys: list[K]) -> list[V]:
            # Shielded: the DataLoader cancels a batch whose callers all went away, and a
            # read cancelled inside the driver can leave its connection half closed (settle).
            reading = asyncio.ensure_future(batch(ctx, list(keys)))
            batches.add(reading)
            reading.add_done_callback(batches.discard)
            found = await asyncio.shield(reading)
            return [found.get(k, default) for k in keys]

        created: DataLoader[K, V] = DataLoader(load_fn=load)
        self._loaders[batch] = created
        return created


async def _converted(pending: Awaitable[V | None], convert: Callable[[V | None], Any]) -> Any:
    return convert(await pending)
