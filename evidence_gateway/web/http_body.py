"""Reading request bodies with a byte ceiling, shared by the REST and GraphQL transports.

Everything here runs before a resolver sees the input: the media type (REST), the size,
the nesting depth and the JSON syntax. The depth check exists because several layers
behind the parser recurse per level and fail far below what a body can carry: orjson's
encoder (rerun hashes, responses) gives up at ~255 levels, the stdlib ``json`` used by
SQLAlchemy's JSON columns and by Strawberry at ~1,000 (RecursionError), orjson's decoder at
1,024. Each of those was a 500, some after the row was written.
"""

from __future__ import annotations

import asyncio
import json
import math
from itertools import accumulate
from typing import Any

import orjson
from starlette.requests import ClientDisconnect, Request

from evidence_gateway.core.jsoncodec import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from evidence_gateway.errors import BadRequest, PayloadTooLarge, RequestTimeout, UnsupportedMediaType

# The body deadline when the request carries no app settings (a bare Starlette request).
DEFAULT_BODY_SECONDS = 60.0

# MAX_JSON_DEPTH (jsoncodec.py) counts the body object itself as level 1: a REST free-form
# object (assumptions_snapshot, extracted_metadata_json) may nest 63 levels below it, a
# GraphQL variable three fewer. Far above any real document, far below every limit above.

# Only quotes and brackets matter to nesting; [ ] count like { } (the parser checks pairing).
_STRUCTURE = bytes.maketrans(b"[]", b"{}")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_STEP = [0] * 256
_STEP[ord("{")], _STEP[ord("}")] = 1, -1
# Peeling rounds before the exact count: a flat import (rows of scalars) is gone after three.
_PEEL_ROUNDS = 4


def json_depth(raw: bytes) -> int:
    """Nesting depth of a JSON text, found with C-speed bytes operations (no parse, no recursion).

    Escaped backslashes and quotes are dropped first, so every remaining quote opens or
    closes a string; then all but quotes and brackets, then the strings themselves. On a
    50,000-row import this takes a few milliseconds, against ~40 ms for orjson to parse it.
    The answer is exact for well-formed JSON; for malformed input it may be off, but such a
    body is a 400 either way.
    """
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    s = raw.translate(_STRUCTURE, _NOT_STRUCTURE)
    if b'"' in s:
        # Adjacent quotes enclose (or separate) no bracket: dropping them keeps the pairing.
        s = s.replace(b'""', b"")
        if b'"' in s:
            s = b"".join(s.split(b'"')[::2])
    # Each round removes every innermost pair, i.e. exactly one level of a well-formed text.
    peeled = 0
    while s and peeled < _PEEL_ROUNDS:
        shorter = s.replace(b"{}", b"")
        if len(shorter) == len(s):
            break
        s, peeled = shorter, peeled + 1
    return peeled + (max(accumulate(map(_STEP.__getitem__, s))) if s else 0)


def check_json_depth(raw: bytes | str) -> None:
    """400 before any parser or resolver recurses into an over-deep document."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if json_depth(data) > MAX_JSON_DEPTH:
        raise BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", max_depth=MAX_JSON_DEPTH)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent, as a double; one too large for a double is
    refused (``1e400``), not read as infinity, which no JSON writer or database column keeps.
    The stdlib parsers' ``parse_float``: REST's fallback here and GraphQL's body reader."""
    value = float(text)
    if math.isinf(value):
        raise BadRequest(f"malformed JSON body: the number {text[:40]} is too large (not a finite double)")
    return value


# A number of 19 digits or more may lie beyond 64 bits, which orjson reads as a double without a
# word (below -2**63, above 2**64 - 1); such a body is read again with exact integers. A number
# follows ":", "[" or "," (white space dropped): with digits and "-" as "0" and those three as
# ":", such a number is ":" and 19 zeros. Digits inside strings rarely follow one of them, and
# when they do it only costs the exact re-read.
_NUMBER_STARTS = bytes(48 if (48 <= b <= 57 or b == 45) else 58 if b in b":[," else 32 for b in range(256))
_LONG_NUMBER = b":" + b"0" * 19


