"""JSON logs (DESIGN.md §17) of a real `evidence-gateway serve` running the README's flow:
every stderr line is one JSON object; each request has exactly one access line with its request
id, organisation, key prefix, route template or GraphQL operation, status and duration; the demo
key goes to stdout only; no key, webhook secret or link signature is written to the log."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from evidence_gateway.web.observability.logs import json_formatter
from tests.conftest import Api
from tests.serve_process import Database, Node, database
from tests.test_crash_safety import ROWS
from tests.webhook_receiver import Receiver, running

pytestmark = pytest.mark.slow
__all__ = ["database"]  # the fixture, re-exported for this module's tests

FAKE_KEY = "evk_" + "ab" * 24


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running() as r:
        yield r


class Flow:
    """The README's requests, each with its own X-Request-ID and the access line it expects."""

    def __init__(self, base: str, key: str) -> None:
        self.base, self.key = base, key
        self.expected: dict[str, dict[str, Any]] = {}

    def call(self, method: str, path: str, route: str, status: int, *, auth: bool = True, **kw: Any) -> Any:
        rid = f"readme-{len(self.expected)}"
        headers = {"X-Request-ID": rid, **kw.pop("headers", {})}
        if auth:
            headers["Authorization"] = f"Bearer {self.key}"
        url = path if path.startswith("http") else self.base + path
        resp = httpx.request(method, url, headers=headers, timeout=60, **kw)
        assert resp.status_code == status, resp.text
        assert "server" not in resp.headers  # no banner (uvicorn's is switched off)
        self.expected[rid] = {"method": method, "route": route, "status": status, "authed": auth}
        return resp.json() if resp.headers.get("content-type", "").startswith("application/json") else resp


def test_the_readme_flow_logs_one_json_line_per_request_and_no_secret(
    database: Database, tmp_path: Path, receiver: Receiver
) -> None:
    node = Node(database, tmp_path, env={"EVIDENCE_WEBHOOK_ALLOW_PRIVATE_TARGETS": "true"})
    node.start()
    try:
        key_line = [line for line in node.stdout().splitlines() if line.startswith("evk_")]
        assert len(key_line) == 1, node.output()
        flow = Flow(node.base, key_line[0])
        ws = flow.call(
            "POST", "/api/v2/workspaces", "/api/v2/workspaces", 201,
            json={"name": "EU road", "reporting_period_start": "2025-01-01", "reporting_period_end": "2025-12-31"},
        )["data"]  # fmt: skip
        ws_route = "/api/v2/workspaces/{id}"
        flow.call("POST", f"/api/v2/workspaces/{ws['id']}/imports", ws_route + "/imports", 201,
                  json={"source_row_count": 3, "shipments": ROWS})  # fmt: skip
        flow.call("POST", f"/api/v2/workspaces/{ws['id']}/calculate", ws_route + "/calculate", 200, json={})
        pack = flow.call("POST", f"/api/v2/workspaces/{ws['id']}/packs", ws_route + "/packs", 201, json={})["data"]
        artifacts = flow.call("GET", f"/api/v2/packs/{pack['id']}/artifacts", "/api/v2/packs/{id}/artifacts", 200)
        link = artifacts["data"][0]["signed_download_url"]
        assert "signature=" in link
        flow.call("GET", link, "/api/v2/artifacts/{id}/download", 200, auth=False)
        flow.call("POST", "/api/v2/evidence-items", "/api/v2/evidence-items", 201,
                  json={"evidence_type": "fuel_receipt", "title": "Diesel March", "file_name": "r-0317.pdf",
                        "file_url": "https://files.example.com/r-0317.pdf", "workspace_id": ws["id"]})  # fmt: skip
        flow.call("POST", "/api/v2/webhooks/test", "/api/v2/webhooks/test", 200,
                  json={"target_url": receiver.url, "workspace_id": ws["id"]})  # fmt: skip
        endpoint = flow.call("POST", "/api/v2/webhook-endpoints", "/api/v2/webhook-endpoints", 201,
                             json={"url": receiver.url, "event_types": ["pack.generated"]})["data"]  # fmt: skip
        assert endpoint["secret"].startswith("whsec_")
        viewer = flow.call("POST", "/graphql", "/graphql", 200,
                           json={"query": "query WhoAmI { viewer { webhookSigningSecret } }"})  # fmt: skip
        assert viewer["data"]["viewer"]["webhookSigningSecret"].startswith("whsec_")
        # Secrets where a request puts them into the log's reach: the path, a wrong key.
        flow.call("GET", f"/api/v2/workspaces/{FAKE_KEY}?signature=abc", ws_route, 404)
        flow.call("GET", "/whsec_c2VjcmV0", "unmatched", 404, auth=False)
        flow.call("GET", "/api/v2/workspaces", "/api/v2/workspaces", 401, auth=False,
                  headers={"Authorization": f"Bearer {FAKE_KEY}"})  # fmt: skip
    finally:
        node.stop()

    lines = node.log_lines()
    access = [line for line in lines if line.get("logger") == "evidence_gateway.access"]
    for rid, want in flow.expected.items():
        (line,) = [a for a in access if a["request_id"] == rid]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z", line["timestamp"])
        assert line["level"] == "info" and line["event"] == "request"
        assert (line["method"], line["route"], line["status"]) == (want["method"], want["route"], want["status"])
        assert isinstance(line["duration_ms"], float | int) and line["duration_ms"] >= 0
        assert "?" not in line["path"]
        if want["authed"]:
            assert line["key_prefix"] == flow.key[4:12], line
        else:
            assert line["org"] is None and line["key_prefix"] is None
    assert len({a["org"] for a in access if a["request_id"] in flow.expected and a["org"]}) == 1  # the demo's
    graphql = [a for a in access if a["route"] == "/graphql"]
    assert [g["graphql_operation"] for g in graphql] == ["WhoAmI"]
    # Only the probes of the start-up wait besides the flow's own requests.
    assert {a["route"] for a in access if a["request_id"] not in flow.expected} <= {"/healthz"}

    log = node.stderr()
    for secret in ("evk_", "whsec_", "signature=", flow.key[12:]):
        assert secret not in log, secret
    assert "[api key]" in log and "[webhook secret]" in log
    assert f"Bearer {FAKE_KEY}" not in log
    # The terminal got the key, alone on its line, and nothing else of it.
    assert node.stdout().count("evk_") == 1


async def test_a_crash_is_logged_once_with_its_request_id_and_redacted(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def boom(*_a: Any, **_k: Any) -> Any:
        raise RuntimeError(f"lost {FAKE_KEY} and whsec_abc= at /download?x=1&signature=0f0f")

    monkeypatch.setattr("evidence_gateway.resolvers.workspaces.list_workspaces", boom)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(json_formatter())
    root, level = logging.getLogger(), logging.getLogger().level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        resp = await api.get("/api/v2/workspaces", headers={"X-Request-ID": "crash-log"})
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert resp.status_code == 500
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    mine = [line for line in lines if line.get("request_id") == "crash-log"]
    errors = [line for line in mine if line["level"] == "error"]
    assert len(errors) == 1 and "RuntimeError" in errors[0]["exception"]
    assert errors[0]["key_prefix"] == api.key[4:12]  # bound for every line of the request
    assert "[api key]" in errors[0]["exception"] and "[link signature]" in errors[0]["exception"]
    assert [line["status"] for line in mine if line["event"] == "request"] == [500]
    for secret in ("evk_", "whsec_", "signature="):
        assert secret not in stream.getvalue()
