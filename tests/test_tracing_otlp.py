"""Tracing as an operator runs it: `serve` with OTEL_EXPORTER_OTLP_ENDPOINT pointing at a local
collector (here a bare OTLP/HTTP receiver). What arrives on the wire is searched for the API key
and the signed link's signature; the access lines on stderr name traces that arrived."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.serve_process import Client, Database, Node
from tests.test_packs import ROWS
from tests.waiting import until

pytestmark = pytest.mark.slow


@contextmanager
def collector() -> Iterator[tuple[str, list[bytes]]]:
    """An OTLP/HTTP trace receiver: every export request's body, as sent."""
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802  (http.server's naming)
            bodies.append(self.rfile.read(int(self.headers.get("content-length", "0"))))
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_serve_exports_spans_to_a_collector_without_secrets(tmp_path: Path) -> None:
    database = Database(f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}", sqlite_path=tmp_path / "evidence.db")
    with collector() as (endpoint, bodies):
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "200"}
        node = Node(database, tmp_path, env=env).start()
        try:
            key = until(lambda: re.search(r"evk_[0-9a-f]{48}", node.stdout()), "the demo key", 60).group(0)
            api = Client(node.base, key)
            assert api.get(f"/api/v2/workspaces?page=1&api_key={key}").status_code == 200
            ws = api.post("/api/v2/workspaces", {"name": "Traced", "reporting_period_start": "2026-01-01"}).json()
            ws_id = ws["data"]["id"]
            rows = {"source_row_count": len(ROWS), "shipments": ROWS}
            imported = api.post(f"/api/v2/workspaces/{ws_id}/imports", rows)
            assert imported.status_code == 201, imported.text
            assert api.post(f"/api/v2/workspaces/{ws_id}/calculate").status_code == 200
            pack = api.post(f"/api/v2/workspaces/{ws_id}/packs").json()["data"]
            link = api.data(f"/api/v2/packs/{pack['id']}/artifacts")[0]["signed_download_url"]
            signature = parse_qs(urlsplit(link).query)["signature"][0]
            assert api.get(link).status_code == 200
        finally:
            node.stop()  # the lifespan's end flushes what the batch processor still holds
        assert bodies, node.output()
        wire = b"".join(bodies)
        for secret in (key, key[4:], signature):
            assert secret.encode() not in wire
        spans = []
        for body in bodies:
            request = ExportTraceServiceRequest.FromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    spans.extend(scope.spans)
        names = {s.name for s in spans}
        assert {"GET /api/v2/workspaces", "GET /api/v2/artifacts/{id}/download", "SELECT", "COMMIT"} <= names
        assert not [n for n in names if n.endswith(("/healthz", "/readyz", "/metrics"))]
        exported = {s.trace_id.hex() for s in spans}
        access = [line for line in node.log_lines() if line.get("event") == "request"]
        listed = [line for line in access if line.get("path") == "/api/v2/workspaces" and line.get("method") == "GET"]
        assert listed and all(line.get("trace_id") in exported for line in listed)
        assert all("trace_id" not in line for line in access if line.get("path") == "/healthz")
