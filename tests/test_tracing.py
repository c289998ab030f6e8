"""OpenTelemetry tracing (docs/observability.md): off unless the standard OTEL_* variables ask
for it; on, each request has a server span named by its route template, and GraphQL spans
carry the operation's name."""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from evidence_gateway.app import create_app
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.settings import Settings
from evidence_gateway.web.observability import logs, tracing
from evidence_gateway.web.observability.trace_scrub import scrub_attributes
from evidence_gateway.web.observability.tracing import requested
from tests.conftest import Api, seed_key
from tests.test_packs import calculated_workspace, generated
from tests.test_webhook_endpoints import register
from tests.waiting import eventually
from tests.webhook_receiver import running


def spans_in(text: str) -> list[dict[str, Any]]:
    decoder, found, at = json.JSONDecoder(), [], 0
    while (start := text.find("{", at)) != -1:
        span, at = decoder.raw_decode(text, start)
        found.append(span)
    return found


def test_only_the_standard_variables_switch_it_on() -> None:
    assert not requested({})
    assert not requested({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert not requested({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"})
    assert requested({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert requested({"OTEL_TRACES_EXPORTER": "console"})


async def test_requests_are_traced_with_route_and_graphql_operation(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert create_app(settings).state.tracer_provider is None  # nothing set: nothing traced
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "gateway-under-test")
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        key = await create_api_key(app.state.db, "traced")
        headers = {"Authorization": f"Bearer {key}"}
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            assert (await client.get(f"/api/v2/workspaces/{uuid.uuid4()}", headers=headers)).status_code == 404
            query = {"query": "query Traced { workspaces { pagination { total } } }"}
            assert (await client.post("/graphql", json=query, headers=headers)).status_code == 200
        app.state.tracer_provider.force_flush()
    spans = spans_in(capsys.readouterr().out)
    servers = [s for s in spans if s["kind"] == "SpanKind.SERVER"]
    assert {s["name"] for s in servers} == {"GET /api/v2/workspaces/{id}", "POST /graphql"}
    assert {s["resource"]["attributes"]["service.name"] for s in servers} == {"gateway-under-test"}
    (graphql,) = [s for s in servers if s["name"] == "POST /graphql"]
    assert graphql["attributes"]["graphql.operation.name"] == "Traced"
    assert graphql["attributes"]["graphql.operation.type"] == "query"


@pytest.fixture
def traced_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")


def _attribute_texts(span: ReadableSpan) -> list[str]:
    texts = [span.name, str(span.status.description or "")]
    for attributes in (span.attributes or {}, *(e.attributes or {} for e in span.events)):
        texts += [f"{name}={value}" for name, value in attributes.items()]
    return texts


async def test_a_request_is_traced_end_to_end_and_no_secret_is_exported(
    settings: Settings, traced_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """REST, GraphQL, a signed download and a webhook test, read back from an in-memory exporter:
    SQL, GraphQL and outgoing HTTP spans under the server spans, the receiver holds the
    ``traceparent`` of the POST's span, probes are not traced, and no attribute of any span holds
    the link's signature or the API key (put in a query string on purpose)."""
    memory = InMemorySpanExporter()
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(formatter.format(record))  # type: ignore[method-assign]
    formatter = logs.json_formatter()
    access_log = logging.getLogger("evidence_gateway.access")
    access_log.addHandler(handler)
    access_log.setLevel(logging.INFO)
    app = create_app(settings)
    tracing.add_exporter(app.state.tracer_provider, memory)
    transport = httpx.ASGITransport(app=app)
    try:
        with running() as receiver:
            async with (
                app.router.lifespan_context(app),
                httpx.AsyncClient(transport=transport, base_url="http://testserver") as http,
            ):
                api = Api(http, await seed_key(app.state.db, "traced"))
                ws = await calculated_workspace(api)
                pack = (await generated(api, ws["id"]))["data"]
                listed = await api.get(f"/api/v2/workspaces?page=1&per_page=5&api_key={api.key}&token={api.key}")
                assert listed.status_code == 200
                assert "errors" not in await api.gql("query Listed { workspaces { items { id name } } }")
                artifacts = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
                link = artifacts[0]["signed_download_url"]
                signature = parse_qs(urlsplit(link).query)["signature"][0]
                assert (await api.get(link, key=None)).status_code == 200
                sent = await api.post("/api/v2/webhooks/test", {"target_url": receiver.url, "workspace_id": ws["id"]})
                assert sent.status_code == 200, sent.text
                for probe in ("/healthz", "/readyz", "/metrics"):
                    assert (await http.get(probe)).status_code == 200
        app.state.tracer_provider.force_flush()
    finally:
        access_log.removeHandler(handler)
    spans = memory.get_finished_spans()
    servers = {s.name for s in spans if s.kind is SpanKind.SERVER}
    assert {"GET /api/v2/workspaces", "POST /graphql", "GET /api/v2/artifacts/{id}/download"} <= servers
    assert not {name for name in servers if name.split(" ")[-1] in ("/healthz", "/readyz", "/metrics")}
    sql = [s for s in spans if s.kind is SpanKind.CLIENT and (s.attributes or {}).get("db.system")]
    assert {"SELECT", "INSERT", "COMMIT"} <= {s.name for s in sql}
    server_ids = {s.context.span_id for s in spans if s.kind is SpanKind.SERVER}
    assert all(s.parent is not None for s in sql), "SQL spans only inside a traced operation"
    assert {"GraphQL Parsing", "GraphQL Validation", "GraphQL Listed"} <= {s.name for s in spans}
    (post,) = [s for s in spans if s.kind is SpanKind.CLIENT and s.name == "POST"]
    assert post.attributes is not None and post.attributes["http.response.status_code"] == 200
    (delivered,) = receiver.received
    version, trace_id, span_id, _flags = delivered.headers["traceparent"].split("-")
    assert (int(trace_id, 16), int(span_id, 16)) == (post.context.trace_id, post.context.span_id)
    assert post.parent is not None and post.parent.span_id in {s.context.span_id for s in spans}
    # Nothing secret, anywhere: attributes, events, names; the configured (console) exporter too.
    texts = [text for s in spans for text in _attribute_texts(s)]
    assert texts and server_ids
    for secret in (signature, api.key, api.key[4:]):
        assert not [t for t in texts if secret in t]
        assert secret not in capsys.readouterr().out
    download = next(s for s in spans if s.name == "GET /api/v2/artifacts/{id}/download")
    urls = [
        v for k, v in (download.attributes or {}).items() if k in ("http.url", "url.full", "http.target", "url.query")
    ]
    assert any("?expires=REDACTED&" in str(v) for v in urls), urls
    listing = next(s for s in spans if s.name == "GET /api/v2/workspaces")
    assert any("page=1&per_page=5&api_key=REDACTED" in str(v) for v in (listing.attributes or {}).values())
    # The access line of each traced request carries its trace and span ids.
    access = [json.loads(line) for line in lines if '"request"' in line]
    traced = {(a["trace_id"], a["span_id"]) for a in access if a.get("path") == "/graphql"}
    graphql_server = next(s for s in spans if s.name == "POST /graphql")
    assert (format(graphql_server.context.trace_id, "032x"), format(graphql_server.context.span_id, "016x")) in traced
    assert all("trace_id" not in a for a in access if a.get("path") in ("/healthz", "/readyz", "/metrics"))


async def test_queued_work_and_webhook_dispatch_are_traced(settings: Settings, traced_env: None) -> None:
    """Work queued with respond-async runs as a trace of its own with its SQL inside; a delivery to
    a registered endpoint is a dispatch span whose POST carries its traceparent to the receiver."""
    memory = InMemorySpanExporter()
    app = create_app(settings.model_copy(update={"background_work": True, "dispatcher": True}))
    tracing.add_exporter(app.state.tracer_provider, memory)
    with running() as receiver:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http,
        ):
            api = Api(http, await seed_key(app.state.db, "traced-work"))
            await register(api, receiver.url, event_types=["calculation.completed"])
            ws = await calculated_workspace(api)
            resp = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", headers={"Prefer": "respond-async"})
            assert resp.status_code == 202, resp.text
            await eventually(lambda: len(receiver.received) >= 2, "both calculations delivered")
            await eventually(
                lambda: any(s.name == "webhook delivery" for s in memory.get_finished_spans()), "the delivery span"
            )
    spans = memory.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    (queued,) = [s for s in spans if s.name == "queued calculation run"]
    assert queued.kind is SpanKind.CONSUMER and queued.parent is None
    assert any(s.parent is not None and s.parent.span_id == queued.context.span_id for s in spans), "no child"
    inside = [s for s in spans if s.context.trace_id == queued.context.trace_id and s.attributes.get("db.system")]
    assert {"SELECT", "INSERT"} <= {s.name for s in inside}
    deliveries = [s for s in spans if s.name == "webhook delivery"]
    posts = [s for s in spans if s.name == "POST" and s.parent is not None and s.parent.span_id in by_id]
    assert deliveries and all(by_id[p.parent.span_id].name == "webhook delivery" for p in posts if p.parent)
    sent = {(p.context.trace_id, p.context.span_id) for p in posts}
    got = set()
    for delivered in receiver.received:
        _version, trace_id, span_id, _flags = delivered.headers["traceparent"].split("-")
        got.add((int(trace_id, 16), int(span_id, 16)))
    assert got and got <= sent


def test_query_strings_keep_only_harmless_values() -> None:
    url = "https://h.example/api/v2/artifacts/1/download?expires=1700000000&signature=abc123&page=2#frag"
    scrubbed = scrub_attributes(
        {
            "url.full": url,
            "url.query": "per_page=5&token=t0k3n&API_KEY=k3y&cursor=evs",
            "http.status_code": 200,
            "exception.message": "failed POST https://x/?key=s3cret with Bearer evk_abc",
        }
    )
    assert scrubbed is not None
    assert scrubbed["url.full"] == (
        "https://h.example/api/v2/artifacts/1/download?expires=REDACTED&[link signature]&page=2#REDACTED"
    )
    assert scrubbed["url.query"] == "per_page=5&token=REDACTED&API_KEY=REDACTED&cursor=evs"
    assert scrubbed["http.status_code"] == 200
    assert "s3cret" not in scrubbed["exception.message"] and "evk_" not in scrubbed["exception.message"]
    assert scrub_attributes({"url.full": "https://h.example/a?page=1", "n": 1}) is None  # nothing to take out
