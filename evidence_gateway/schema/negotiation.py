"""GraphQL over HTTP: which media type answers a request, and with which status.

The GraphQL-over-HTTP spec has two response media types. ``application/json`` is the legacy
one: every well-formed request answers 200, errors or not, because intermediaries cannot be
trusted to pass a 4xx body through. ``application/graphql-response+json`` lets the status tell
the truth: a document that cannot be parsed or validated, or variables that cannot be coerced
(a *request error*: nothing executed, no ``data`` entry), answers 400. A client asks for the
latter with ``Accept``; without a preference it gets the former, as the spec asks until
clients have moved over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSON = "application/json"
GRAPHQL_RESPONSE = "application/graphql-response+json"

# What a client that accepts anything is given: the type every GraphQL client reads.
_ANY = frozenset({"*/*", "application/*"})


@dataclass(frozen=True, slots=True)
class _Choice:
    quality: float
    preference: int  # ties: graphql-response+json first (it carries more information)
    media_type: str


def response_media_type(accept: str | None) -> str:
    """The response media type for an ``Accept`` header (q-values honoured; none or no match: JSON).

    A request that accepts neither type still gets JSON rather than 406: the spec allows it,
    and a GraphQL error body is more useful to a confused client than an empty refusal.
    """
    best: _Choice | None = None
    for part in (accept or "").split(","):
        media, *params = (p.strip() for p in part.split(";"))
        media = media.lower()
        if media == GRAPHQL_RESPONSE:
            choice = _Choice(_quality(params), 1, GRAPHQL_RESPONSE)
        elif media == JSON or media in _ANY:
            choice = _Choice(_quality(params), 0, JSON)
        else:
            continue
        if choice.quality > 0 and (
            best is None or (choice.quality, choice.preference) > (best.quality, best.preference)
        ):
            best = choice
    return best.media_type if best else JSON


def _quality(params: list[str]) -> float:
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "q":
            try:
                return min(max(float(value.strip()), 0.0), 1.0)
            except ValueError:
                return 0.0
    return 1.0


def content_type(media_type: str) -> str:
    return f"{media_type}; charset=utf-8"


def is_request_error(data: Any, errors: list[dict[str, Any]]) -> bool:
    """Nothing executed: no data, and no error with a path (parse, validation, coercion, refusals
    before execution). Such a response carries no ``data`` entry (spec: request errors)."""
    return data is None and bool(errors) and all("path" not in e for e in errors)


def status_for(media_type: str, request_error: bool) -> int:
    """400 for a request error under graphql-response+json; otherwise 200 (field errors included:
    a response with a ``data`` entry is 2xx under either type)."""
    return 400 if request_error and media_type == GRAPHQL_RESPONSE else 200
