"""Secrets never reach a log line: API keys, webhook signing secrets, the signature of a signed
download link and Authorization headers are replaced wherever they appear in a record — the
message, its fields, an exception's text — before it is rendered."""

from __future__ import annotations

import re
from collections.abc import Mapping, MutableMapping
from typing import Any

# Keys (evk_ + 48 hex), webhook secrets (whsec_ + base64), link signatures in any query string.
# The replacements name what was there without its telltale prefix, so that a grep of a log for
# "evk_", "whsec_" or "signature=" finds nothing at all.
_PATTERNS = (
    (re.compile(r"evk_[A-Za-z0-9]*"), "[api key]"),
    (re.compile(r"whsec_[A-Za-z0-9+/=_-]*"), "[webhook secret]"),
    # Data recipients' client secrets and the access tokens (JWTs) issued for them.
    (re.compile(r"evcs_[A-Za-z0-9]*"), "[client secret]"),
    (re.compile(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*"), "[access token]"),
    (re.compile(r"signature=[^&\s\"'<>]*", re.IGNORECASE), "[link signature]"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[^\s\"',;]+"), r"\1 [credentials]"),
)
# Fields whose whole value is a secret, whatever it looks like.
_SECRET_FIELDS = frozenset(
    {"authorization", "api_key", "secret", "signing_secret", "password", "cookie", "client_secret", "access_token"}
)
REDACTED = "[redacted]"


def redact_text(text: str) -> str:
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, Mapping):
        return {k: REDACTED if str(k).lower() in _SECRET_FIELDS else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def redact_processor(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    """structlog processor: the last step before rendering, after exceptions became text."""
    redacted: Mapping[str, Any] = redact(event)
    return redacted
