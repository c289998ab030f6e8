"""One stored form per value, whichever path writes it: REST and GraphQL, the unit of work's
driver-level insert and an ORM flush, the command line. Rows are read back with raw SQL, as
text, so a second spelling of one instant, id or document cannot hide behind the driver."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy import text
from sqlmodel import SQLModel
from starlette.applications import Starlette

from evidence_gateway.core.jsoncodec import dumps
from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.models import ApiKey, Workspace
from evidence_gateway.resolvers.organizations import create_api_key
from evidence_gateway.store.db import Database
from tests.cli_inprocess import run_cli as run_main
from tests.conftest import Api, create_workspace
from tests.test_cli import run_cli

# SQLite keeps these as text (or integers), in exactly one spelling each.
SQLITE_FORMS: dict[type[Any], tuple[str, re.Pattern[str]]] = {
    sa.DateTime: ("text", re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}")),
    sa.Date: ("text", re.compile(r"\d{4}-\d\d-\d\d")),
    sa.Uuid: ("text", re.compile(r"[0-9a-f]{32}")),
    sa.Float: ("real", re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?")),
    sa.Boolean: ("integer", re.compile(r"[01]")),
}
# PostgreSQL keeps them typed: the form is the column's type.
POSTGRES_TYPES: dict[type[Any], str] = {
    sa.DateTime: "timestamp with time zone",
    sa.Date: "date",
    sa.Uuid: "uuid",
    sa.Float: "double precision",
    sa.Boolean: "boolean",
    sa.JSON: "json",
}

# Columns whose values are the row's own (ids, times, secrets, hashes over them): their form is
# checked above; they are left out when comparing the rows two paths wrote from one input.
OWN_VALUES = {
    "key_hash", "display_prefix", "secret", "webhook_signing_secret", "pack_hash", "rerun_hash",
    "content_sha256", "size_bytes", "file_url", "webhook_id", "name", "sequence", "audit_sequence", "request_id",
    "event_cursor",
}  # fmt: skip


def _kind(column: sa.Column[Any]) -> type[Any] | None:
    stored = column.type.impl if isinstance(column.type, sa.TypeDecorator) else column.type  # UTCDateTime
    for kind in (sa.DateTime, sa.Date, sa.Uuid, sa.Float, sa.Boolean, sa.JSON):
        if isinstance(stored, kind):
            return kind
    return None


async def _raw(db: Database, table: sa.Table, where: str = "", **params: Any) -> list[dict[str, tuple[str, Any]]]:
    """Every row of ``table`` (matching ``where``) as column -> (stored type, text)."""
    typeof = "typeof" if db.is_sqlite else "pg_typeof"
    parts = []
    for c in table.columns:
        value = "length({})" if isinstance(c.type, sa.LargeBinary) else "CAST({} AS TEXT)"
        parts.append(f'CAST({typeof}("{c.name}") AS TEXT), ' + value.format(f'"{c.name}"'))
    sql = f'SELECT {", ".join(parts)} FROM "{table.name}"' + (f" WHERE {where}" if where else "")
    async with db.engine.connect() as conn:
        rows = (await conn.execute(text(sql), params)).all()
    names = [c.name for c in table.columns]
    return [{n: (row[2 * i], row[2 * i + 1]) for i, n in enumerate(names)} for row in rows]


def _form_problems(db: Database, table: sa.Table, rows: list[dict[str, tuple[str, Any]]]) -> list[str]:
    problems = []
    for row in rows:
        for column in table.columns:
            stored_type, value = row[column.name]
            kind = _kind(column)
            if value is None or kind is None:
                continue
            where = f"{table.name}.{column.name} = {value!r} ({stored_type})"
            if kind is sa.JSON:
                # The API's one JSON encoding (jsoncodec), compact, in every JSON column.
                if dumps(json.loads(value)).decode() != value:
                    problems.append(f"{where}: not the compact JSON form")
                if not db.is_sqlite and stored_type != "json":
                    problems.append(f"{where}: not json")
            elif db.is_sqlite:
                storage, pattern = SQLITE_FORMS[kind]
                if stored_type != storage or not pattern.fullmatch(value):
                    problems.append(f"{where}: not {storage} of the form {pattern.pattern}")
            elif stored_type != POSTGRES_TYPES[kind]:
                problems.append(f"{where}: not {POSTGRES_TYPES[kind]}")
    return problems


def _shape(document: Any) -> Any:
    """A JSON document's structure: its keys, with each leaf's JSON type."""
    if isinstance(document, dict):
        return {k: _shape(v) for k, v in document.items()}
    if isinstance(document, list):
        return [_shape(v) for v in document]
    return type(document).__name__


def _comparable(table: sa.Table, row: dict[str, tuple[str, Any]]) -> dict[str, tuple[str, Any]]:
    """What two paths must write alike from one input: all but the row's own ids, times and
    secrets; a document (which carries ids and times) by its shape."""
    own = {c.name for c in table.columns if _kind(c) in (sa.DateTime, sa.Uuid)} | OWN_VALUES
    kept = {k: v for k, v in row.items() if k not in own}
    for column in table.columns:
        stored_type, value = kept.get(column.name, (None, None))
        if _kind(column) is sa.JSON and value is not None:
            kept[column.name] = (stored_type, _shape(json.loads(value)))
    return kept


ROWS = [
    {"mode": "road", "distance_km": 420, "mass_tonnes": 12, "shipment_date": "2025-01-15"},
    {"mode": "rail", "distance_km": 900.5, "mass_tonnes": 30, "fuel_type": "diesel", "fuel_amount": 50},
]
GQL_ROWS = [
    {"mode": "ROAD", "distanceKm": 420, "massTonnes": 12, "shipmentDate": "2025-01-15"},
    {"mode": "RAIL", "distanceKm": 900.5, "massTonnes": 30, "fuelType": "DIESEL", "fuelAmount": 50},
]
HOOK = "http://127.0.0.1:9/hook"


async def _through_rest(api: Api) -> str:
    async def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        resp = await api.post(path, body)
        assert resp.status_code in (200, 201, 202), resp.text
        data: dict[str, Any] = resp.json()["data"]
        return data

    ws = await post(
        "/api/v2/workspaces",
        {"name": "Forms", "external_reference": "ext-1", "reporting_period_start": "2025-01-01",
         "reporting_period_end": "2025-03-31"},
    )  # fmt: skip
    await post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 2, "shipments": ROWS})
    await post(
        "/api/v2/evidence-items",
        {"evidence_type": "fuel_receipt", "title": "Diesel March", "file_name": "r.pdf",
         "file_url": "https://files.example.com/r.pdf", "workspace_id": ws["id"]},
    )  # fmt: skip
    await post(f"/api/v2/workspaces/{ws['id']}/calculate", {})
    pack = await post(f"/api/v2/workspaces/{ws['id']}/packs", {})
    pack_id = pack["pack"]["id"] if "pack" in pack else pack["id"]
    await post(f"/api/v2/packs/{pack_id}/approvals", {"action_type": "requested", "comment": "please"})
    await post("/api/v2/webhook-endpoints", {"url": HOOK, "description": "d", "event_types": ["workspace.created"]})
    return str(ws["id"])


async def _through_graphql(api: Api) -> str:
    async def gql(document: str, variables: dict[str, Any]) -> dict[str, Any]:
        body = await api.gql(document, variables)
        assert not body.get("errors"), body
        data: dict[str, Any] = body["data"]
        return data

    ws = (
        await gql(
            "mutation($i: CreateWorkspaceInput!) { createWorkspace(input: $i) { id } }",
            {
                "i": {
                    "name": "Forms",
                    "externalReference": "ext-1",
                    "reportingPeriodStart": "2025-01-01",
                    "reportingPeriodEnd": "2025-03-31",
                }
            },
        )  # fmt: skip
    )["createWorkspace"]["id"]
    await gql(
        "mutation($id: UUID!, $i: RegisterImportInput!) { registerImport(workspaceId: $id, input: $i) { id } }",
        {"id": ws, "i": {"sourceRowCount": 2, "shipments": GQL_ROWS}},
    )
    await gql(
        "mutation($i: CreateEvidenceItemInput!) { createEvidenceItem(input: $i) { id } }",
        {"i": {"evidenceType": "FUEL_RECEIPT", "title": "Diesel March", "fileName": "r.pdf",
               "fileUrl": "https://files.example.com/r.pdf", "workspaceId": ws}},
    )  # fmt: skip
    await gql("mutation($id: UUID!) { calculateWorkspace(workspaceId: $id) { status } }", {"id": ws})
    pack = (await gql("mutation($id: UUID!) { generatePack(workspaceId: $id) { pack { id } } }", {"id": ws}))[
        "generatePack"
    ]["pack"]["id"]
    await gql(
        "mutation($id: UUID!, $i: RecordApprovalInput!) { recordApproval(packId: $id, input: $i) { statusAfter } }",
        {"id": pack, "i": {"actionType": "REQUESTED", "comment": "please"}},
    )
    await gql(
        "mutation($i: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $i) { endpoint { id } } }",
        {"i": {"url": HOOK, "description": "d", "eventTypes": ["workspace.created"]}},
    )
    await gql(
        "mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { key } }",
        {"i": {"name": "ci", "scope": "WRITE", "expiresAt": "2027-01-31T18:00:00Z"}},
    )
    return str(ws)


def _workspace_rows(table: sa.Table, rows: list[dict[str, tuple[str, Any]]], workspace: str, db: Database) -> Any:
    key = uuid.UUID(workspace).hex if db.is_sqlite else workspace
    mine = [r for r in rows if "workspace_id" in r and r["workspace_id"][1] == key]
    if table.name == "workspace":
        mine = [r for r in rows if r["id"][1] == key]
    return sorted((_comparable(table, r) for r in mine), key=repr)


async def test_every_write_path_stores_one_form(app: Starlette, api: Api, tmp_path: Path, database_url: str) -> None:
    db: Database = app.state.db
    by_rest = await _through_rest(api)
    by_graphql = await _through_graphql(api)

    # An ORM flush of a workspace, beside the unit of work's driver-level insert of a like one.
    plain = await create_workspace(
        api, name="Forms", external_reference="ext-1", reporting_period_start="2025-01-01",
        reporting_period_end="2025-03-31",
    )  # fmt: skip
    async with db.read() as session:
        org_id = (await session.execute(sa.select(ApiKey.org_id).limit(1))).scalar_one()
    orm_id = uuid.uuid4()
    async with db.write() as session:
        now = utcnow()
        session.add(
            Workspace(
                id=orm_id, org_id=org_id, name="Forms",
                external_reference="ext-1", reporting_period_start=now.date().replace(2025, 1, 1),
                reporting_period_end=now.date().replace(2025, 3, 31), status="draft", created_at=now, updated_at=now,
            )
        )  # fmt: skip

    # The command line: an organisation, a key with an expiry, legacy reports.
    legacy = tmp_path / "legacy.json"
    legacy.write_text(
        json.dumps(
            [{"id": str(uuid.uuid4()), "title": "FY2025", "reporting_period_start": "2025-01-01",
              "reporting_period_end": "2025-12-31", "status": "final", "total_co2e_kg": 48210.5,
              "shipment_count": 312}]
        )
    )  # fmt: skip
    for args in (
        ("keys", "create", "--org", "cli-org", "--name", "ci", "--scope", "write", "--expires-at", "2027-01-31T18:00Z"),
        ("legacy", "import", str(legacy), "--org", "cli-org"),
    ):
        done = run_main(*args, "--database-url", database_url)
        assert done.returncode == 0, done.stderr
    await create_api_key(db, "fn-org", name="ci", scope="write", expires_at=utcnow().replace(year=2027))

    problems: list[str] = []
    written: dict[str, list[dict[str, tuple[str, Any]]]] = {}
    for table in SQLModel.metadata.sorted_tables:
        written[table.name] = await _raw(db, table)
        problems += _form_problems(db, table, written[table.name])
    assert problems == []
    # Every path above wrote something to each of these tables.
    for name in ("workspace", "import_batch", "shipment", "evidence_item", "calculation_run", "shipment_emission",
                 "data_quality_assessment", "report_pack", "pack_artifact", "approval_action", "webhook_endpoint",
                 "event", "api_key", "organization", "legacy_report"):  # fmt: skip
        assert written[name], name

    # One input, two transports: the same rows, but for their own ids, times and secrets.
    compared, differing = 0, []
    for table in SQLModel.metadata.sorted_tables:
        rows = written[table.name]
        rest_rows = _workspace_rows(table, rows, by_rest, db)
        if rest_rows:
            graphql_rows = _workspace_rows(table, rows, by_graphql, db)
            differing += [
                f"{table.name}.{k}: {a[k]!r} != {b.get(k)!r}"
                for a, b in zip(rest_rows, graphql_rows, strict=True)
                for k in a
                if a[k] != b.get(k)
            ]
            compared += 1
    assert differing == []
    assert compared >= 10
    workspace = SQLModel.metadata.tables["workspace"]
    assert _workspace_rows(workspace, written["workspace"], str(orm_id), db) == _workspace_rows(
        workspace, written["workspace"], plain["id"], db
    )
    endpoints = written["webhook_endpoint"]
    assert len(endpoints) == 2
    assert _comparable(SQLModel.metadata.tables["webhook_endpoint"], endpoints[0]) == _comparable(
        SQLModel.metadata.tables["webhook_endpoint"], endpoints[1]
    )
    keys = SQLModel.metadata.tables["api_key"]
    named = [_comparable(keys, r) for r in written["api_key"] if r["name"][1] == "ci"]
    assert len(named) == 3 and named[0] == named[1] == named[2]  # GraphQL, the CLI, the function


@pytest.mark.parametrize("url", ["sqlite+aiosqlite:///:memory:", "sqlite+aiosqlite://", "sqlite://"])
def test_in_memory_sqlite_is_refused_in_one_line(url: str, tmp_path: Path) -> None:
    from evidence_gateway.app import create_app
    from evidence_gateway.settings import Settings
    from evidence_gateway.store.db import IN_MEMORY_REFUSED, UnsupportedDatabase

    with pytest.raises(UnsupportedDatabase, match=re.escape(IN_MEMORY_REFUSED)):
        create_app(Settings(database_url=url, secret_key="k"))
    # serve refuses before starting anything; the other commands alike.
    command = {"sqlite://": ("db", "upgrade"), "sqlite+aiosqlite://": ("keys", "create", "--org", "x")}.get(
        url, ("serve", "--port", "1")
    )
    done = run_cli(*command, "--database-url", url, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == f"error: {IN_MEMORY_REFUSED}\n"
