"""The served OpenAPI document, checked against the running app by schemathesis (SQLite only).

Each operation gets generated requests (valid and invalid) with a valid key of a fresh
organisation; every response must conform to the document: status codes, content types,
headers and bodies, no server errors. Path ids are tried both as generated (unknown ids)
and replaced by a real record of that kind, so success bodies are checked too.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis import checks as st_checks

from evidence_gateway.app import create_app
from evidence_gateway.resolvers.legacy import import_legacy_reports
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.rest_compat.openapi import document
from evidence_gateway.settings import Settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database

# Bounded so the module stays well under a minute on SQLite; raise it locally to dig deeper.
EXAMPLES = int(os.environ.get("EVIDENCE_CONTRACT_EXAMPLES", "10"))
CHECKS = [
    st_checks.not_a_server_error,
    st_checks.status_code_conformance,
    st_checks.content_type_conformance,
    st_checks.response_headers_conformance,
    st_checks.response_schema_conformance,
    st_checks.negative_data_rejection,
    st_checks.missing_required_header,
    st_checks.ignored_auth,
]


class Fixture:
    """A served app on a fresh SQLite file with one organisation's key and one record per kind."""

    def __init__(self, tmp: Path) -> None:
        url = f"sqlite+aiosqlite:///{tmp / 'contract.db'}"
        self.settings = Settings(
            database_url=url,
            secret_key="contract-secret",
            public_base_url="http://testserver",
            # Wrong and missing keys by the hundred (the ignored-auth check): 401s, never 429s.
            rate_limit_per_address=1_000_000,
            rate_limit_auth_failures=1_000_000,
        )
        self.legacy_ids: list[Any] = []
        self.key = asyncio.run(self._key(url))
        self.app = create_app(self.settings)
        self.ids: dict[str, str] = {}

    async def _key(self, url: str) -> str:
        db = Database(url)
        try:
            await migrate.prepare(db)
            key = await create_api_key(db, "contract-org")
            legacy = {"title": "FY2024", "total_co2e_kg": 1200.5, "shipment_count": 3}
            self.legacy_ids = await import_legacy_reports(db, "contract-org", [legacy])
            return key
        finally:
            await db.dispose()

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


@pytest.fixture(scope="module")
def contract(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return Fixture(tmp_path_factory.mktemp("contract"))


@pytest.fixture(scope="module")
def api_schema(contract: Fixture) -> Any:
    schema = schemathesis.openapi.from_asgi("/api/openapi.json", contract.app)
    # The key is sent on every request (below); ignored_auth checks unauthenticated calls itself.
    schema.config.generation.update(with_security_parameters=False)
    _seed_records(schema, contract)
    return schema


def _seed_records(schema: Any, contract: Fixture) -> None:
    """One real record per path kind, created through the API itself (same in-process client)."""
    from schemathesis.python import asgi

    with asgi.get_client(contract.app) as client:

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            resp = client.post(f"http://testserver/api{path}", json=body, headers=contract.headers)
            assert resp.status_code in (200, 201), resp.text
            return dict(resp.json()["data"])

        ws = post("/v2/workspaces", {"name": "contract"})
        rows = [{"mode": "road", "distance_km": 100, "mass_tonnes": 2}]
        post(f"/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": rows})
        post(f"/v2/workspaces/{ws['id']}/calculate", {})
        pack = post(f"/v2/workspaces/{ws['id']}/packs", {})
        artifacts = client.get(f"http://testserver/api/v2/packs/{pack['id']}/artifacts", headers=contract.headers)
        item = post(
            "/v2/evidence-items",
            {
                "evidence_type": "other",
                "title": "t",
                "file_name": "f.pdf",
                "file_url": "https://example.com/f.pdf",
                "workspace_id": ws["id"],
            },
        )
        customer = post("/sharing/recipients", {"name": "contract customer"})
        shared = post("/sharing/publications", {"recipient_id": customer["id"], "pack_id": pack["id"]})
        contract.ids.update(
            {
                "recipients": customer["id"],
                "publications": shared["id"],
                "workspaces": ws["id"],
                "packs": pack["id"],
                # The JSON artifact: its body is parsed and checked against the document.
                "artifacts": next(a["id"] for a in artifacts.json()["data"] if a["artifact_type"] == "machine_json"),
                "evidence-items": item["id"],
                "reports": str(contract.legacy_ids[0]),
            }
        )


@pytest.fixture(scope="module")
def known_ids(api_schema: Any, contract: Fixture) -> dict[str, str]:
    return contract.ids


def no_server_error_but_upstream(ctx: Any, response: Any, case: Any) -> None:
    """not_a_server_error, except the documented 502 of the webhook test (the target refused)."""
    if response.status_code >= 500 and response.status_code != 502:
        raise AssertionError(f"server error {response.status_code}: {response.text[:300]}")


