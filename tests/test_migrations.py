"""Alembic owns the schema (DESIGN.md §11): the revisions build what the models describe, a
database from 0.1.0 is adopted in place, and PostgreSQL is only migrated when asked to."""

from __future__ import annotations

import asyncio
import os
import re
import sqlite3
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from pprint import pformat
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata, produce_migrations, render_python_code
from alembic.runtime.migration import MigrationContext

from evidence_gateway.store import migrate, sqlite_text_search, text_search
from evidence_gateway.store.db import Database
from tests.conftest import PG_AVAILABLE, PG_HOST, PG_PORT, PG_USER, _admin
from tests.test_cli import CLI, free_port, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
needs_pg = pytest.mark.skipif(not PG_AVAILABLE, reason="no PostgreSQL on 127.0.0.1:5432")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=needs_pg)])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of its own (not the run's shared one): these tests start from nothing."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
    else:
        yield from _fresh_pg()


@pytest.fixture
def empty_pg_url() -> Iterator[str]:
    if not PG_AVAILABLE:
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    yield from _fresh_pg()


def _fresh_pg() -> Iterator[str]:
    name = f"evidence_mig_{uuid.uuid4().hex[:12]}"
    asyncio.run(_admin(f'CREATE DATABASE "{name}"'))
    try:
        yield f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _on(url: str, work: Any) -> Any:
    """Run ``work(db)`` (a coroutine function) on a Database of its own."""

    async def run() -> Any:
        db = Database(url)
        try:
            return await work(db)
        finally:
            await db.dispose()

    return asyncio.run(run())


def _sync(url: str, work: Any) -> Any:
    """Run ``work(connection)`` (plain SQLAlchemy, as Alembic wants it) in a committed transaction."""

    async def run(db: Database) -> Any:
        async with db.engine.begin() as conn:
            return await conn.run_sync(work)

    return _on(url, run)


def _cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "EVIDENCE_MIGRATE"}
    env["EVIDENCE_SECRET_KEY"] = "migration-tests"
    return env


# -- Drift: the revisions and the models agree ---------------------------------------------


def test_revisions_build_what_the_models_describe(empty_url: str) -> None:
    """Every revision from base, then autogenerate's comparison: any difference is a missing revision."""
    assert _on(empty_url, lambda db: migrate.upgrade(db, replay=True)) == migrate.head()

    def differences(conn: sa.Connection) -> tuple[list[Any], str]:
        ctx = MigrationContext.configure(conn, opts=migrate.context_options(conn))
        diffs = compare_metadata(ctx, migrate.load_models())
        needed = produce_migrations(ctx, migrate.load_models()).upgrade_ops
        return diffs, "" if needed is None or needed.is_empty() else render_python_code(needed)

    diffs, code = _sync(empty_url, differences)
    assert diffs == [], (
        f"the models and the migrations disagree on {empty_url.split(':')[0]}; differences:\n{pformat(diffs)}\n"
        f"a new revision would need:\n{code}\n"
        "write it with the autogenerate command in alembic.ini (against a database built by replaying revisions)"
    )


def test_the_shortcut_for_empty_databases_stamps_head(empty_url: str) -> None:
    """create_all + stamp (what start-up does on an empty database) lands on head with seeded data."""
    assert _on(empty_url, migrate.upgrade) == migrate.head()
    assert _on(empty_url, migrate.status) == migrate.Status(migrate.State.CURRENT, migrate.head(), migrate.head())
    # A second upgrade finds nothing to do.
    assert _on(empty_url, migrate.upgrade) == migrate.head()
    factors = _sync(empty_url, lambda c: c.execute(sa.text("SELECT count(*) FROM emission_factor")).scalar_one())
    assert factors > 0


# -- Adoption: a database made by 0.1.0 ----------------------------------------------------

