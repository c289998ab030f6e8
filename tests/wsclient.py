"""A small graphql-transport-ws client (the protocol GraphiQL and graphql-ws speak) for the tests
and the benchmark: connection_init with the key, subscribe, read ``next``/``error``/``complete``
per operation id, and the close code when the server closes the socket."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import AsyncIterator
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

PROTOCOL = Subprotocol("graphql-transport-ws")
LEGACY_PROTOCOL = Subprotocol("graphql-ws")


class Closed(Exception):
    """The server closed the socket (``code``, ``reason``) while an answer was awaited."""

    def __init__(self, code: int | None, reason: str) -> None:
        super().__init__(f"socket closed: {code} {reason}")
        self.code = code
        self.reason = reason


class GraphQLWS:
    """One socket; messages are sorted by operation id as they arrive."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}
        self._control: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())
        self.close_code: int | None = None
        self.close_reason = ""
        self._closed = asyncio.Event()

    @classmethod
    @contextlib.asynccontextmanager
    async def connect(
        cls,
        url: str,
        payload: dict[str, Any] | None = None,
        *,
        init: bool = True,
        subprotocols: tuple[Subprotocol, ...] = (PROTOCOL,),
        within: float = 10,
    ) -> AsyncIterator[GraphQLWS]:
        """Open the socket and (``init``) send connection_init with ``payload``, awaiting the ack."""
        async with connect(url, subprotocols=list(subprotocols), open_timeout=within, max_size=None) as ws:
            client = cls(ws)
            try:
                if init:
                    await client.init(payload, within)
                yield client
            finally:
                client._reader.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await client._reader

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                message = json.loads(raw)
                op = message.get("id")
                if op is None:
                    if message.get("type") == "ping":
                        await self.ws.send(json.dumps({"type": "pong"}))
                        continue
                    await self._control.put(message)
                else:
                    await self._queue(op).put(message)
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code
            self.close_reason = self.ws.close_reason or ""
            self._closed.set()

    def _queue(self, op: str) -> asyncio.Queue[dict[str, Any]]:
        return self._queues.setdefault(op, asyncio.Queue())

    async def send(self, message: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(message))

    async def init(self, payload: dict[str, Any] | None, within: float = 10) -> dict[str, Any]:
        message: dict[str, Any] = {"type": "connection_init"}
        if payload is not None:
            message["payload"] = payload
        await self.send(message)
        ack = await self._next(self._control, within)
        assert ack["type"] == "connection_ack", ack
        return ack

    async def subscribe(self, query: str, variables: dict[str, Any] | None = None) -> str:
        op = str(next(self._ids))
        self._queue(op)
        await self.send({"id": op, "type": "subscribe", "payload": {"query": query, "variables": variables or {}}})
        return op

    async def complete(self, op: str) -> None:
        await self.send({"id": op, "type": "complete"})

    async def message(self, op: str, within: float = 10) -> dict[str, Any]:
        """The next message of operation ``op`` (next, error or complete)."""
        return await self._next(self._queue(op), within)

    async def data(self, op: str, within: float = 10) -> dict[str, Any]:
        """The next ``next`` payload's data of ``op``; fails on anything else."""
        message = await self.message(op, within)
        assert message["type"] == "next" and not message["payload"].get("errors"), message
        data: dict[str, Any] = message["payload"]["data"]
        return data

    async def take(self, op: str, count: int, within: float = 10) -> list[dict[str, Any]]:
        """The data of the next ``count`` results of ``op``, all within ``within`` seconds."""
        async with asyncio.timeout(within):
            return [await self.data(op, within) for _ in range(count)]

    def pending(self, op: str) -> int:
        """Messages of ``op`` received and not yet read."""
        return self._queue(op).qsize()

    async def closed(self, within: float = 10) -> tuple[int | None, str]:
        """Wait for the server to close the socket: (code, reason)."""
        async with asyncio.timeout(within):
            await self._closed.wait()
        return self.close_code, self.close_reason

    async def _next(self, queue: asyncio.Queue[dict[str, Any]], within: float) -> dict[str, Any]:
        if not queue.empty():
            return queue.get_nowait()
        if self._closed.is_set():  # the reader queued everything before it set this
            raise Closed(self.close_code, self.close_reason)
        getter = asyncio.ensure_future(queue.get())
        closed = asyncio.ensure_future(self._closed.wait())
        try:
            done, _ = await asyncio.wait({getter, closed}, timeout=within, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if getter in done:
            return getter.result()
        getter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            return await getter  # it completed after all, just before the cancel
        if not queue.empty():
            return queue.get_nowait()
        if closed in done:
            raise Closed(self.close_code, self.close_reason)
        raise TimeoutError(f"no message within {within} s")
