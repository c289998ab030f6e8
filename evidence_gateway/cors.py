"""Cross-origin access for browser apps (GraphQL and REST alike), through Starlette's CORSMiddleware.

No origin is allowed unless listed in ``EVIDENCE_CORS_ORIGINS``: the API is called with a Bearer
key, so there are no cookies to protect, but a key typed into one site should not be usable by
scripts of every other. Credentials mode stays off for the same reason (no cookies exist).
"""

from __future__ import annotations

from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp

from evidence_gateway.settings import Settings

# Request headers a browser app may send: the key, JSON bodies, and the write-path headers.
ALLOWED_HEADERS = ("Authorization", "Content-Type", "Idempotency-Key", "If-Match", "Prefer", "X-Request-ID")
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
    "WWW-Authenticate",
)
METHODS = ("GET", "POST", "PATCH", "PUT", "DELETE")
# Browsers cap the preflight cache (Chromium: 2 hours, Firefox: 24 hours); ask for the larger.
PREFLIGHT_MAX_AGE_SECONDS = 86_400


def wrap(app: ASGIApp, settings: Settings) -> ASGIApp:
    """The app behind CORS: outermost, so every answer (refusals, 429s and crashes included)
    carries the headers a browser needs to read it."""
    return CORSMiddleware(
        app,
        allow_origins=settings.cors_origin_list(),
        allow_methods=METHODS,
        allow_headers=ALLOWED_HEADERS,
        expose_headers=EXPOSED_HEADERS,
        allow_credentials=False,
        max_age=PREFLIGHT_MAX_AGE_SECONDS,
    )
