"""No secret leaves in a span: every finished span passes through ``Scrubbing`` before its
exporter sees it, whichever instrumentation set the attribute.

Query strings (``url.full``, ``http.url``, ``http.target``, ``url.query``) keep the values of
an allow-list of harmless parameters (paging, filters); every other value becomes ``REDACTED``,
so a signed download link's ``signature`` and ``expires`` and any ``key``, ``api_key`` or
``token`` put in a URL are never exported. Every other string attribute, and those of span
events (exception messages and tracebacks), goes through the log redaction (API keys, webhook
secrets, ``Bearer`` credentials) and loses the value of any secret-looking ``name=value``.
OpenTelemetry's own URL redaction is not enough: its list (``Signature``, ``sig``, …) is
case-sensitive and does not know our parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote

from opentelemetry.context import Context
from opentelemetry.sdk.trace import Event, ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import Status

from evidence_gateway.web.observability.redaction import redact_text

REDACTED = "REDACTED"
# Parameters whose values say nothing secret: pages, cursors, filters.
ALLOWED_PARAMETERS = frozenset(
    {
        "page", "per_page", "limit", "offset", "after", "before", "first", "last", "cursor",
        "status", "type", "types", "event_type", "event_types", "workspace_id", "pack_id",
        "order", "sort", "include", "format", "since",
    }
)  # fmt: skip
URL_ATTRIBUTES = frozenset({"url.full", "http.url", "http.target", "url.query", "url.original"})
_SECRET_PAIR = re.compile(
    r"(?i)\b(signature|sig|expires|key|api_key|apikey|token|access_token|secret|password|client_secret)=[^&\s#\"']*"
)


def scrub_query(query: str) -> str:
    """``a=1&signature=ab`` -> ``a=1&signature=REDACTED``: allow-listed values kept."""
    if not query:
        return query
    pairs = parse_qsl(query, keep_blank_values=True)
    return "&".join(
        f"{quote(name, safe='')}={quote(value, safe='') if name.lower() in ALLOWED_PARAMETERS else REDACTED}"
        for name, value in pairs
    )


def scrub_url(value: str, *, query_only: bool = False) -> str:
    if query_only:
        return scrub_query(value)
    base, sep, rest = value.partition("?")
    if not sep:
        return value
    query, hash_sep, fragment = rest.partition("#")
    return f"{base}?{scrub_query(query)}" + (f"#{REDACTED}" if hash_sep else "")


def scrub_text(value: str) -> str:
    return _SECRET_PAIR.sub(lambda m: f"{m.group(1)}={REDACTED}", redact_text(value))


def scrub_attributes(attributes: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The attributes with secrets taken out, or None when there was nothing to take out."""
    if not attributes:
        return None
    changed: dict[str, Any] = {}
    for name, value in attributes.items():
        if not isinstance(value, str):
            continue
        if name in URL_ATTRIBUTES:
            clean = scrub_url(value, query_only=name == "url.query")
            clean = scrub_text(clean)
        else:
            clean = scrub_text(value)
        if clean != value:
            changed[name] = clean
    if not changed:
        return None
    return {**attributes, **changed}


class Scrubbing(SpanProcessor):
    """A span processor in front of another: spans reach it with secrets taken out."""

    def __init__(self, inner: SpanProcessor) -> None:
        self.inner = inner

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.inner.on_start(span, parent_context=parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        self.inner.on_end(scrubbed(span))

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def scrubbed(span: ReadableSpan) -> ReadableSpan:
    attributes = scrub_attributes(span.attributes)
    events = [(e, scrub_attributes(e.attributes)) for e in span.events]
    name = scrub_text(span.name)
    status = span.status
    if status.description and scrub_text(status.description) != status.description:
        status = Status(status.status_code, scrub_text(status.description))
    if attributes is None and all(a is None for _e, a in events) and name == span.name and status is span.status:
        return span
    return ReadableSpan(
        name=name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=attributes if attributes is not None else span.attributes,
        events=[e if a is None else Event(e.name, a, e.timestamp) for e, a in events],
        links=span.links,
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )
