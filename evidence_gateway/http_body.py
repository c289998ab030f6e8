"""Reading request bodies with a byte ceiling, shared by the REST and GraphQL transports."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from evidence_gateway.errors import BadRequest, PayloadTooLarge


async def read_body(request: Request, limit: int) -> bytes:
    """Refuses early on Content-Length, and again while streaming (chunked bodies lie)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge("request body too large", limit_bytes=limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge("request body too large", limit_bytes=limit)
            chunks.append(chunk)
    except ClientDisconnect:
        # The client left mid-body: nobody reads the answer, and it is not a server fault.
        raise BadRequest("client disconnected before the body was complete") from None
    return b"".join(chunks)


async def read_json_object(request: Request, limit: int, *, required: bool = True) -> dict[str, Any]:
    """400 for malformed JSON or a non-object; an absent optional body reads as {}."""
    raw = await read_body(request, limit)
    if not raw.strip():
        if required:
            raise BadRequest("request body required: a JSON object")
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise BadRequest("malformed JSON body") from None
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    return data