_v0 = sa.MetaData()
_ORG = sa.Table(
    "organization",
    _v0,
    sa.Column("id", sa.Uuid),
    sa.Column("name", sa.String),
    sa.Column("webhook_signing_secret", sa.String),
    sa.Column("created_at", sa.DateTime(timezone=True)),
)
_KEY = sa.Table(
    "api_key",
    _v0,
    sa.Column("id", sa.Uuid),
    sa.Column("org_id", sa.Uuid),
    sa.Column("key_hash", sa.String),
    sa.Column("display_prefix", sa.String),
    sa.Column("created_at", sa.DateTime(timezone=True)),
)
_WORKSPACE = sa.Table(
    "workspace",
    _v0,
    sa.Column("id", sa.Uuid),
    sa.Column("org_id", sa.Uuid),
    sa.Column("name", sa.String),
    sa.Column("status", sa.String),
    sa.Column("created_at", sa.DateTime(timezone=True)),
    sa.Column("updated_at", sa.DateTime(timezone=True)),
)
_RUN = sa.Table(
    "calculation_run",
    _v0,
    sa.Column("id", sa.Uuid),
    sa.Column("workspace_id", sa.Uuid),
    sa.Column("org_id", sa.Uuid),
    sa.Column("status", sa.String),
    sa.Column("assumptions_snapshot_json", sa.JSON),
    sa.Column("shipment_count", sa.Integer),
    sa.Column("totals_by_mode_json", sa.JSON),
    sa.Column("error_message", sa.String),
    sa.Column("created_at", sa.DateTime(timezone=True)),
)


def _make_v0_database(url: str) -> dict[str, uuid.UUID]:
    """Load 0.1.0's frozen create_all DDL and write rows the way 0.1.0 stored them."""
    if url.startswith("sqlite"):
        with sqlite3.connect(url.split(":///", 1)[1]) as conn:
            conn.executescript((FIXTURES / "schema_v0_1_0_sqlite.sql").read_text())
    else:

        async def load() -> None:
            import asyncpg

            conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, database=url.rsplit("/", 1)[1])
            try:
                await conn.execute((FIXTURES / "schema_v0_1_0_postgresql.sql").read_text())
            finally:
                await conn.close()

        asyncio.run(load())
    ids = {"org": uuid.uuid4(), "key": uuid.uuid4(), "workspace": uuid.uuid4(), "run": uuid.uuid4()}
    at = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)

    def write(conn: sa.Connection) -> None:
        conn.execute(_ORG.insert().values(id=ids["org"], name="acme", webhook_signing_secret="whsec_x", created_at=at))
        conn.execute(
            _KEY.insert().values(
                id=ids["key"], org_id=ids["org"], key_hash="a" * 64, display_prefix="evk_aaaa", created_at=at
            )
        )
        conn.execute(
            _WORKSPACE.insert().values(
                id=ids["workspace"],
                org_id=ids["org"],
                name="EU road 2025",
                status="draft",
                created_at=at,
                updated_at=at,
            )
        )
        # 0.1.0 left a run "running" forever when its process died mid-calculation.
        conn.execute(
            _RUN.insert().values(
                id=ids["run"],
                workspace_id=ids["workspace"],
                org_id=ids["org"],
                status="running",
                assumptions_snapshot_json={},
                shipment_count=0,
                totals_by_mode_json={},
                created_at=at,
            )
        )

    _sync(url, write)
    return ids


