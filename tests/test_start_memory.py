"""What a serving process loads (issue 29: resident memory after load): the pack renderers and
their libraries, Alembic, the time-stamp authority's ASN.1, httpx (outgoing requests), asyncpg and
SQLAlchemy's PostgreSQL dialect (on SQLite), cryptography (RS256 tokens, PEM keys) and tarfile
(`graphiql fetch`) stay out until something uses them; structlog, rich and pygments never come in
(the log lines have a formatter of their own); and the source files read at start-up are not kept."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, create_engine, text

from evidence_gateway.store import migrate, sqlite_pragmas, sqlite_reads
from evidence_gateway.store.db import Database
from evidence_gateway.store.revisions import recorded_revisions, stamp_empty

DEFERRED = (
    "alembic",
    "reportlab",
    "xlsxwriter",
    "PIL",
    "asn1crypto",
    "httpx",
    "asyncpg",
    "sqlalchemy.dialects.postgresql",
    "cryptography",
    "tarfile",
)
# The pack renderers of our own (artifacts/__init__.py loads them with the first pack).
RENDERERS = tuple(
    f"evidence_gateway.artifacts.{m}" for m in ("ileap", "iso_report", "methodology_statement", "audit_trail")
)
WATCHED = (*DEFERRED, *RENDERERS)
NEVER = ("structlog", "rich", "pygments")

_SERVE = """
import asyncio, sys
import evidence_gateway.cli.commands_serve  # what `serve` loads besides the app
from evidence_gateway.app import create_app
from evidence_gateway.settings import Settings

async def main():
    app = create_app(Settings(database_url=sys.argv[1], secret_key="s" * 40, background_work=False, dispatcher=False))
    async with app.router.lifespan_context(app):
        pass

asyncio.run(main())
print(" ".join(m for m in sys.argv[2:] if m in sys.modules) or "none")
"""


_SOURCES_KEPT = """
import asyncio, linecache, sys
from evidence_gateway.app import create_app
from evidence_gateway.settings import Settings

async def main():
    app = create_app(Settings(database_url=sys.argv[1], secret_key="s" * 40, background_work=False, dispatcher=False))
    read = sum(1 for entry in linecache.cache.values() if len(entry) == 4 and entry[1] is not None)
    async with app.router.lifespan_context(app):
        kept = sum(1 for entry in linecache.cache.values() if len(entry) == 4 and entry[1] is not None)
    print(read, kept)

asyncio.run(main())
"""


async def _at_head(url: str) -> None:
    db = Database(url)
    try:
        await migrate.upgrade(db)
    finally:
        await db.dispose()


def test_a_server_starting_on_a_database_at_head_loads_none_of_them(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}"
    asyncio.run(_at_head(url))
    started = subprocess.run(
        [sys.executable, "-c", _SERVE, url, *WATCHED, *NEVER], capture_output=True, text=True, timeout=120, check=False
    )
    assert started.returncode == 0, started.stderr[-2000:]
    assert started.stdout.split()[-1] == "none", started.stdout


def test_the_source_files_read_for_field_docstrings_are_not_kept_once_serving(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}"
    asyncio.run(_at_head(url))
    started = subprocess.run(
        [sys.executable, "-c", _SOURCES_KEPT, url], capture_output=True, text=True, timeout=120, check=False
    )
    assert started.returncode == 0, started.stderr[-2000:]
    read, kept = (int(n) for n in started.stdout.split()[-2:])
    assert read > 0  # the input models' field docstrings came from their source files
    assert kept == 0


def test_a_server_starting_on_an_empty_database_builds_it_and_loads_none_of_them(tmp_path: Path) -> None:
    """The README's first start: ``serve`` builds the schema itself, and Alembic, once loaded,
    would stay resident for the life of the process (about 10 MB)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}"
    started = subprocess.run(
        [sys.executable, "-c", _SERVE, url, *WATCHED, *NEVER], capture_output=True, text=True, timeout=120, check=False
    )
    assert started.returncode == 0, started.stderr[-2000:]
    assert started.stdout.split()[-1] == "none", started.stdout
    assert asyncio.run(_recorded(url)) == [migrate.head()]


async def _recorded(url: str) -> list[str]:
    db = Database(url)
    try:
        async with db.engine.connect() as conn:
            return await conn.run_sync(recorded_revisions)
    finally:
        await db.dispose()


def test_the_head_recorded_without_alembic_is_what_alembic_records(tmp_path: Path) -> None:
    """Same table, same constraint, same row as ``alembic stamp`` on an empty database, so every
    later ``alembic``/``db`` command reads it as its own."""

    def stamped(path: Path, stamp: Callable[[Connection], None]) -> tuple[list[Any], list[Any]]:
        engine = create_engine(f"sqlite:///{path}")
        try:
            with engine.begin() as conn:
                stamp(conn)
            with engine.connect() as conn:
                ddl = conn.execute(text("SELECT type, name, sql FROM sqlite_master ORDER BY name")).all()
                rows = conn.execute(text("SELECT version_num FROM alembic_version")).all()
                return [tuple(r) for r in ddl], [tuple(r) for r in rows]
        finally:
            engine.dispose()

    def by_alembic(conn: Connection) -> None:
        MigrationContext.configure(conn).stamp(migrate._script(), migrate.head())

    ours = stamped(tmp_path / "ours.db", lambda conn: stamp_empty(conn, migrate.head()))
    alembics = stamped(tmp_path / "alembic.db", by_alembic)
    assert ours == alembics
    assert ours[1] == [(migrate.head(),)]


