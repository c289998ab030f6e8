"""Every REST error is an ErrorResponse: domain errors, unknown routes, and crashes."""

from __future__ import annotations

import logging

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from evidence_gateway.errors import DomainError, RequestTimeout, UnsupportedMediaType
from evidence_gateway.rest_compat.http import JSONResponse

log = logging.getLogger("evidence_gateway.errors")

_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 400: "bad_request"}


async def domain_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, DomainError)
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    if isinstance(exc, UnsupportedMediaType):
        headers = {"Accept-Post": exc.accept_post}
    if isinstance(exc, RequestTimeout):
        headers = {"Connection": "close"}  # the rest of the body may still come: not a next request
    return JSONResponse(exc.body(), status_code=exc.status, headers=headers)


async def http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = {404: "not found", 405: "method not allowed"}.get(exc.status_code, str(exc.detail))
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return JSONResponse({"error": message, "details": {"code": code}}, status_code=exc.status_code, headers=exc.headers)


async def server_error(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse({"error": "internal server error", "details": {"code": "internal_error"}}, status_code=500)


handlers = {DomainError: domain_error, HTTPException: http_error, Exception: server_error}
