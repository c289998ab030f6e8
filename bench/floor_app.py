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

``BENCH_FLOOR_MODE`` picks the data layer under the same handlers:

- ``core`` (the default): SQLAlchemy Core on its async engine, as above.
- ``raw``: the driver directly, no SQLAlchemy at run time: **aiosqlite** (one reader and one
  writer connection, WAL, autocommit reads) on SQLite, **asyncpg** (a fixed pool of 10) on
  PostgreSQL. The SQL text is the Core statements' own, compiled once for the dialect at start,
  so both modes send the same statements; values are bound and converted by hand (ids as
  SQLAlchemy stores them on SQLite: 32 hex digits; times as its text). This is the floor issue 29
  measures against: SQLAlchemy's async adapter alone costs a list more than the rest of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import Date, DateTime, Uuid, bindparam, event, func, insert, select
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from evidence_gateway import models  # noqa: F401  (registers the product's tables)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

# PostgreSQL connections, fixed: the product's default EVIDENCE_DATABASE_POOL_SIZE (not read from
# its settings: that would load pydantic-settings into the floor, which the floor does not need).
POOL = 10

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


class Handlers:
    """The endpoints, over a data layer (``Floor``: Core; ``RawSqlite``, ``RawPostgres``: the driver)."""

    async def key_row(self, digest: str) -> tuple[Any, Any] | None:
        raise NotImplementedError

    async def page(self, org: Any, limit: int, offset: int) -> tuple[int, list[dict[str, Any]]]:
        raise NotImplementedError

    async def detail(self, wid: uuid.UUID, org: Any) -> dict[str, Any] | None:
        raise NotImplementedError

    async def insert(self, row: dict[str, Any]) -> None:
        raise NotImplementedError

    async def close(self) -> None:
        return None

    async def principal(self, request: Request) -> tuple[Any, Any] | None:
        header = request.headers.get("authorization") or ""
        scheme, _, token = header.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not KEY_RE.fullmatch(token):
            return None
        return await self.key_row(hashlib.sha256(token.encode()).hexdigest())

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
        total, items = await self.page(who[1], per_page, (page - 1) * per_page)
        return respond({"data": items, "pagination": {"page": page, "per_page": per_page, "total": total}})

    async def get_workspace(self, request: Request) -> Response:
        who = await self.principal(request)
        if who is None:
            return error(401, "invalid or missing API key", "unauthenticated")
        try:
            wid = uuid.UUID(request.path_params["id"])
        except ValueError:
            return error(404, "workspace not found", "not_found")
        data = await self.detail(wid, who[1])
        if data is None:
            return error(404, "workspace not found", "not_found")
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
        await self.insert(row)
        return respond({"data": {f: row[f] for f in FIELDS}}, 201)