def test_the_revision_files_read_as_text_agree_with_alembic() -> None:
    script = migrate._script()
    assert [migrate.head()] == list(script.get_heads())
    assert migrate.known_revisions() == {s.revision for s in script.walk_revisions()}


_SIGN = """
import sys
from evidence_gateway.proofs.notes import Checkpoint, SigningKey, sign_note, verify_checkpoint

key = SigningKey.generate("evidence.example")
note = sign_note(Checkpoint("evidence.example/log", 3, bytes(32)).text(), key)
assert verify_checkpoint(note, [key.public_key])[0].size == 3
print("cryptography" in sys.modules)
"""


def test_signing_and_verifying_a_checkpoint_loads_no_cryptography() -> None:
    """A process taking writes signs a checkpoint every few seconds: Ed25519 is PyNaCl's."""
    signed = subprocess.run([sys.executable, "-c", _SIGN], capture_output=True, text=True, timeout=60, check=False)
    assert signed.returncode == 0, signed.stderr[-2000:]
    assert signed.stdout.split()[-1] == "False"


_MAPPERS = """
import asyncio, sys
import httpx
from sqlmodel import SQLModel
from evidence_gateway.app import create_app
from evidence_gateway.resolvers import organizations, tlog
from evidence_gateway.settings import Settings
from evidence_gateway.store import migrate, sqlite_pragmas, sqlite_reads
from evidence_gateway.store.db import Database

async def main():
    settings = Settings(database_url=sys.argv[1], secret_key="s" * 40, background_work=False, dispatcher=False)
    db = Database(sys.argv[1])
    await migrate.upgrade(db)  # what `serve` does first: the schema, the reference data
    key = await organizations.create_api_key(db, "demo")  # and the first start's demo key
    await db.dispose()
    app = create_app(settings)
    headers = {"Authorization": f"Bearer {key}"}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers) as http:
            made = await http.post("/api/v2/workspaces", json={"name": "w"})
            assert made.status_code == 201, made.text
            ws = made.json()["data"]["id"]
            assert (await http.get("/api/v2/workspaces")).status_code == 200
            assert (await http.get(f"/api/v2/workspaces/{ws}")).status_code == 200
            query = "{ workspaces { items { id latestCalculationRun { id } latestPack { id } } } }"
            answer = (await http.post("/graphql", json={"query": query})).json()
            assert answer["data"]["workspaces"]["items"][0]["id"] == ws, answer
            # The background signer's round, then a checkpoint asked for.
            assert await tlog.checkpoint_grown(app.state.db, settings) == 1
            checkpoint = await http.get("/api/v2/log/checkpoint")
            assert checkpoint.json()["data"]["size"] == 2, checkpoint.text  # the key's event, the workspace's
    print("configured" if not SQLModel._sa_registry._new_mappers else "unconfigured")

asyncio.run(main())
"""


def test_serving_workspaces_and_signing_checkpoints_never_configures_the_orm(tmp_path: Path) -> None:
    """SQLAlchemy configures every mapper (about 1.5 MB, kept) the first time an ORM entity or
    ORM-annotated column is used: the start-up (reference data, the demo key), authentication,
    the workspace endpoints and the checkpoint signer all use Core statements and records."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}"
    served = subprocess.run(
        [sys.executable, "-c", _MAPPERS, url], capture_output=True, text=True, timeout=120, check=False
    )
    assert served.returncode == 0, served.stderr[-2000:]
    assert served.stdout.split()[-1] == "unconfigured", served.stdout


async def _cache_sizes(url: str) -> list[int]:
    """The page cache of the engine's, the row readers' and the point reads' connections."""
    db = Database(url)
    try:
        async with db.engine.connect() as conn:  # writes and ORM reads
            found = [(await conn.exec_driver_sql("PRAGMA cache_size")).scalar_one()]
        with db.sync_engines[-1].connect() as reader:  # the row readers
            found.append(reader.exec_driver_sql("PRAGMA cache_size").scalar_one())
        point = sqlite_reads.PointReads(db.sync_engines[-1], [])._connect()  # a detail's point read
        found.append(point.execute("PRAGMA cache_size").fetchone()[0])
        point.close()
        return found
    finally:
        await db.dispose()


def test_sqlite_readers_keep_a_small_page_cache_and_writers_sqlites_default(tmp_path: Path) -> None:
    """Readers at SQLite's default of 2 MB each held about 1 MB more after a load, for caches WAL
    empties whenever another connection commits; a large import's transaction needs the writers'
    (store/sqlite_pragmas.py)."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'evidence.db'}"
    reader = -sqlite_pragmas.READER_CACHE_KIB
    assert asyncio.run(_cache_sizes(url)) == [-2000, reader, reader]
    assert sqlite_pragmas.READER_CACHE_KIB < 2000
