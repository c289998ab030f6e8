"""The JSON response both transports and the operational routes answer with.

REST envelopes, GraphiQL's 404, /healthz and /readyz render through one class, so a body
looks the same whichever door it leaves by; it lives beside the transports, not inside one.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from evidence_gateway.core.jsoncodec import dumps


class JSONResponse(Response):
    """orjson-rendered; naive datetimes are UTC and print with a ``Z``."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)
