"""OpenTelemetry tracing, switched on by the standard ``OTEL_*`` variables and nothing else:
``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``; ``none`` is off) or an OTLP endpoint
(``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``); ``OTEL_SDK_DISABLED=true``
wins. The exporter, service name and resource attributes follow the SDK's own variables.

Off, it costs nothing: OpenTelemetry is not even imported (it is the optional ``otel`` extra).
On, every request gets a server span from the Starlette instrumentation, and GraphQL spans carry
the operation's name and type.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.routing import BaseRoute
from starlette.types import Scope

from evidence_gateway.web.observability.access import route_template

log = logging.getLogger(__name__)

# Set once tracing is on in this process: the GraphQL extension then annotates spans.
active = False


def requested(environ: Mapping[str, str]) -> bool:
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER")
    if exporters is not None:
        return exporters.strip().lower() not in ("", "none")
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def instrument(app: Starlette, environ: Mapping[str, str] = os.environ) -> Any:
    """The tracer provider serving ``app``, or None when tracing is off or not installed."""
    global active
    if not requested(environ):
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.instrumentation.starlette import StarletteInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
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
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    StarletteInstrumentor.instrument_app(
        app, tracer_provider=provider, server_request_hook=partial(_name_by_route, app.routes)
    )
    active = True
    return provider


def _name_by_route(routes: list[BaseRoute], span: Any, scope: Scope) -> None:
    """The instrumentation names spans of mounted routes by the mount alone ("GET /api"): name
    them by the whole route template, as the access log and the metrics do."""
    if span is None or not span.is_recording() or scope.get("type") != "http":
        return
    template = route_template(routes, dict(scope))
    if template is not None:
        span.update_name(f"{scope.get('method', '')} {template}")
        span.set_attribute("http.route", template)


def annotate_graphql(operation: str | None, kind: str | None) -> None:
    from opentelemetry import trace

    span = trace.get_current_span()
    if operation is not None:
        span.set_attribute("graphql.operation.name", operation)
    if kind is not None:
        span.set_attribute("graphql.operation.type", kind)
