"""@defer/@stream parts on the wire (schema/incremental.py says who gets them): multipart/mixed as
the GraphQL-over-HTTP incremental delivery RFC frames it (boundary "-"), text/event-stream as
graphql-sse does ("next" events, then "complete"). The first part is formatted by the view like
any answer; the later ones here, their errors through the same ``format_error``, so no part
carries an internal message. As a single answer does, the first part carries ``extensions.cost``
(and ``extensions.request_id``, for clients that cannot read headers, as EventSource) and every
error of every part its ``extensions.request_id`` (the middleware writes it into single answers
only). All parts together keep ``EVIDENCE_GRAPHQL_MAX_RESPONSE_BYTES``."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from graphql import GraphQLError
from graphql.execution import ExperimentalIncrementalExecutionResults, SubsequentIncrementalExecutionResult
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.schema import incremental
from evidence_gateway.schema.errors import format_error
from evidence_gateway.schema.rate_limit import spent
from evidence_gateway.web.request_id import request_id_of


class InParts(Exception):  # noqa: N818 - not an error: the answer, leaving Strawberry's path
    """Raised by the view with the streamed answer: Strawberry's own framing (multipart only)
    would pass the later parts' errors on unmasked."""

    def __init__(self, response: Response) -> None:
        self.response = response


_HEADERS: dict[incremental.Transport, dict[str, str]] = {
    incremental.MULTIPART: {"Content-Type": f'multipart/mixed; boundary="-"; deferSpec={incremental.DEFER_SPEC}'},
    incremental.SSE: {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
}
_END: dict[incremental.Transport, bytes] = {
    incremental.MULTIPART: b"\r\n-----\r\n",
    incremental.SSE: b"event: complete\ndata:\n\n",
}


async def response(
    request: Request,
    result: ExperimentalIncrementalExecutionResults,
    first_part: Any,
    transport: incremental.Transport,
    too_large: Callable[[bytes], Response],
) -> Response:
    """The streamed answer: ``first_part`` (the view's formatting of the initial result) with
    ``pending`` and ``hasNext``, then the later parts. A first part over the ceiling is refused
    whole by ``too_large``, as any answer over it is, and nothing more runs."""
    parts = result.subsequent_results
    settings = request.app.state.settings
    suggestions = bool(settings.graphql_introspection and settings.graphql_suggestions)
    limit: int = settings.graphql_max_response_bytes
    request_id = request_id_of(request.scope)
    paths = incremental.Paths()
    paths.announce(result.initial_result)
    first: dict[str, Any] = dict(first_part)
    if first.get("errors"):
        first["errors"] = [_identified(e, request_id) for e in first["errors"]]
    extensions = {**(first.get("extensions") or {}), **spent(request.scope)}
    first["extensions"] = {**extensions, **({"request_id": request_id} if request_id else {})}
    if not first["extensions"]:
        del first["extensions"]
    first["pending"] = [p.formatted for p in result.initial_result.pending]
    first["hasNext"] = True
    encoded = dumps(first)
    if len(encoded) > limit:
        await parts.aclose()
        return too_large(encoded)

    async def frames() -> AsyncIterator[bytes]:
        sent = len(encoded)
        yield _frame(transport, encoded)
        try:
            async for value in parts:
                body = dumps(_subsequent(value, paths, suggestions, request_id))
                sent += len(body)
                if sent > limit:
                    body = dumps(_too_large(paths, limit, suggestions, request_id))
                paths.announce(value)
                paths.retire(value)
                yield _frame(transport, body)
                if sent > limit or not value.has_next:
                    break
        finally:
            await parts.aclose()  # the fragments left are cancelled, the reads settled
        yield _END[transport]

    sub_response: Response = request.state.sub_response
    kept = {k: v for k, v in sub_response.headers.items() if k.lower() not in ("content-length", "content-type")}
    return StreamingResponse(frames(), 200, headers={**kept, **_HEADERS[transport]})


def _frame(transport: incremental.Transport, body: bytes) -> bytes:
    if transport == incremental.SSE:
        return b"event: next\ndata: " + body + b"\n\n"
    return b"\r\n---\r\nContent-Type: application/json; charset=utf-8\r\n\r\n" + body


def _identified(error: Any, request_id: str | None) -> Any:
    """A formatted error with the request's id in its extensions, as single answers carry it."""
    if not request_id or not isinstance(error, dict):
        return error
    extensions = error.get("extensions")
    return {**error, "extensions": {**(extensions if isinstance(extensions, dict) else {}), "request_id": request_id}}


def _subsequent(
    value: SubsequentIncrementalExecutionResult, paths: incremental.Paths, suggestions: bool, request_id: str | None
) -> dict[str, Any]:
    """A later part in the current format (ids, ``pending``/``completed``), each entry also with
    the ``path`` and ``label`` the 2022 format reads; every error formatted as on the first part."""
    paths.announce(value)  # an entry may belong to a fragment this same part announces

    def errors(found: list[GraphQLError] | None) -> dict[str, Any]:
        if not found:
            return {}
        return {"errors": [_identified(format_error(e, suggestions=suggestions), request_id) for e in found]}

    out: dict[str, Any] = {"hasNext": value.has_next}
    if value.pending:
        out["pending"] = [p.formatted for p in value.pending]
    if value.incremental:
        out["incremental"] = [
            {
                **{k: v for k, v in entry.formatted.items() if k != "errors"},
                **errors(entry.errors),
                "path": paths.path(entry),
                **({"label": label} if (label := paths.open.get(entry.id, ([], None))[1]) else {}),
            }
            for entry in value.incremental
        ]
    if value.completed:
        out["completed"] = [{"id": c.id, **errors(c.errors)} for c in value.completed]
    return out


def _too_large(paths: incremental.Paths, limit: int, suggestions: bool, request_id: str | None) -> dict[str, Any]:
    """The last part when the parts so far reach the response ceiling: every open fragment ends."""
    message = (
        f"the response is larger than {limit} bytes (EVIDENCE_GRAPHQL_MAX_RESPONSE_BYTES): "
        "request fewer items or fields"
    )
    error = GraphQLError(message, extensions={"code": "RESPONSE_TOO_LARGE", "limit_bytes": limit})
    formatted = _identified(format_error(error, suggestions=suggestions), request_id)
    completed = [{"id": i, "errors": [formatted]} for i in paths.open]
    return {"hasNext": False, "completed": completed}