def checks_for(method: str, path: str) -> list[Any]:
    responses = document()["paths"][path][method.lower()]["responses"]
    if "502" not in responses:
        return CHECKS
    return [c for c in CHECKS if c is not st_checks.not_a_server_error] + [no_server_error_but_upstream]


def has_inputs(method: str, path: str) -> bool:
    op = document()["paths"][path][method.lower()]
    return bool(op.get("parameters") or op.get("requestBody"))


OPERATIONS = [(method.upper(), path) for path, item in document()["paths"].items() for method in item]
# Negative generation needs something to make invalid: operations without inputs get positive cases only.
CASES = [
    (method, path, mode)
    for method, path in OPERATIONS
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    if mode is GenerationMode.POSITIVE or has_inputs(method, path)
]


def _kind(path: str) -> str:
    return path.strip("/").split("/")[1]


@pytest.mark.parametrize(("method", "path", "mode"), CASES, ids=[f"{m} {p} {g.value}" for m, p, g in CASES])
def test_api_conforms_to_its_document(
    method: str, path: str, mode: GenerationMode, api_schema: Any, contract: Fixture, known_ids: dict[str, str]
) -> None:
    operation = api_schema[path][method]
    checks = checks_for(method, path)
    real = known_ids.get(_kind(path))

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    def check(case: Any) -> None:
        case.call_and_validate(headers=contract.headers, checks=checks)
        if mode is GenerationMode.POSITIVE and real and "id" in (case.path_parameters or {}):
            case.path_parameters["id"] = real
            case.call_and_validate(headers=contract.headers, checks=checks)

    check()


def test_document_is_openapi_31_and_public(contract: Fixture) -> None:
    transport = httpx.ASGITransport(app=contract.app)

    async def fetch() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.get("/api/openapi.json")

    resp = asyncio.run(fetch())
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    doc = resp.json()
    assert doc == document()
    assert doc["openapi"].startswith("3.1")
    assert doc["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_every_rest_route_is_documented() -> None:
    from starlette.routing import Route

    from evidence_gateway import rest_compat

    served = {
        (method, route.path)
        for route in rest_compat.routes
        if isinstance(route, Route) and route.path != "/openapi.json"
        for method in (route.methods or set()) - {"HEAD"}
    }
    documented = {(method.upper(), path) for path, item in document()["paths"].items() for method in item}
    assert served - documented == set(), "routes missing from rest_compat/openapi.py"
    assert documented - served == set(), "documented operations the app does not serve"


def test_extensions_are_marked() -> None:
    paths = document()["paths"]
    extensions = {f"{m.upper()} {p}" for p, item in paths.items() for m, op in item.items() if op.get("x-extension")}
    assert extensions == {
        "GET /v2/methodology-profiles",
        "GET /v2/artifacts/{id}/download",
        "GET /v2/evidence-items",
        "GET /v2/evidence-items/{id}",
        "GET /v2/webhooks/deliveries",
        "GET /v2/calculation-runs",
        "GET /v2/calculation-runs/{id}",
        "GET /v2/packs",
        "GET /v2/imports/{id}",
        "GET /v2/approvals/{id}",
        "GET /v2/events",
        "GET /v2/webhook-endpoints",
        "POST /v2/webhook-endpoints",
        "GET /v2/webhook-endpoints/{id}",
        "PATCH /v2/webhook-endpoints/{id}",
        "DELETE /v2/webhook-endpoints/{id}",
        "POST /v2/webhook-endpoints/{id}/rotate-secret",
        "GET /v2/webhook-endpoints/{id}/deliveries",
        "POST /v2/webhook-endpoints/deliveries/{id}/retry",
        "GET /v2/log/checkpoint",
        "GET /v2/log/proof/inclusion",
        "GET /v2/log/proof/consistency",
        "GET /v2/packs/{id}/bundle",
        "GET /sharing/recipients",
        "POST /sharing/recipients",
        "POST /sharing/recipients/{id}/revoke",
        "PUT /sharing/recipients/{id}/host",
        "DELETE /sharing/recipients/{id}/host",
        "GET /sharing/publications",
        "POST /sharing/publications",
        "POST /sharing/publications/{id}/withdraw",
    }
    schemas = document()["components"]["schemas"]
    assert schemas["ImportBatch"]["properties"]["shipment_count"]["x-extension"] is True
    assert schemas["CalculationRun"]["properties"]["total_co2e_kg"]["x-extension"] is True
    assert "x-extension" not in schemas["Workspace"]["properties"]["name"]


def test_document_is_valid_openapi_31() -> None:
    from openapi_spec_validator import OpenAPIV31SpecValidator, validate

    validate(document(), cls=OpenAPIV31SpecValidator)