class Floor(Handlers):
    """SQLAlchemy Core on the async engine."""

    def __init__(self, url: str, previous: bool = False) -> None:
        url = normalise(url)
        self.previous = previous
        self.stmt = Statements(prebuilt=not previous)
        self.sqlite = url.startswith("sqlite")
        # PostgreSQL: a fixed pool the size of the product's default. The previous floor's 10 plus
        # 20 overflow opened and closed a connection on most requests under 32 connections of
        # load (overflow connections close on return), which made both apps look slow.
        pool = {"pool_size": 10, "max_overflow": 20} if previous else {"pool_size": POOL, "max_overflow": 0}
        kwargs: dict[str, Any] = {} if self.sqlite else pool
        # Imported here: the raw floor uses no async engine, and loading it costs 1.5 MB resident.
        from sqlalchemy.ext.asyncio import create_async_engine

        self.engine: AsyncEngine = create_async_engine(url, **kwargs)
        self.write_lock = asyncio.Lock()
        if self.sqlite:

            @event.listens_for(self.engine.sync_engine, "connect")
            def _connect(dbapi_conn: Any, _rec: Any) -> None:
                dbapi_conn.isolation_level = None  # autocommit: single-statement reads need no BEGIN
                cur = dbapi_conn.cursor()
                for pragma in PRAGMAS:
                    cur.execute(f"PRAGMA {pragma}")
                cur.close()

    async def close(self) -> None:
        await self.engine.dispose()

    async def key_row(self, digest: str) -> tuple[Any, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(self.stmt["key"], {"digest": digest})).first()
        return None if row is None else (row[0], row[1])

    def _rows(self, rows: Any) -> list[dict[str, Any]]:
        if self.previous:
            return [dict(r._mapping) for r in rows]
        return [dict(zip(FIELDS, r, strict=True)) for r in rows]

    async def page(self, org: Any, limit: int, offset: int) -> tuple[int, list[dict[str, Any]]]:
        async with self.engine.connect() as conn:
            total = (await conn.execute(self.stmt["count"], {"org": org})).scalar_one()
            items = self._rows(await conn.execute(self.stmt["page"], {"org": org, "limit": limit, "offset": offset}))
        return total, items

    async def detail(self, wid: uuid.UUID, org: Any) -> dict[str, Any] | None:
        async with self.engine.connect() as conn:
            row = (await conn.execute(self.stmt["detail"], {"id": wid, "org": org})).first()
            if row is None:
                return None
            data = dict(row._mapping) if self.previous else dict(zip(FIELDS, row, strict=False))
            assessment_id = row[len(FIELDS)]
            data.pop("latest_quality_assessment_id", None)
            data["latest_calculation_run"] = await self._one(conn, "run", data["latest_calculation_run_id"])
            data["latest_pack"] = await self._one(conn, "pack", data["latest_report_pack_id"])
            data["latest_quality_assessment"] = await self._one(conn, "assessment", assessment_id)
        return data

    async def insert(self, row: dict[str, Any]) -> None:
        if self.sqlite:
            async with self.write_lock, self.engine.connect() as conn:
                await conn.exec_driver_sql("BEGIN IMMEDIATE")
                await conn.execute(self.stmt["insert"], row)
                await conn.exec_driver_sql("COMMIT")
        else:
            async with self.engine.begin() as conn:
                await conn.execute(self.stmt["insert"], row)

    async def _one(self, conn: Any, name: str, row_id: Any) -> dict[str, Any] | None:
        if row_id is None:
            return None
        row = (await conn.execute(self.stmt[name], {"id": row_id})).first()
        if row is None:
            return None
        return dict(row._mapping) if self.previous else dict(zip(row._fields, row, strict=True))


PRAGMAS = ("journal_mode=WAL", "foreign_keys=ON", "busy_timeout=10000", "synchronous=NORMAL")
ONE_BY_ID = {"run": RUN, "pack": PACK, "assessment": ASSESSMENT}
# The insert names every column the Core insert sends (its Python-side defaults included).
INSERT_COLUMNS = (*FIELDS, "data_version", "row_version")
INSERT_DEFAULTS = {"data_version": 0, "row_version": 1}


class Compiled:
    """A Core statement's SQL for one dialect, with the order its parameters bind in and the
    values of the literals Core bound itself (the detail's ``LIMIT 1``)."""

    def __init__(self, stmt: Any, dialect: Any, column_keys: list[str] | None = None) -> None:
        compiled = stmt.compile(dialect=dialect, column_keys=column_keys)
        self.sql: str = compiled.string
        self.names: list[str] = list(compiled.positiontup or [])
        self.fixed: dict[str, Any] = dict(compiled.params)

    def args(self, **given: Any) -> list[Any]:
        return [given[n] if n in given else self.fixed[n] for n in self.names]


def _compile_all(dialect: Any) -> dict[str, Compiled]:
    built = Statements(prebuilt=True)
    out = {name: Compiled(built[name], dialect) for name in BUILDERS if name != "insert"}
    out["insert"] = Compiled(built["insert"], dialect, list(INSERT_COLUMNS))
    return out


# SQLite as SQLAlchemy stores it: Uuid as 32 hex digits, DateTime as "YYYY-MM-DD HH:MM:SS.ffffff"
# (UTC, naive), Date as ISO text. Reads convert back to the values the Core floor renders.
def _uuid_out(value: Any) -> Any:
    return None if value is None else uuid.UUID(hex=value)


