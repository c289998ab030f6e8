"""Prometheus metrics (DESIGN.md §17), in the text format at ``/metrics``.

Labels have bounded values: the route template (never the raw path, which carries ids), the
GraphQL operation name (client-chosen, so only plausible names and at most
``MAX_OPERATIONS`` of them per process; the rest count as ``other``) and the status.

With several uvicorn worker processes (``serve --workers N``) each process writes its samples
to files under ``PROMETHEUS_MULTIPROC_DIR`` (prometheus-client's multiprocess mode; ``serve``
sets it up) and any worker answering ``/metrics`` reads them all: a scrape sees the whole node.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram
from prometheus_client import multiprocess as prometheus_multiprocess
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Scope

from evidence_gateway.errors import NotFound, Unauthenticated
from evidence_gateway.web.observability.access import AccessRecord
from evidence_gateway.web.observability.multiproc import MULTIPROC_ENV
from evidence_gateway.web.observability.saturation import read_cluster

MAX_OPERATIONS = 200
_OPERATION = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_known_operations: set[str] = set()

REQUESTS = Counter(
    "evidence_http_requests",
    "HTTP requests answered, by route template (or GraphQL operation) and status.",
    ["method", "route", "operation", "status"],
)
REQUEST_SECONDS = Histogram(
    "evidence_http_request_duration_seconds",
    "Time from the request's arrival to its last byte sent.",
    ["method", "route", "operation", "status"],
)
LONG_WORK_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
CALCULATION_SECONDS = Histogram(
    "evidence_calculation_duration_seconds",
    "Calculation runs, from start to stored result, by outcome (completed, failed, interrupted).",
    ["outcome"],
    buckets=LONG_WORK_BUCKETS,
)
PACK_SECONDS = Histogram(
    "evidence_pack_generation_duration_seconds",
    "Pack generations, from snapshot to the last artifact stored, by outcome.",
    ["outcome"],
    buckets=LONG_WORK_BUCKETS,
)
WEBHOOK_ATTEMPTS = Counter(
    "evidence_webhook_delivery_attempts",
    "Webhook delivery attempts by outcome: delivered (2xx), http_error (another status), "
    "network_error (no answer: DNS, refused, timeout, blocked address).",
    ["outcome"],
)
_LONG_WORK = {"calculation run": CALCULATION_SECONDS, "pack generation": PACK_SECONDS}
WEBHOOK_SECONDS = Histogram(
    "evidence_webhook_delivery_duration_seconds",
    "Webhook delivery attempts from the send to the answer (or the failure), by endpoint and outcome. "
    "Endpoint: its id for the first EVIDENCE_METRICS_WEBHOOK_ENDPOINTS endpoints this process "
    "delivered to, 'other' for the rest.",
    ["endpoint", "outcome"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20),
)
OTHER = "other"
_known_endpoints: set[str] = set()
EVENTS_APPENDED = Counter(
    "evidence_events_appended",
    "Events committed to the event log by this process, by type.",
    ["type"],
)


def operation_label(name: str | None) -> str:
    if name is None:
        return ""
    if name in _known_operations:
        return name
    if _OPERATION.fullmatch(name) and len(_known_operations) < MAX_OPERATIONS:
        _known_operations.add(name)
        return name
    return "other"


# The two series of each label set, looked up once: ``labels()`` takes the metric's lock and
# checks every value on each call. As bounded as the labels themselves (see the module's doc).
_request_series: dict[tuple[str, str, str, str], tuple[Any, Any]] = {}


def observe_request(scope: Scope, record: AccessRecord, status: int, seconds: float) -> None:
    """The access middleware's hook, called once per answered request."""
    if scope["type"] != "http":
        return
    labels = (scope.get("method", ""), record.route, operation_label(record.graphql_operation), str(status))
    series = _request_series.get(labels)
    if series is None:
        series = _request_series[labels] = (REQUESTS.labels(*labels), REQUEST_SECONDS.labels(*labels))
    series[0].inc()
    series[1].observe(seconds)


@contextmanager
def long_work(what: str) -> Iterator[None]:
    """Times a calculation run or pack generation; the outcome is how the block ended."""
    started = time.perf_counter()
    outcome = "completed"
    try:
        yield
    except BaseException as exc:
        outcome = "failed" if isinstance(exc, Exception) else "interrupted"
        raise
    finally:
        histogram = _LONG_WORK.get(what)
        if histogram is not None:
            histogram.labels(outcome).observe(time.perf_counter() - started)


def webhook_attempt(delivered: bool, http_status: int | None) -> str:
    outcome = "delivered" if delivered else "http_error" if http_status is not None else "network_error"
    WEBHOOK_ATTEMPTS.labels(outcome).inc()
    return outcome


def endpoint_label(endpoint_id: str, most: int) -> str:
    """The endpoint's id while this process has labelled fewer than ``most`` endpoints (or this
    one already), else ``other``: at most ``most`` + 1 label values, whatever the tenants do."""
    if endpoint_id in _known_endpoints:
        return endpoint_id
    if len(_known_endpoints) < most:
        _known_endpoints.add(endpoint_id)
        return endpoint_id
    return OTHER


def webhook_delivery(endpoint_id: str, most: int, delivered: bool, http_status: int | None, seconds: float) -> None:
    """One attempt to a registered endpoint: counted by outcome, timed by endpoint and outcome."""
    outcome = webhook_attempt(delivered, http_status)
    WEBHOOK_SECONDS.labels(endpoint_label(endpoint_id, most), outcome).observe(seconds)


def events_appended(types: Iterable[str]) -> None:
    """A unit of work committed these events."""
    for name in types:
        EVENTS_APPENDED.labels(name).inc()


class _Joined(Collector):
    """Several sources as one collector, for one exposition."""

    def __init__(self, *sources: Any) -> None:
        self.sources = sources

    def collect(self) -> Iterator[Metric]:
        for source in self.sources:
            yield from source.collect()


def exposition(accept: str, *extra: Collector) -> tuple[bytes, str]:
    """All of this node's samples (this process's, or every worker's in multiprocess mode) and
    those of ``extra`` collectors, in the format the scraper asks for: Prometheus text or
    OpenMetrics, by ``Accept``."""
    encoder, content_type = choose_encoder(accept)
    source: Any = REGISTRY
    if os.environ.get(MULTIPROC_ENV):
        source = CollectorRegistry()
        prometheus_multiprocess.MultiProcessCollector(source)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Joined(source, *extra))
    return encoder(registry), content_type


def loopback_only(host: str) -> bool:
    """True when a server listening on ``host`` can be reached from this machine alone."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # "", a name, 0.0.0.0's spellings: assume the network can reach it


async def metrics_endpoint(request: Request) -> Response:
    """GET /metrics: off (404) with EVIDENCE_METRICS=false; else only for ``Authorization:
    Bearer <EVIDENCE_METRICS_TOKEN>`` (Prometheus' ``authorization`` scrape option), except on a
    server listening on loopback alone, which serves it without a token when none is set."""
    settings = request.app.state.settings
    if not settings.metrics:
        raise NotFound("not found")
    if settings.metrics_token:
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {settings.metrics_token}".encode()):
            raise Unauthenticated("missing or invalid metrics token")
    elif not loopback_only(settings.listen_host):
        raise Unauthenticated("metrics token required: this server listens beyond loopback (EVIDENCE_METRICS_TOKEN)")
    saturation = request.app.state.saturation
    saturation.cluster = await read_cluster(request.app.state.db)
    body, content_type = exposition(request.headers.get("accept", ""), saturation)
    return Response(body, headers={"Content-Type": content_type})