def may_hold_a_long_integer(raw: bytes) -> bool:
    # translate() and a substring search run at C speed (a tenth of orjson's parse of the body).
    return _LONG_NUMBER in raw.translate(_NUMBER_STARTS, b" \t\r\n")


def loads(raw: bytes) -> Any:
    """Parse a JSON body: depth first, then orjson; 400 for anything that is not JSON.

    Two kinds of body are re-read with the stdlib parser, so that the shared input rule
    (resolvers/validation.py ``json_problems``) sees what the client sent and refuses it with
    422 naming the field, as GraphQL does: lone surrogate escapes (``"\\ud800"``), which
    JSON's grammar allows (RFC 8259 §8.2) and orjson refuses; and integers of 19 digits or
    more, which orjson turns into doubles beyond 64 bits (``123456789012345678901234567890``
    would be stored as ``1.2345678901234568e+29``). A number too large for a double
    (``1e400``) is a 400 on either parser.
    """
    check_json_depth(raw)
    try:
        parsed = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        # "infinity": 1e400, re-read for a message naming the number, as GraphQL's.
        if "surrogate" not in str(exc) and "infinity" not in str(exc):
            raise BadRequest("malformed JSON body") from None
    else:
        if not may_hold_a_long_integer(raw):
            return parsed
    try:
        return json.loads(raw.decode("utf-8", "surrogatepass"), parse_constant=_no_constant, parse_float=finite_float)
    except (ValueError, RecursionError):
        raise BadRequest("malformed JSON body") from None


def is_json_media_type(content_type: str) -> bool:
    """``application/json`` or ``application/<anything>+json``, any parameters, any case."""
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json"))


def require_json_content_type(request: Request) -> None:
    """415 for a body declared as anything but JSON; a request without Content-Type is read as JSON.

    Declared types are taken at their word, so a form or text/plain post that happens to
    contain JSON creates nothing. No header at all is read leniently: RFC 9110 §8.3 lets the
    recipient examine the data, scripts that forget the header keep working, and it opens no
    cross-site path — every call needs an Authorization header, which browsers never send
    cross-origin without a CORS preflight.
    """
    declared = request.headers.get("content-type", "").strip()
    if declared and not is_json_media_type(declared):
        raise UnsupportedMediaType("request body must be JSON (Content-Type: application/json)")


def _body_seconds(request: Request) -> float:
    settings = getattr(getattr(request.scope.get("app"), "state", None), "settings", None)
    return float(getattr(settings, "body_timeout_seconds", DEFAULT_BODY_SECONDS))


async def read_body(request: Request, limit: int) -> bytes:
    """Refuses early on Content-Length, and again while streaming (chunked bodies lie); 408 when
    the whole body has not arrived within EVIDENCE_BODY_TIMEOUT_SECONDS, so a client trickling
    (or withholding) its body cannot hold a connection and a request slot for ever."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge("request body too large", limit_bytes=limit)
    chunks: list[bytes] = []
    size = 0
    seconds = _body_seconds(request)
    try:
        async with asyncio.timeout(seconds):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLarge("request body too large", limit_bytes=limit)
                chunks.append(chunk)
    except ClientDisconnect:
        # The client left mid-body: nobody reads the answer, and it is not a server fault.
        raise BadRequest("client disconnected before the body was complete") from None
    except TimeoutError:
        raise RequestTimeout(f"request body not received within {seconds:g} s", timeout_seconds=seconds) from None
    return b"".join(chunks)


async def read_json_object(request: Request, limit: int, *, required: bool = True) -> dict[str, Any]:
    """415 for a non-JSON Content-Type (before reading), 400 for malformed, too deep or non-object
    JSON; an absent optional body reads as {}."""
    require_json_content_type(request)
    raw = await read_body(request, limit)
    if not raw.strip():
        if required:
            raise BadRequest("request body required: a JSON object")
        return {}
    data = loads(raw)
    if not isinstance(data, dict):
        raise BadRequest("request body must be a JSON object")
    return data


def replayed(request: Request, body: bytes) -> Request:
    """The same request with its body already read (under a ceiling), readable once more."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return Request(request.scope, receive)
