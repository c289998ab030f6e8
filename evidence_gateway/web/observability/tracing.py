"""OpenTelemetry tracing, switched on by the standard ``OTEL_*`` variables and nothing else:
``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``; ``none`` is off) or an OTLP endpoint
(``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``); ``OTEL_SDK_DISABLED=true``
wins. The exporter, service name and resource attributes follow the SDK's own variables.

Off, it costs nothing: OpenTelemetry is not even imported (it is the optional ``otel`` extra),
the middleware stack is unchanged and every hook below is one test of ``active``.
On, every request but the probes and ``/metrics`` gets a server span, outermost (the access
line and the rate limiter's refusals are inside it); SQL statements, GraphQL phases, outgoing
webhook requests and background work get child spans (store/trace_sql.py, graphql.py, webhooks/);
every span goes through the scrubber (trace_scrub.py) before any exporter sees it.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager, nullcontext
from functools import partial
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Scope

# Light at load (the log configuration imports it for ``log_ids``): no web framework here.
log = logging.getLogger(__name__)

# Set while a traced app runs in this process: the hooks then make spans.
active = False
_tracer: Any = None
_tracer_provider: Any = None
# opentelemetry's API modules, kept once imported: the hooks run on every request while on.
_trace: Any = None
_propagate: Any = None

# Probes and the scrape are polled every few seconds by machines: traces of them are noise.
UNTRACED_PATHS = r"^[a-z]+://[^/]+/(healthz|readyz|metrics)/?(\?.*)?$"


def requested(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER")
    if exporters is not None:
        return exporters.strip().lower() not in ("", "none")
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def instrument(db: Any, environ: Mapping[str, str] = os.environ) -> Any:
    """The tracer provider of an app on ``db`` (its engines get SQL spans), or None when
    tracing is off or not installed. ``wrap`` puts the server spans around the app."""
    global active, _tracer, _trace, _propagate, _tracer_provider
    if not requested(environ):
        return None
    try:
        from opentelemetry import propagate, trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

        from evidence_gateway.store import trace_sql
        from evidence_gateway.web.observability import trace_scrub
    except ImportError:
        log.warning("OTEL_* variables ask for tracing, but the 'otel' extra is not installed: no traces")
        return None
    attributes = {} if environ.get("OTEL_SERVICE_NAME") else {"service.name": "evidence-gateway"}
    provider = TracerProvider(resource=Resource.create(attributes))
    names = [n.strip().lower() for n in environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if n.strip()]
    for name in names:
        exporter: SpanExporter
        if name == "console":
            exporter = ConsoleSpanExporter(out=sys.stdout)  # the stream of now, not of import time
        elif name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter()  # OTEL_EXPORTER_OTLP_* say where and how
        else:
            log.warning("unknown OTEL_TRACES_EXPORTER %r ignored (otlp and console are supported)", name)
            continue
        provider.add_span_processor(trace_scrub.Scrubbing(BatchSpanProcessor(exporter)))
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        trace.set_tracer_provider(provider)  # for libraries that trace on their own; once a process
    _trace, _propagate, _tracer_provider = trace, propagate, provider
    _tracer = provider.get_tracer("evidence_gateway")
    trace_sql.instrument(db, _tracer)
    active = True
    return provider


def provider() -> Any:
    """The tracer provider of the traced app running in this process (None: tracing is off)."""
    return _tracer_provider


def add_exporter(provider: Any, exporter: Any) -> None:
    """Another exporter on ``provider``, behind the scrubber like the configured ones (tests
    read spans from an in-memory exporter this way)."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from evidence_gateway.web.observability import trace_scrub

    provider.add_span_processor(trace_scrub.Scrubbing(SimpleSpanProcessor(exporter)))


def shutdown(provider: Any) -> None:
    """The app stops: the spans still buffered go out, and the hooks go quiet."""
    global active, _tracer, _tracer_provider
    active, _tracer, _tracer_provider = False, None, None
    from evidence_gateway.store import trace_sql

    trace_sql.stop()
    provider.shutdown()


def wrap(app: ASGIApp, route_of: Callable[[Scope], str | None], provider: Any) -> ASGIApp:
    """``app`` inside the server spans' middleware (``provider`` None: ``app`` itself); spans are
    named by ``route_of`` (the route template of a request)."""
    if provider is None:
        return app
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
    from opentelemetry.util.http import ExcludeList

    return OpenTelemetryMiddleware(
        app,
        excluded_urls=ExcludeList([UNTRACED_PATHS]),
        server_request_hook=partial(_name_by_route, route_of),
        tracer_provider=provider,
        exclude_spans=["receive", "send"],  # a span per ASGI message says nothing an operator needs
    )


def _name_by_route(route_of: Callable[[Scope], str | None], span: Any, scope: Scope) -> None:
    """Spans named by the whole route template, as the access log and the metrics name them."""
    if span is None or not span.is_recording() or scope.get("type") != "http":
        return
    template = route_of(scope)
    if template is not None:
        span.update_name(f"{scope.get('method', '')} {template}")
        span.set_attribute("http.route", template)


def annotate_graphql(operation: str | None, kind: str | None) -> None:
    span = _trace.get_current_span()
    if operation is not None:
        span.set_attribute("graphql.operation.name", operation)
    if kind is not None:
        span.set_attribute("graphql.operation.type", kind)


@contextmanager
def _span(name: str, kind: str, attributes: Mapping[str, Any] | None) -> Iterator[Any]:
    with _tracer.start_as_current_span(name, kind=_trace.SpanKind[kind.upper()], attributes=attributes) as current:
        yield current


def span(name: str, *, kind: str = "internal", attributes: Mapping[str, Any] | None = None) -> Any:
    """A context manager: a span around background work, a dispatch or an outgoing call while
    tracing is on (yielding it), nothing at all (yielding None) while it is off."""
    if not active:
        return nullcontext()
    return _span(name, kind, attributes)


def note_outcome(span: Any, http_status: int | None, error: str | None) -> None:
    """An outgoing call's answer on its span: the status, and an error status when it failed."""
    if http_status is not None:
        span.set_attribute("http.response.status_code", http_status)
    if error is not None:
        span.set_status(_trace.Status(_trace.StatusCode.ERROR, error))


def inject(headers: MutableMapping[str, str]) -> None:
    """The current span's ``traceparent`` (W3C Trace Context) into outgoing ``headers``."""
    if active:
        _propagate.inject(headers)


def log_ids(event: MutableMapping[str, Any]) -> None:
    """The current span's ``trace_id`` and ``span_id`` (hex, as exporters and trace viewers
    show them) on every log line written inside one (fields of its own of those names win)."""
    if active:
        context = _trace.get_current_span().get_span_context()
        if context.is_valid:
            event.setdefault("trace_id", format(context.trace_id, "032x"))
            event.setdefault("span_id", format(context.span_id, "016x"))