def _datetime_out(value: Any) -> Any:
    return None if value is None else datetime.fromisoformat(value)


def _date_out(value: Any) -> Any:
    return None if value is None else date.fromisoformat(value)


def _identity(value: Any) -> Any:
    return value


def _sqlite_in(value: Any) -> Any:
    if isinstance(value, uuid.UUID):
        return value.hex
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value.strftime("%Y-%m-%d %H:%M:%S.%f")
    if isinstance(value, date):
        return value.isoformat()
    return value


def _converter(column: Any) -> Callable[[Any], Any]:
    kind = getattr(column.type, "impl", column.type)  # a TypeDecorator (UTC datetimes) by what it stores
    if isinstance(kind, Uuid):
        return _uuid_out
    if isinstance(kind, DateTime):
        return _datetime_out
    if isinstance(kind, Date):
        return _date_out
    return _identity  # text, numbers; JSON columns stay their stored text, as Core's JSON would not


WORKSPACE_OUT = [_converter(WORKSPACE.c[f]) for f in FIELDS]
ONE_OUT = {name: [(c.name, _converter(c)) for c in table.c] for name, table in ONE_BY_ID.items()}


class RawSqlite(Handlers):
    """aiosqlite directly: one statement, one hop to the connection's thread. One reader
    connection (aiosqlite runs its calls one at a time anyway) and one writer, so that a write's
    ``BEGIN IMMEDIATE`` never holds up a read."""

    def __init__(self, url: str) -> None:
        self.path = make_url(url).database or ":memory:"
        self.sql = _compile_all(sqlite_dialect.dialect())
        self.reader: Any = None
        self.writer: Any = None
        self.write_lock = asyncio.Lock()

    async def _open(self) -> Any:
        import aiosqlite

        conn = await aiosqlite.connect(self.path, isolation_level=None)
        for pragma in PRAGMAS:
            await conn.execute(f"PRAGMA {pragma}")
        return conn

    async def start(self) -> None:
        self.reader = await self._open()
        self.writer = await self._open()

    async def close(self) -> None:
        for conn in (self.reader, self.writer):
            if conn is not None:
                await conn.close()

    async def _all(self, name: str, **given: Any) -> list[Any]:
        st = self.sql[name]
        return list(await self.reader.execute_fetchall(st.sql, [_sqlite_in(v) for v in st.args(**given)]))

    async def key_row(self, digest: str) -> tuple[Any, Any] | None:
        rows = await self._all("key", digest=digest)
        return None if not rows else (uuid.UUID(hex=rows[0][0]), uuid.UUID(hex=rows[0][1]))

    async def page(self, org: Any, limit: int, offset: int) -> tuple[int, list[dict[str, Any]]]:
        total = (await self._all("count", org=org))[0][0]
        rows = await self._all("page", org=org, limit=limit, offset=offset)
        return total, [{f: conv(v) for f, conv, v in zip(FIELDS, WORKSPACE_OUT, r, strict=True)} for r in rows]

    async def detail(self, wid: uuid.UUID, org: Any) -> dict[str, Any] | None:
        rows = await self._all("detail", id=wid, org=org)
        if not rows:
            return None
        row = rows[0]
        data = {f: conv(v) for f, conv, v in zip(FIELDS, WORKSPACE_OUT, row, strict=False)}
        data["latest_calculation_run"] = await self._one("run", data["latest_calculation_run_id"])
        data["latest_pack"] = await self._one("pack", data["latest_report_pack_id"])
        data["latest_quality_assessment"] = await self._one("assessment", _uuid_out(row[len(FIELDS)]))
        return data

    async def _one(self, name: str, row_id: Any) -> dict[str, Any] | None:
        if row_id is None:
            return None
        rows = await self._all(name, id=row_id)
        return None if not rows else {n: conv(v) for (n, conv), v in zip(ONE_OUT[name], rows[0], strict=True)}

    async def insert(self, row: dict[str, Any]) -> None:
        st = self.sql["insert"]
        args = [_sqlite_in(v) for v in st.args(**INSERT_DEFAULTS, **row)]
        async with self.write_lock:
            await self.writer.execute("BEGIN IMMEDIATE")
            try:
                await self.writer.execute(st.sql, args)
            except BaseException:
                await self.writer.execute("ROLLBACK")
                raise
            await self.writer.execute("COMMIT")


