"""The floor: the thinnest honest implementation of the workspace endpoints on our stack.

Starlette + SQLAlchemy Core (async engine, aiosqlite or asyncpg) on the SAME tables the
product creates (the Table objects of ``evidence_gateway.models``, nothing else of the
product), the same envelopes, orjson, and the same per-request API-key check: sha256 of the
bearer token looked up in ``api_key``. No ORM, no pydantic, no GraphQL.

Serve it like the product: ``uvicorn floor_app:create_app --factory --app-dir bench``
with ``BENCH_FLOOR_DATABASE_URL`` set (plain ``sqlite:///`` / ``postgresql://`` URLs work).

Statements are built once (bound parameters) and rows are read as tuples, as the thinnest
honest implementation would. ``BENCH_FLOOR_VARIANT=previous`` serves the floor as the figures
before 2026-11-25 were measured (statements built per request, rows read through their
mapping), so that ``bench/run.py --previous-floor`` can state the ratio between the two floors.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import uuid
from datetime import UTC, date, datetime
from typing import Any

import orjson
from sqlalchemy import bindparam, event, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlmodel import SQLModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway import models  # noqa: F401  (registers the product's tables)

WORKSPACE = SQLModel.metadata.tables["workspace"]
API_KEY = SQLModel.metadata.tables["api_key"]
RUN = SQLModel.metadata.tables["calculation_run"]
PACK = SQLModel.metadata.tables["report_pack"]
ASSESSMENT = SQLModel.metadata.tables["data_quality_assessment"]

FIELDS = (
    "id",
    "org_id",
    "name",
    "external_reference",
    "reporting_period_start",
    "reporting_period_end",
    "status",
    "default_methodology_profile_id",
    "latest_calculation_run_id",
    "latest_report_pack_id",
    "archived_at",
    "created_at",
    "updated_at",
)
COLUMNS = [WORKSPACE.c[f] for f in FIELDS]
KEY_RE = re.compile(r"^evk_[0-9a-f]{48}$")
OPTS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z


def _key_stmt() -> Any:
    return select(API_KEY.c.id, API_KEY.c.org_id).where(
        API_KEY.c.key_hash == bindparam("digest"), API_KEY.c.revoked_at.is_(None)
    )


def _count_stmt() -> Any:
    return select(func.count()).select_from(WORKSPACE).where(WORKSPACE.c.org_id == bindparam("org"))


def _page_stmt() -> Any:
    return (
        select(*COLUMNS)
        .where(WORKSPACE.c.org_id == bindparam("org"))
        .order_by(WORKSPACE.c.created_at.desc(), WORKSPACE.c.id.desc())
        .limit(bindparam("limit"))
        .offset(bindparam("offset"))
    )


def _detail_stmt() -> Any:
    """The workspace and the id of its latest run's assessment, in one statement."""
    latest_assessment = (
        select(ASSESSMENT.c.id)
        .where(ASSESSMENT.c.calculation_run_id == WORKSPACE.c.latest_calculation_run_id)
        .limit(1)
        .scalar_subquery()
    )
    return select(*COLUMNS, latest_assessment.label("latest_quality_assessment_id")).where(
        WORKSPACE.c.id == bindparam("id"), WORKSPACE.c.org_id == bindparam("org")
    )


def _by_id_stmt(table: Any) -> Any:
    return select(table).where(table.c.id == bindparam("id"))


BUILDERS = {
    "key": _key_stmt,
    "count": _count_stmt,
    "page": _page_stmt,
    "detail": _detail_stmt,
    "run": lambda: _by_id_stmt(RUN),
    "pack": lambda: _by_id_stmt(PACK),
    "assessment": lambda: _by_id_stmt(ASSESSMENT),
    "insert": lambda: insert(WORKSPACE),
}


class Statements:
    """Built once, or (the previous floor) anew for every use."""

    def __init__(self, prebuilt: bool) -> None:
        self._built = {name: build() for name, build in BUILDERS.items()} if prebuilt else None

    def __getitem__(self, name: str) -> Any:
        return self._built[name] if self._built is not None else BUILDERS[name]()


def _default(value: Any) -> Any:
    if isinstance(value, uuid.UUID):  # asyncpg's UUID subclass
        return str(value)
    raise TypeError(type(value).__name__)


def respond(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body, default=_default, option=OPTS), status, media_type="application/json")


def error(status: int, message: str, code: str, **details: Any) -> Response:
    return respond({"error": message, "details": {"code": code, **details}}, status)


def normalise(url: str) -> str:
    if url.startswith("sqlite://"):
        return "sqlite+aiosqlite://" + url[len("sqlite://") :]
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    return url


