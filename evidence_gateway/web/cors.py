"""Cross-origin access for browser apps (GraphQL and REST alike), through Starlette's CORSMiddleware.

No origin is allowed unless listed in ``EVIDENCE_CORS_ORIGINS``: the API is called with a Bearer
key, so there are no cookies to protect, but a key typed into one site should not be usable by
scripts of every other. Credentials mode stays off for the same reason (no cookies exist).
"""

from __future__ import annotations

from starlette.middleware.cors import SAFELISTED_HEADERS, CORSMiddleware
from starlette.types import ASGIApp

from evidence_gateway.settings import Settings

# Request headers a browser app may send: the key, JSON bodies, the write-path and conditional
# headers, W3C trace context (what OpenTelemetry's browser fetch instrumentation adds) and the
# client headers Apollo Client sends on every request. A preflight naming any other header is
# refused (400) and the browser drops the request: EVIDENCE_CORS_ALLOW_HEADERS adds more.
ALLOWED_HEADERS = (
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "If-Match",
    "If-None-Match",
    "Prefer",
    "X-Request-ID",
    "traceparent",
    "tracestate",
    "baggage",
    "apollographql-client-name",
    "apollographql-client-version",
)
# Response headers its scripts may read (a browser hides all but a few safe ones otherwise).
EXPOSED_HEADERS = (
    "X-Request-ID",
    "RateLimit",
    "RateLimit-Policy",
    "Retry-After",
    "Deprecation",
    "Sunset",
    "Link",
    "ETag",
    "Location",
    "Idempotent-Replayed",
    "Preference-Applied",
    "Content-Disposition",
    "WWW-Authenticate",
)
METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE")
# Browsers cap the preflight cache (Chromium: 2 hours, Firefox: 24 hours); ask for the larger.
PREFLIGHT_MAX_AGE_SECONDS = 86_400


def allowed_headers(settings: Settings) -> list[str]:
    """The default request headers and those of ``EVIDENCE_CORS_ALLOW_HEADERS``, once each in any
    case. Starlette adds the CORS-safelisted ones (Accept, Content-Type, ...) itself."""
    chosen: dict[str, str] = {}
    for name in (*ALLOWED_HEADERS, *settings.cors_allow_header_list()):
        if name.lower() not in _SAFELISTED:
            chosen.setdefault(name.lower(), name)
    return list(chosen.values())


_SAFELISTED = frozenset(h.lower() for h in SAFELISTED_HEADERS)


def wrap(app: ASGIApp, settings: Settings) -> ASGIApp:
    """The app behind CORS: outermost, so every answer (refusals, 429s and crashes included)
    carries the headers a browser needs to read it."""
    return CORSMiddleware(
        app,
        allow_origins=settings.cors_origin_list(),
        allow_methods=METHODS,
        allow_headers=allowed_headers(settings),
        expose_headers=EXPOSED_HEADERS,
        allow_credentials=False,
        max_age=PREFLIGHT_MAX_AGE_SECONDS,
    )
