"""OpenTelemetry tracing (docs/observability.md): off unless the standard OTEL_* variables ask
for it; on, each request has a server span named by its route template, and GraphQL spans
carry the operation's name."""

from __future__ import annotations

import json
import uuid
from typing import Any

import httpx
import pytest

from evidence_gateway.app import create_app
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.settings import Settings
from evidence_gateway.web.observability.tracing import requested


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
