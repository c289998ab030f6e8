"""Secrets never reach a log line: API keys, webhook signing secrets, the signature of a signed
download link and Authorization headers are replaced wherever they appear in a record — the
message, its fields, an exception's text — before it is rendered."""

from __future__ import annotations

import re
from collections.abc import Mapping
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
# Text none of the patterns can match is most text (every field of every access line): one
# search for what each pattern needs to start (a superset: case ignored throughout) tells it
# apart before the four substitutions run.
_ANY = re.compile(r"evk_|whsec_|signature=|\b(?:bearer|basic)\s", re.IGNORECASE)
# Fields whose whole value is a secret, whatever it looks like.
_SECRET_FIELDS = frozenset(
    {"authorization", "api_key", "secret", "signing_secret", "password", "cookie", "client_secret", "access_token"}
)
REDACTED = "[redacted]"


def redact_text(text: str) -> str:
    if _ANY.search(text) is None:
        # What the substitutions return when nothing matches: the text as a plain ``str`` (a
        # ``StrEnum`` value becomes its text, as ``re.sub`` made it).
        return text if type(text) is str else text[:]
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


# Values that hold no text, passed as they are without the (slower) abstract-class checks below.
_PLAIN = frozenset({type(None), bool, int, float})


def redact(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Mapping):
        return {k: REDACTED if str(k).lower() in _SECRET_FIELDS else redact(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def _plainly_clean(event: Mapping[str, Any]) -> bool:
    """True when ``redact(event)`` would change nothing but the container: flat plain-``str``
    keys none of them a secret field's name, values plain text or no text, and one search over
    all the text (joined by a newline, which no pattern needs to cross: a match across it only
    sends the event the long way) finds nothing. Every access line is such an event."""
    texts = []
    for key, value in event.items():
        if type(key) is not str or key.lower() in _SECRET_FIELDS:
            return False
        kind = type(value)
        if kind is str:
            texts.append(value)
        elif kind not in _PLAIN:
            return False
    return _ANY.search("\n".join(texts)) is None


def redact_fields(event: Mapping[str, Any]) -> dict[str, Any]:
    """A log line's fields as they may be written: the last step before rendering, after the
    exception became text."""
    if _plainly_clean(event):
        return dict(event)
    redacted: dict[str, Any] = redact(event)
    return redacted