@pytest.mark.slow
def test_a_database_from_0_1_0_is_adopted_not_rebuilt(empty_url: str, tmp_path: Path) -> None:
    ids = _make_v0_database(empty_url)
    assert _on(empty_url, migrate.status).state is migrate.State.UNVERSIONED

    before = run_cli("db", "current", "--database-url", empty_url, env=_cli_env(tmp_path), cwd=tmp_path)
    assert before.returncode == 1 and before.stdout.startswith("none (tables from before migrations")

    upgraded = run_cli("db", "upgrade", "--database-url", empty_url, env=_cli_env(tmp_path), cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert upgraded.stdout == migrate.head() + "\n"
    assert _on(empty_url, migrate.current) == migrate.head()

    def rows(conn: sa.Connection) -> tuple[Any, ...]:
        return (
            conn.execute(sa.select(_ORG.c.id, _ORG.c.name)).all(),
            conn.execute(sa.select(_KEY.c.id, _KEY.c.org_id, _KEY.c.key_hash)).all(),
            conn.execute(sa.select(_WORKSPACE.c.id, _WORKSPACE.c.name, _WORKSPACE.c.status)).all(),
            conn.execute(sa.select(_RUN.c.id, _RUN.c.status, _RUN.c.error_message)).all(),
            conn.execute(sa.text("SELECT data_version, row_version FROM workspace")).all(),
            conn.execute(sa.text("SELECT list_name, row_count FROM list_count ORDER BY list_name")).all(),
        )

    orgs, keys, workspaces, runs, versions, counts = _sync(empty_url, rows)
    # 0020 counted the rows already there: the unfiltered lists' totals read these.
    assert [tuple(c) for c in counts] == [("calculation_run", 1), ("workspace", 1)]
    assert orgs == [(ids["org"], "acme")]
    assert keys == [(ids["key"], ids["org"], "a" * 64)]
    assert workspaces == [(ids["workspace"], "EU road 2025", "draft")]
    # Revision 2 fails work that 0.1.0 could never finish, and gives new columns their defaults.
    assert [(r[0], r[1]) for r in runs] == [(ids["run"], "failed")] and runs[0][2].startswith("interrupted")
    assert [tuple(v) for v in versions] == [(0, 1)]

    after = run_cli("db", "current", "--database-url", empty_url, env=_cli_env(tmp_path), cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    assert after.stdout == f"{migrate.head()} (head)\n"


def test_unversioned_tables_that_are_not_0_1_0_are_refused(empty_url: str, tmp_path: Path) -> None:
    _make_v0_database(empty_url)
    _sync(empty_url, lambda c: c.execute(sa.text("ALTER TABLE workspace ADD COLUMN colour VARCHAR(20)")))

    refused = run_cli("db", "upgrade", "--database-url", empty_url, env=_cli_env(tmp_path), cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
    assert (
        f"do not match revision {migrate.BASELINE}" in refused.stderr
        and "workspace has unexpected colour" in refused.stderr
    )
    # Nothing was stamped or changed.
    assert _on(empty_url, migrate.status).state is migrate.State.UNVERSIONED


def test_a_database_from_newer_code_is_refused(empty_url: str) -> None:
    _on(empty_url, migrate.upgrade)
    _sync(empty_url, lambda c: c.execute(sa.text("UPDATE alembic_version SET version_num = '9999_from_the_future'")))

    for allowed in (False, True):
        with pytest.raises(migrate.SchemaAhead, match="9999_from_the_future, which this version does not know"):
            _on(empty_url, lambda db, allowed=allowed: migrate.prepare(db, migrate=allowed))


# -- PostgreSQL is migrated only when asked ------------------------------------------------


@needs_pg
def test_postgresql_start_up_refuses_a_schema_behind_head(empty_pg_url: str) -> None:
    with pytest.raises(migrate.SchemaNotCurrent) as refused:
        _on(empty_pg_url, lambda db: migrate.prepare(db, migrate=False))
    message = str(refused.value)
    assert "\n" not in message
    assert "evidence-gateway db upgrade" in message and "serve --migrate" in message
    assert _on(empty_pg_url, migrate.status).state is migrate.State.EMPTY  # nothing created

    _on(empty_pg_url, lambda db: migrate.prepare(db, migrate=True))
    assert _on(empty_pg_url, migrate.is_at_head)
    _on(empty_pg_url, lambda db: migrate.prepare(db, migrate=False))  # at head: starts


@needs_pg
def test_concurrent_upgraders_on_postgresql_queue_on_the_lock(empty_pg_url: str) -> None:
    async def race() -> list[str]:
        dbs = [Database(empty_pg_url) for _ in range(3)]
        try:
            return list(await asyncio.gather(*(migrate.upgrade(db) for db in dbs)))
        finally:
            for db in dbs:
                await db.dispose()

    assert asyncio.run(race()) == [migrate.head()] * 3
    versions = _sync(empty_pg_url, lambda c: c.execute(sa.text("SELECT version_num FROM alembic_version")).all())
    assert versions == [(migrate.head(),)]


def _start_serve(tmp_path: Path, url: str, *extra: str) -> tuple[subprocess.Popen[bytes], str, Path]:
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [*CLI, "serve", "--port", str(port), "--database-url", url, *extra],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=_cli_env(tmp_path),
            cwd=tmp_path,
        )
    return proc, f"http://127.0.0.1:{port}", log


def _wait_healthy(proc: subprocess.Popen[bytes], base: str, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"serve exited with {proc.returncode}:\n{log.read_text()}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    pytest.fail(f"serve did not answer /healthz within 60 s:\n{log.read_text()}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@needs_pg
@pytest.mark.slow
@pytest.mark.parametrize("made_by", ["nothing", "0.1.0"])
def test_serve_on_postgresql_needs_migrate_to_move_the_schema(empty_pg_url: str, tmp_path: Path, made_by: str) -> None:
    if made_by == "0.1.0":
        _make_v0_database(empty_pg_url)

    proc, _base, log = _start_serve(tmp_path, empty_pg_url)
    try:
        proc.wait(timeout=60)
    finally:
        _stop(proc)
    output = log.read_text()
    assert proc.returncode != 0
    assert "Traceback" not in output
    [line] = output.splitlines()
    assert line.startswith("error: database ")
    assert "evidence-gateway db upgrade" in line and "serve --migrate" in line

    proc, base, log = _start_serve(tmp_path, empty_pg_url, "--migrate", "--workers", "2")
    try:
        _wait_healthy(proc, base, log)
    finally:
        _stop(proc)
    assert _on(empty_pg_url, migrate.current) == migrate.head()


@pytest.mark.slow
def test_serve_on_sqlite_upgrades_by_itself(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'served.db'}"
    proc, base, log = _start_serve(tmp_path, url, "--graceful-timeout", "5")
    try:
        _wait_healthy(proc, base, log)
    finally:
        _stop(proc)
    assert "Application shutdown complete" in log.read_text()
    assert _on(url, migrate.current) == migrate.head()


async def test_sqlite_connections_enforce_foreign_keys_after_an_upgrade(tmp_path: Path) -> None:
    """The upgrade switches keys off on its connection; the pool must get it back with them on,
    or deletes stop cascading (and references stop being checked) on whichever request draws it."""
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'fk.db'}")
    try:
        await migrate.prepare(db)
        async with db.engine.connect() as conn:  # the pool's one connection: the upgrade's
            assert (await conn.exec_driver_sql("PRAGMA foreign_keys")).scalar() == 1
    finally:
        await db.dispose()


# -- Down and up again; one name per constraint --------------------------------------------


def _names(conn: sa.Connection) -> dict[str, dict[str, Any]]:
    """Every table's constraint and index names, as the database reports them (but the optional
    trigram indexes of PostgreSQL and FTS5 tables of SQLite, which the models do not hold:
    test_trigram_indexes_*, test_fts_indexes_*)."""
    inspector = sa.inspect(conn)
    return {
        table: {
            "pk": inspector.get_pk_constraint(table)["name"],
            "fk": sorted(
                (
                    (fk["name"], tuple(fk["constrained_columns"]), fk["referred_table"], fk["options"].get("ondelete"))
                    for fk in inspector.get_foreign_keys(table)
                ),
                key=str,
            ),
            "uq": sorted(
                ((uq["name"], tuple(uq["column_names"])) for uq in inspector.get_unique_constraints(table)), key=str
            ),
            # PostgreSQL also lists the index under each unique constraint: that is the constraint.
            "ix": sorted(
                (ix["name"], tuple(ix["column_names"]))
                for ix in inspector.get_indexes(table)
                if not ix.get("duplicates_constraint") and ix["name"] not in text_search.TRIGRAM_NAMES
            ),
        }
        for table in sorted(set(inspector.get_table_names()) - {migrate.VERSION_TABLE} - sqlite_text_search.FTS_NAMES)
    }


def _model_names() -> dict[str, dict[str, Any]]:
    """What the models name them (the naming convention, or a name of their own)."""

    def columns(constraint: Any) -> tuple[str, ...]:
        return tuple(c.name for c in constraint.columns)

    return {
        table.name: {
            "pk": table.primary_key.name,
            "fk": sorted(
                ((fk.name, columns(fk), fk.referred_table.name, fk.ondelete) for fk in table.foreign_key_constraints),
                key=str,
            ),
            "uq": sorted((c.name, columns(c)) for c in table.constraints if isinstance(c, sa.UniqueConstraint)),
            "ix": sorted((ix.name, tuple(c.name for c in ix.columns)) for ix in table.indexes),
        }
        for table in migrate.load_models().sorted_tables
    }


def _revisions() -> list[str]:
    """Every revision, oldest first."""
    return [s.revision for s in migrate._script().walk_revisions()][::-1]


def _upgrade_to(url: str, revision: str) -> None:
    """One step of ``alembic upgrade`` under the same lock and SQLite care as ``db upgrade``."""

    async def run(db: Database) -> None:
        async with migrate._schema_transaction(db) as conn:
            await conn.run_sync(lambda c: command.upgrade(migrate.alembic_config(c), revision))

    _on(url, run)


def _drift(conn: sa.Connection) -> list[Any]:
    ctx = MigrationContext.configure(conn, opts=migrate.context_options(conn))
    return list(compare_metadata(ctx, migrate.load_models()))


def test_the_models_name_every_constraint_within_postgresql_limits() -> None:
    names = _model_names()
    every = [n["pk"] for n in names.values()]
    every += [entry[0] for n in names.values() for kind in ("fk", "uq", "ix") for entry in n[kind]]
    assert all(isinstance(name, str) and 0 < len(name) <= 63 for name in every), every
    assert len(set(every)) == len(every)  # PostgreSQL: one namespace per schema for indexes


@pytest.mark.slow
def test_every_revision_goes_down_to_base_and_up_again(empty_url: str) -> None:
    """From a new database (built from the models, the case 0003's downgrade used to fail on),
    one revision at a time down to base, then up again: the same names, the models' schema."""
    _on(empty_url, migrate.upgrade)
    fresh = _sync(empty_url, _names)
    assert fresh == _model_names()

    revisions = _revisions()
    for below in [*revisions[-2::-1], "base"]:
        done = _on(empty_url, lambda db, below=below: migrate.downgrade(db, below))
        assert len(done.undone) == 1 and done.after == (None if below == "base" else below)
        assert _on(empty_url, migrate.current) == done.after
    assert _sync(empty_url, _names) == {}  # base: no tables left but Alembic's own

    for revision in revisions:
        _upgrade_to(empty_url, revision)
        assert _on(empty_url, migrate.current) == revision
    assert _sync(empty_url, _names) == fresh
    assert _sync(empty_url, _drift) == []


@contextmanager
def _as_before_0009() -> Iterator[None]:
    """Run revisions as the code before 0009 did: without the naming convention, which Alembic
    otherwise applies to every table a revision creates."""
    metadata = migrate.load_models()
    saved = metadata.naming_convention
    metadata.naming_convention = {"ix": "ix_%(column_0_label)s"}  # SQLAlchemy's default
    try:
        yield
    finally:
        metadata.naming_convention = saved


def _create_all_before_0009(conn: sa.Connection) -> None:
    """``create_all`` as the code before 0009 ran it: constraints without names of their own."""
    old = sa.MetaData()
    for table in migrate.load_models().sorted_tables:
        copy = table.to_metadata(old)
        for constraint in copy.constraints:
            if isinstance(constraint.name, sa.sql.elements.conv):
                constraint.name = None
    old.create_all(conn)
    # The models are head's: stamped so, the revisions after 0009 can be undone (below) to leave
    # what 0008's create_all made.
    MigrationContext.configure(conn).stamp(migrate._script(), "heads")


def _made_by_create_all_before_0009(url: str) -> None:
    _sync(url, _create_all_before_0009)
    _on(url, lambda db: migrate.downgrade(db, "0009_naming_convention"))
    _sync(url, lambda conn: MigrationContext.configure(conn).stamp(migrate._script(), "0008_artifact_chunks"))


_ODD_TIMES = {
    "2026-03-01 12:00:00+00:00": "2026-03-01 12:00:00.000000",  # a driver-level insert, a whole second
    "2026-03-01 12:00:00.250000+00:00": "2026-03-01 12:00:00.250000",  # a driver-level insert
    "2026-03-01 12:00:00": "2026-03-01 12:00:00.000000",  # CURRENT_TIMESTAMP in a revision
    "2026-03-01 12:00:00.500000": "2026-03-01 12:00:00.500000",  # SQLAlchemy's own form
}


@pytest.mark.slow
@pytest.mark.parametrize("made_by", ["create_all", "revisions"])
def test_a_database_from_before_0009_gets_the_same_names(empty_url: str, made_by: str) -> None:
    """0009 renames what a database made by earlier code named otherwise (PostgreSQL's defaults,
    SQLite's unnamed constraints, 0003's own foreign key names), and on SQLite rewrites
    timestamps stored in other forms; its downgrade and every earlier one then still run."""
    if made_by == "create_all":
        _made_by_create_all_before_0009(empty_url)
    else:
        with _as_before_0009():
            _upgrade_to(empty_url, "0008_artifact_chunks")
    before = _sync(empty_url, _names)
    assert before != _model_names()
    sqlite_file = empty_url.startswith("sqlite")
    if sqlite_file:
        with sqlite3.connect(empty_url.split(":///", 1)[1]) as conn:
            conn.executemany(
                "INSERT INTO organization (id, name, webhook_signing_secret, created_at) VALUES (?, ?, 'whsec_x', ?)",
                [(uuid.uuid4().hex, f"org-{i}", odd) for i, odd in enumerate(_ODD_TIMES)],
            )
            # JSON as json.dumps wrote it, before the API's one compact encoding.
            conn.execute(
                "INSERT INTO webhook_endpoint (id, org_id, url, description, event_types, enabled, secret, "
                "event_cursor, created_at, updated_at) SELECT ?, id, 'https://h.example', '', ?, 1, 's', 0, "
                "created_at, created_at FROM organization LIMIT 1",
                (uuid.uuid4().hex, '["workspace.created", "pack.published"]'),
            )

    assert _on(empty_url, migrate.upgrade) == migrate.head()
    assert _sync(empty_url, _names) == _model_names()
    assert _sync(empty_url, _drift) == []
    if sqlite_file:
        with sqlite3.connect(empty_url.split(":///", 1)[1]) as conn:
            stored = dict(conn.execute("SELECT name, created_at FROM organization WHERE name LIKE 'org-%'").fetchall())
        assert stored == {f"org-{i}": canonical for i, canonical in enumerate(_ODD_TIMES.values())}
        with sqlite3.connect(empty_url.split(":///", 1)[1]) as conn:
            assert conn.execute("SELECT event_types FROM webhook_endpoint").fetchall() == [
                ('["workspace.created","pack.published"]',)
            ]

    done = _on(empty_url, lambda db: migrate.downgrade(db, "base"))
    assert done.undone == tuple(_revisions()[::-1])
    assert _sync(empty_url, _names) == {}


def test_db_downgrade_says_what_it_did_and_refuses_what_it_cannot(empty_url: str, tmp_path: Path) -> None:
    _on(empty_url, migrate.upgrade)
    env, head = _cli_env(tmp_path), migrate.head()
    previous = _revisions()[-2]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli("db", *args, "--database-url", empty_url, env=env, cwd=tmp_path)

    for refused, reason in [
        ("0042_no_such_thing", "unknown revision '0042_no_such_thing' (this version knows base, "),
        (head, "nothing to do"),
    ]:
        answer = cli("downgrade", refused)
        if reason == "nothing to do":
            assert answer.returncode == 0 and answer.stdout == f"already at {head}: nothing to do\n"
            continue
        assert answer.returncode == 1 and answer.stdout == ""
        assert answer.stderr.startswith(f"error: {reason}") and answer.stderr.count("\n") == 1

    down = cli("downgrade", previous)
    assert down.returncode == 0, down.stderr
    assert down.stdout == f"downgraded {head} -> {previous}; undid {head}\n"
    current = cli("current")
    assert (current.returncode, current.stdout) == (1, f"{previous} (behind head {head})\n")

    newer = cli("downgrade", head)
    assert newer.returncode == 1 and newer.stdout == ""
    assert (
        newer.stderr
        == f"error: {head} is newer than the database's revision {previous}: use `evidence-gateway db upgrade`\n"
    )

    assert cli("upgrade").stdout == f"{head}\n"
    assert cli("current").stdout == f"{head} (head)\n"


def test_the_docs_show_db_current_at_todays_head() -> None:
    """The README and the operations guide quote `db current`'s output at head: the revision they
    name as head is the code's head, so the example is what an operator sees today."""
    root = Path(__file__).parent.parent
    head = migrate.head()
    for doc in (root / "README.md", root / "docs" / "operations.md"):
        text = doc.read_text()
        named = re.findall(r"`(\w+) \(head\)`", text) + re.findall(r"\(behind head (\w+)\)", text)
        assert named, f"{doc.name} no longer shows db current's output"
        assert set(named) == {head}, (doc.name, named)


def _trigram_indexes(conn: sa.Connection) -> set[str]:
    inspector = sa.inspect(conn)
    return {
        ix["name"]
        for table in inspector.get_table_names()
        for ix in inspector.get_indexes(table)
        if ix["name"] in text_search.TRIGRAM_NAMES
    }


def test_trigram_indexes_come_with_the_schema_on_postgresql(empty_pg_url: str) -> None:
    """Built from the models or by the revision, PostgreSQL gets pg_trgm's indexes for the
    substring filters; 0021's downgrade removes them."""
    _on(empty_pg_url, migrate.upgrade)
    assert _sync(empty_pg_url, _trigram_indexes) == set(text_search.TRIGRAM_NAMES)
    _on(empty_pg_url, lambda db: migrate.downgrade(db, "0018_pact_sharing"))
    assert _sync(empty_pg_url, _trigram_indexes) == set()
    _on(empty_pg_url, migrate.upgrade)
    assert _sync(empty_pg_url, _trigram_indexes) == set(text_search.TRIGRAM_NAMES)
    assert _sync(empty_pg_url, _drift) == []  # optional indexes: no drift


def test_without_pg_trgm_the_schema_still_reaches_head(tmp_path: Path) -> None:
    """A role that may not create extensions (no CREATE on its database): both ways to head
    succeed without the trigram indexes, and a substring filter still answers."""
    if not PG_AVAILABLE:
        pytest.skip("no PostgreSQL on 127.0.0.1:5432")
    import asyncpg

    suffix = uuid.uuid4().hex[:10]
    name, role = f"evidence_mig_{suffix}", f"evidence_noext_{suffix}"

    async def setup() -> None:
        await _admin(f'CREATE DATABASE "{name}"')
        await _admin(f'CREATE ROLE "{role}" LOGIN')
        conn = await asyncpg.connect(host=PG_HOST, port=PG_PORT, user=PG_USER, database=name)
        try:  # tables in public, but no CREATE on the database: CREATE EXTENSION is refused
            await conn.execute(f'ALTER SCHEMA public OWNER TO "{role}"')
        finally:
            await conn.close()

    asyncio.run(setup())
    url = f"postgresql+asyncpg://{role}@{PG_HOST}:{PG_PORT}/{name}"
    try:
        assert _on(url, migrate.upgrade) == migrate.head()  # from the models
        assert _sync(url, _trigram_indexes) == set()
        _on(url, lambda db: migrate.downgrade(db, "0018_pact_sharing"))
        assert _on(url, migrate.upgrade) == migrate.head()  # by the revision
        assert _sync(url, _trigram_indexes) == set()
    finally:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        asyncio.run(_admin(f'DROP ROLE IF EXISTS "{role}"'))