class RawPostgres(Handlers):
    """asyncpg directly, a fixed pool like the product's; reads outside a transaction."""

    def __init__(self, url: str) -> None:
        # Imported here, like the product's: on SQLite neither loads PostgreSQL's dialect (~2 MB).
        from sqlalchemy.dialects.postgresql import asyncpg as asyncpg_dialect

        self.dsn = "postgresql://" + url.split("://", 1)[1]
        self.sql = _compile_all(asyncpg_dialect.dialect())
        self.pool: Any = None

    async def start(self) -> None:
        import asyncpg

        self.pool = await asyncpg.create_pool(self.dsn, min_size=POOL, max_size=POOL)

    async def close(self) -> None:
        if self.pool is not None:
            await self.pool.close()

    async def key_row(self, digest: str) -> tuple[Any, Any] | None:
        st = self.sql["key"]
        row = await self.pool.fetchrow(st.sql, *st.args(digest=digest))
        return None if row is None else (row[0], row[1])

    async def page(self, org: Any, limit: int, offset: int) -> tuple[int, list[dict[str, Any]]]:
        count, page = self.sql["count"], self.sql["page"]
        async with self.pool.acquire() as conn:
            total = await conn.fetchval(count.sql, *count.args(org=org))
            rows = await conn.fetch(page.sql, *page.args(org=org, limit=limit, offset=offset))
        return total, [dict(zip(FIELDS, r, strict=True)) for r in rows]

    async def detail(self, wid: uuid.UUID, org: Any) -> dict[str, Any] | None:
        st = self.sql["detail"]
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow(st.sql, *st.args(id=wid, org=org))
            if row is None:
                return None
            data = dict(zip(FIELDS, row, strict=False))
            data["latest_calculation_run"] = await self._one(conn, "run", data["latest_calculation_run_id"])
            data["latest_pack"] = await self._one(conn, "pack", data["latest_report_pack_id"])
            data["latest_quality_assessment"] = await self._one(conn, "assessment", row[len(FIELDS)])
        return data

    async def _one(self, conn: Any, name: str, row_id: Any) -> dict[str, Any] | None:
        if row_id is None:
            return None
        st = self.sql[name]
        row = await conn.fetchrow(st.sql, *st.args(id=row_id))
        return None if row is None else dict(row.items())

    async def insert(self, row: dict[str, Any]) -> None:
        st = self.sql["insert"]
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(st.sql, *st.args(**INSERT_DEFAULTS, **row))


def make_floor(url: str, mode: str = "core", previous: bool = False) -> Handlers:
    """``core``: SQLAlchemy Core; ``raw``: aiosqlite or asyncpg directly, by the URL's scheme."""
    if mode == "core" or previous:
        return Floor(url, previous=previous)
    if mode != "raw":
        raise ValueError(f"BENCH_FLOOR_MODE must be core or raw, not {mode!r}")
    url = normalise(url)
    return RawSqlite(url) if url.startswith("sqlite") else RawPostgres(url)


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
    floor = make_floor(
        os.environ["BENCH_FLOOR_DATABASE_URL"],
        mode=os.environ.get("BENCH_FLOOR_MODE", "core"),
        previous=os.environ.get("BENCH_FLOOR_VARIANT") == "previous",
    )

    async def healthz(_request: Request) -> Response:
        return respond({"status": "ok"})

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        start = getattr(floor, "start", None)
        if start is not None:
            await start()
        try:
            yield
        finally:
            await floor.close()

    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET"]),
            Route("/api/v2/workspaces", floor.list_workspaces, methods=["GET"]),
            Route("/api/v2/workspaces", floor.create_workspace, methods=["POST"]),
            Route("/api/v2/workspaces/{id}", floor.get_workspace, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
    app.state.floor = floor
    if isinstance(floor, Floor):
        app.state.engine = floor.engine
    return app