class Floor:
    def __init__(self, url: str, previous: bool = False) -> None:
        url = normalise(url)
        self.previous = previous
        self.stmt = Statements(prebuilt=not previous)
        self.sqlite = url.startswith("sqlite")
        # PostgreSQL: a fixed pool of 20, like the product's default. The previous floor's 10 plus
        # 20 overflow opened and closed a connection on most requests under 32 connections of
        # load (overflow connections close on return), which made both apps look slow.
        pool = {"pool_size": 10, "max_overflow": 20} if previous else {"pool_size": 20, "max_overflow": 0}
        kwargs: dict[str, Any] = {} if self.sqlite else pool
        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self.write_lock = asyncio.Lock()
        if self.sqlite:

            @event.listens_for(self.engine.sync_engine, "connect")
            def _connect(dbapi_conn: Any, _rec: Any) -> None:
                dbapi_conn.isolation_level = None  # autocommit: single-statement reads need no BEGIN
                cur = dbapi_conn.cursor()
                for pragma in ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=10000", "synchronous=NORMAL"):
                    cur.execute(f"PRAGMA {pragma}")
                cur.close()

    async def principal(self, request: Request) -> tuple[Any, Any] | None:
        header = request.headers.get("authorization") or ""
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not KEY_RE.fullmatch(token):
            return None
        digest = hashlib.sha256(token.encode()).hexdigest()
        async with self.engine.connect() as conn:
            row = (await conn.execute(self.stmt["key"], {"digest": digest})).first()
        return None if row is None else (row[0], row[1])

    def _rows(self, rows: Any) -> list[dict[str, Any]]:
        if self.previous:
            return [dict(r._mapping) for r in rows]
        return [dict(zip(FIELDS, r, strict=True)) for r in rows]

    async def list_workspaces(self, request: Request) -> Response:
        who = await self.principal(request)
        if who is None:
            return error(401, "invalid or missing API key", "unauthenticated")
        try:
            page = int(request.query_params.get("page", "1"))
            per_page = int(request.query_params.get("per_page", "20"))
        except ValueError:
            return error(422, "invalid input", "invalid_input")
        if page < 1 or not 1 <= per_page <= 100:
            return error(422, "invalid input", "invalid_input")
        org = who[1]
        async with self.engine.connect() as conn:
            total = (await conn.execute(self.stmt["count"], {"org": org})).scalar_one()
            page_args = {"org": org, "limit": per_page, "offset": (page - 1) * per_page}
            items = self._rows(await conn.execute(self.stmt["page"], page_args))
        return respond({"data": items, "pagination": {"page": page, "per_page": per_page, "total": total}})

    async def get_workspace(self, request: Request) -> Response:
        who = await self.principal(request)
        if who is None:
            return error(401, "invalid or missing API key", "unauthenticated")
        try:
            wid = uuid.UUID(request.path_params["id"])
        except ValueError:
            return error(404, "workspace not found", "not_found")
        async with self.engine.connect() as conn:
            row = (await conn.execute(self.stmt["detail"], {"id": wid, "org": who[1]})).first()
            if row is None:
                return error(404, "workspace not found", "not_found")
            data = dict(row._mapping) if self.previous else dict(zip(FIELDS, row, strict=False))
            assessment_id = row[len(FIELDS)]
            data.pop("latest_quality_assessment_id", None)
            data["latest_calculation_run"] = await self._one(conn, "run", data["latest_calculation_run_id"])
            data["latest_pack"] = await self._one(conn, "pack", data["latest_report_pack_id"])
            data["latest_quality_assessment"] = await self._one(conn, "assessment", assessment_id)
        return respond({"data": data})

    async def create_workspace(self, request: Request) -> Response:
        who = await self.principal(request)
        if who is None:
            return error(401, "invalid or missing API key", "unauthenticated")
        try:
            body = orjson.loads(await request.body())
        except orjson.JSONDecodeError:
            return error(400, "malformed JSON body", "bad_request")
        if not isinstance(body, dict):
            return error(400, "body must be a JSON object", "bad_request")
        fields: dict[str, str] = {}
        values = _validate(body, fields)
        if fields:
            return error(422, "invalid input", "invalid_input", fields=fields)
        now = datetime.now(UTC)
        row = {
            "id": uuid.uuid4(),
            "org_id": who[1],
            "status": "draft",
            "latest_calculation_run_id": None,
            "latest_report_pack_id": None,
            "archived_at": None,
            "created_at": now,
            "updated_at": now,
            **values,
        }
        if self.sqlite:
            async with self.write_lock, self.engine.connect() as conn:
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
                await conn.execute(self.stmt["insert"], row)
                await conn.exec_driver_sql("COMMIT")
        else:
            async with self.engine.begin() as conn:
                await conn.execute(self.stmt["insert"], row)
        return respond({"data": {f: row[f] for f in FIELDS}}, 201)

    async def _one(self, conn: Any, name: str, row_id: Any) -> dict[str, Any] | None:
        if row_id is None:
            return None
        row = (await conn.execute(self.stmt[name], {"id": row_id})).first()
        if row is None:
            return None
        return dict(row._mapping) if self.previous else dict(zip(row._fields, row, strict=True))


def _validate(body: dict[str, Any], fields: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    name = body.get("name")
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 200:
        fields["name"] = "must be a string of 1-200 characters"
    else:
        out["name"] = name.strip()
    ref = body.get("external_reference")
    if ref is not None and (not isinstance(ref, str) or len(ref) > 500):
        fields["external_reference"] = "must be a string"
    out["external_reference"] = ref
    for key in ("reporting_period_start", "reporting_period_end"):
        value = body.get(key)
        out[key] = None
        if value is not None:
            try:
                out[key] = date.fromisoformat(value)
            except (TypeError, ValueError):
                fields[key] = "must be a date string (YYYY-MM-DD)"
    profile = body.get("default_methodology_profile_id")
    out["default_methodology_profile_id"] = None
    if profile is not None:
        try:
            out["default_methodology_profile_id"] = uuid.UUID(profile)
        except (TypeError, ValueError, AttributeError):
            fields["default_methodology_profile_id"] = "must be a valid UUID"
    return out


def create_app() -> Starlette:
    floor = Floor(os.environ["BENCH_FLOOR_DATABASE_URL"], previous=os.environ.get("BENCH_FLOOR_VARIANT") == "previous")

    async def healthz(_request: Request) -> Response:
        return respond({"status": "ok"})

    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/api/v2/workspaces", floor.list_workspaces, methods=["GET"]),
            Route("/api/v2/workspaces", floor.create_workspace, methods=["POST"]),
            Route("/api/v2/workspaces/{id}", floor.get_workspace, methods=["GET"]),
        ],
    )
    app.state.engine = floor.engine
    return app
