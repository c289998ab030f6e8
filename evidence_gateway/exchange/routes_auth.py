"""PACT §6.3 authentication: ``POST /auth/token`` (RFC 6749 §4.4 client credentials), the OpenID
provider configuration that names it, and the JWKS its tokens verify with.

Errors here are RFC 6749 §5.2's (``{"error": "invalid_client", "error_description": …}``), as
PACT says the token endpoint's are, not PACT's own error bodies. Wrong credentials answer 401
with ``WWW-Authenticate: Basic`` (RFC 6749 §5.2, the client used Basic auth), which the edge's
rate limiter counts against the client address like any failed authentication.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any
from urllib.parse import parse_qs, unquote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from evidence_gateway.errors import DomainError
from evidence_gateway.exchange import auth, host
from evidence_gateway.web.http_body import read_body
from evidence_gateway.web.json_response import JSONResponse

# A token request is a few form fields.
TOKEN_BODY_LIMIT = 16 * 1024
JWKS_PATH = "/.well-known/jwks.json"
TOKEN_PATH = "/auth/token"


def issuer(request: Request) -> str:
    """The tokens' issuer and the base of the discovery document: the instance's public URL."""
    return str(request.app.state.settings.public_base_url).rstrip("/")


def _oauth_error(status: int, error: str, description: str, **headers: str) -> Response:
    return JSONResponse(
        {"error": error, "error_description": description},
        status_code=status,
        headers={"Cache-Control": "no-store", **headers},
    )


def _basic(header: str | None) -> tuple[str, str] | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    # RFC 6749 §2.3.1: both are form-urlencoded before they are joined.
    return (unquote(user), unquote(password)) if sep else None


async def token(request: Request) -> Response:
    """Action Authenticate: an access token for a recipient's client id and secret."""
    try:
        raw = await read_body(request, TOKEN_BODY_LIMIT)
    except DomainError as exc:
        return _oauth_error(exc.status if exc.status in (408, 413) else 400, "invalid_request", exc.message)
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != "application/x-www-form-urlencoded":
        return _oauth_error(400, "invalid_request", "the body must be application/x-www-form-urlencoded")
    try:
        form = parse_qs(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        return _oauth_error(400, "invalid_request", "the body is not UTF-8")
    grant = form.get("grant_type", [""])
    if len(grant) != 1 or not grant[0]:
        return _oauth_error(400, "invalid_request", "grant_type is required")
    if grant[0] != "client_credentials":
        return _oauth_error(400, "unsupported_grant_type", "only grant_type=client_credentials is supported")
    basic = _basic(request.headers.get("authorization"))
    posted = (form.get("client_id", [""])[0], form.get("client_secret", [""])[0])
    credentials = basic or (posted if all(posted) else None)
    if credentials is None:
        return _refused(request, "client authentication required (HTTP Basic with the client id and secret)")
    client_id, secret = credentials
    recipient = await host.authenticate_client(request.app.state.db, client_id, secret)
    if recipient is None:
        return _refused(request, "client authentication failed")
    ttl = int(request.app.state.settings.pact_token_ttl_seconds)
    keys: auth.TokenKeys = request.app.state.exchange_keys
    access_token = await keys.issue(
        issuer=issuer(request),
        recipient_id=recipient.recipient_id,
        org_id=recipient.org_id,
        client_id=recipient.client_id,
        ttl=ttl,
    )
    host.note_caller(recipient)
    body = {"access_token": access_token, "token_type": "Bearer", "expires_in": ttl}
    return JSONResponse(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})


def _refused(request: Request, description: str) -> Response:
    return _oauth_error(401, "invalid_client", description, **{"WWW-Authenticate": 'Basic realm="pact"'})


async def openid_configuration(request: Request) -> Response:
    """OpenID Provider Configuration Document: where to get a token and the keys that verify it."""
    base = issuer(request)
    document: dict[str, Any] = {
        "issuer": base,
        "token_endpoint": base + TOKEN_PATH,
        "jwks_uri": base + JWKS_PATH,
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "response_types_supported": ["token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [auth.ALGORITHM],
        "token_endpoint_auth_signing_alg_values_supported": [auth.ALGORITHM],
    }
    return JSONResponse(document, headers={"Cache-Control": "public, max-age=300"})


async def jwks(request: Request) -> Response:
    """The public key access tokens are signed with (RFC 7517)."""
    keys: auth.TokenKeys = request.app.state.exchange_keys
    return JSONResponse(await keys.jwks(), headers={"Cache-Control": "public, max-age=300"})


routes: list[BaseRoute] = [
    Route(TOKEN_PATH, token, methods=["POST"]),
    Route("/.well-known/openid-configuration", openid_configuration, methods=["GET"]),
    Route(JWKS_PATH, jwks, methods=["GET"]),
]
