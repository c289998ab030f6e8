"""Alembic owns the schema (DESIGN.md §11); this module is the one place that changes or judges it.

The app, the CLI, ``env.py`` and the tests all come through here, so they share one policy:
which database states exist, when a database may be changed, and the message an operator
sees when it may not. Alembic itself stays an implementation detail: it is configured in
code, from files shipped inside the package, so an installed wheel migrates without an
``alembic.ini``. It loads only when an existing schema changes (store/revisions.py judges the
rest, and records the head in a database built from empty).
"""

from __future__ import annotations

import enum
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Connection, MetaData, create_engine, inspect, text
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlmodel import SQLModel

from evidence_gateway import models  # noqa: F401  (every table registered on SQLModel.metadata)
from evidence_gateway.settings import get_settings
from evidence_gateway.store import sqlite_text_search, text_search
from evidence_gateway.store.db import Database
from evidence_gateway.store.revisions import VERSION_TABLE as VERSION_TABLE
from evidence_gateway.store.revisions import head as head
from evidence_gateway.store.revisions import known_revisions, recorded_revisions, stamp_empty
from evidence_gateway.store.seed import seed_reference_data

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

#: The schema of the last release before Alembic (0.1.0, built by ``create_all``).
BASELINE = "0001_initial"
MIGRATIONS_DIR = Path(__file__).with_name("migrations")

_T = TypeVar("_T")


class SchemaError(RuntimeError):
    """The schema is not one this code may run on; ``str()`` is one line for an operator saying what to do."""


class SchemaNotCurrent(SchemaError):
    """PostgreSQL is behind head and migrating was not allowed: several nodes must not race."""


class SchemaAhead(SchemaError):
    """The database was migrated by newer code; running older code on it would corrupt data."""


class SchemaUnrecognised(SchemaError):
    """Tables exist without a revision and are not the previous release's: we will not guess."""


class State(enum.Enum):
    EMPTY = "empty"
    UNVERSIONED = "unversioned"  # made by create_all before Alembic (0.1.0)
    BEHIND = "behind"
    CURRENT = "current"
    AHEAD = "ahead"


@dataclass(frozen=True)
class Status:
    state: State
    revision: str | None
    head: str

    def describe(self) -> str:
        """One line for ``db current``: the revision first, so scripts can cut it out."""
        if self.state is State.CURRENT:
            return f"{self.revision} (head)"
        if self.state is State.BEHIND:
            return f"{self.revision} (behind head {self.head})"
        if self.state is State.AHEAD:
            return f"{self.revision} (unknown to this version, newer than head {self.head})"
        if self.state is State.UNVERSIONED:
            return f"none (tables from before migrations; `evidence-gateway db upgrade` adopts them; head {self.head})"
        return f"none (empty database; head {self.head})"

    def refusal(self) -> SchemaError:
        """Why this code will not start on this database without migrating, and what to run."""
        todo = "run `evidence-gateway db upgrade`, or start exactly one node with `evidence-gateway serve --migrate`"
        if self.state is State.AHEAD:
            return SchemaAhead(
                f"database schema is at revision {self.revision}, which this version does not know "
                f"(its head is {self.head}): run the newer code, or downgrade the database with it"
            )
        if self.state is State.EMPTY:
            return SchemaNotCurrent(f"database has no schema (head is {self.head}): {todo}")
        if self.state is State.UNVERSIONED:
            return SchemaNotCurrent(f"database was created before migrations (head is {self.head}): {todo}")
        return SchemaNotCurrent(f"database schema is at {self.revision}, behind head {self.head}: {todo}")


# Serialises schema upgrades when several nodes or workers start against one PostgreSQL.
_PG_SCHEMA_LOCK_KEY = 0x45564944


# -- Alembic configuration ---------------------------------------------------------------


def alembic_config(connection: Connection | None = None) -> Config:
    """A Config built in code; ``connection`` is handed to env.py, which then opens nothing itself."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    # Revision ids are chosen by hand (``--rev-id 0002_...``) and name the file.
    cfg.set_main_option("file_template", "%%(rev)s")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


@lru_cache
def _script() -> ScriptDirectory:
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config())


def load_models() -> MetaData:
    """SQLModel.metadata, complete: this module imports every model before anyone compares or creates it."""
    return SQLModel.metadata


def context_options(connection: Connection) -> dict[str, Any]:
    """One set of options for running, autogenerating and drift-checking, so they agree."""
    return {
        "target_metadata": load_models(),
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        "render_as_batch": connection.dialect.name == "sqlite",
        # Types are compared as each dialect compiles them, so sa.Uuid matches PostgreSQL's
        # UUID and SQLite's CHAR(32) alike; the drift test keeps it that way.
        "compare_type": True,
        "compare_server_default": True,
        "include_object": text_search.include_object,  # optional indexes outside the models
    }


# -- Reading the state -------------------------------------------------------------------


def _status_sync(conn: Connection) -> Status:
    target = head()
    recorded = recorded_revisions(conn)
    if len(recorded) > 1:
        raise SchemaError(f"database records {len(recorded)} revisions ({', '.join(recorded)}): merge them first")
    revision = recorded[0] if recorded else None
    if revision is None:
        # Tables that are not ours (a shared PostgreSQL database) do not make it non-empty.
        present = set(inspect(conn).get_table_names()) & set(load_models().tables)
        return Status(State.UNVERSIONED if present else State.EMPTY, None, target)
    if revision == target:
        return Status(State.CURRENT, revision, target)
    if revision in known_revisions():
        return Status(State.BEHIND, revision, target)
    return Status(State.AHEAD, revision, target)


async def status(db: Database) -> Status:
    async with db.engine.connect() as conn:
        return await conn.run_sync(_status_sync)


async def current(db: Database) -> str | None:
    """The revision recorded in the database; None when it has none (empty, or from 0.1.0)."""
    return (await status(db)).revision


async def is_at_head(db: Database) -> bool:
    return (await status(db)).state is State.CURRENT


# -- Recognising the previous release ----------------------------------------------------

_Shape = dict[str, dict[str, bool]]  # table -> column -> nullable


def _shape(conn: Connection, tables: set[str] | None = None) -> _Shape:
    inspector = inspect(conn)
    names = set(inspector.get_table_names()) - {VERSION_TABLE}
    if tables is not None:
        names &= tables
    return {t: {c["name"]: bool(c["nullable"]) for c in inspector.get_columns(t)} for t in sorted(names)}


@lru_cache
def _baseline_shape() -> _Shape:
    """What revision 1 builds, read back from a scratch in-memory SQLite.

    Derived from the revision itself rather than a copied list, so it cannot drift from
    it; table and column names and nullability are what both databases report alike.
    """
    from alembic import command

    engine = create_engine("sqlite://")
    try:
        with engine.begin() as scratch:
            command.upgrade(alembic_config(scratch), BASELINE)
            return _shape(scratch)
    finally:
        engine.dispose()


def _check_baseline(conn: Connection) -> None:
    expected = _baseline_shape()
    later_tables = set(load_models().tables) - set(expected)
    actual = _shape(conn, set(expected) | later_tables)
    problems: list[str] = []
    for table, columns in expected.items():
        have = actual.get(table)
        if have is None:
            problems.append(f"table {table} is missing")
            continue
        if missing := sorted(columns.keys() - have.keys()):
            problems.append(f"{table} lacks {', '.join(missing)}")
        if extra := sorted(have.keys() - columns.keys()):
            problems.append(f"{table} has unexpected {', '.join(extra)}")
        if nullability := sorted(c for c in columns.keys() & have.keys() if columns[c] != have[c]):
            problems.append(f"{table} differs in nullability of {', '.join(nullability)}")
    if unexpected := sorted(later_tables & actual.keys()):
        problems.append(f"unexpected tables {', '.join(unexpected)}")
    if problems:
        shown = "; ".join(problems[:6]) + ("; ..." if len(problems) > 6 else "")
        raise SchemaUnrecognised(
            f"database has tables but no revision, and they do not match revision {BASELINE} ({shown}): "
            "refusing to adopt it; restore a database made by evidence-gateway 0.1.0 or use an empty one"
        )


# -- Changing the schema -----------------------------------------------------------------


@asynccontextmanager
async def _schema_transaction(db: Database) -> AsyncIterator[AsyncConnection]:
    """One transaction that only one upgrader at a time may hold.

    PostgreSQL: a transaction-scoped advisory lock, so nodes started together queue
    and the later ones find the work done. SQLite: ``BEGIN IMMEDIATE`` takes the file's
    write lock; foreign keys are off for the duration (they cannot be switched inside a
    transaction) because batch mode rebuilds tables by copy-and-drop, and dropping a
    referenced table would cascade. The keys are checked before committing instead.
    """
    async with db.engine.connect() as conn:
        if db.is_sqlite:
            await conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
            await conn.commit()
            await conn.execution_options(sqlite_immediate=True)
        try:
            async with conn.begin():
                if not db.is_sqlite:
                    await conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_SCHEMA_LOCK_KEY})
                yield conn
                if db.is_sqlite and (await conn.exec_driver_sql("PRAGMA foreign_key_check")).first():
                    raise SchemaError("a migration left rows whose foreign keys point nowhere; nothing was changed")
        finally:
            if db.is_sqlite:
                # Outside any transaction (a BEGIN IMMEDIATE first would make the PRAGMA a no-op
                # and hand the pool a connection that enforces no foreign key).
                await conn.execution_options(sqlite_immediate=False)
                await conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                await conn.commit()


def _upgrade_sync(conn: Connection, replay: bool) -> str:
    state = _status_sync(conn)
    if state.state is State.AHEAD:
        raise state.refusal()
    if state.state is State.CURRENT:
        return state.head
    if state.state is State.EMPTY and not replay:
        # Alembic cookbook, "building an up to date database from scratch": the models are head (the
        # drift test proves it), and one create_all beats replaying history on each of the suite's
        # fresh files. Emptiness was seen under the lock, so per-table existence checks are skipped.
        load_models().create_all(conn, checkfirst=False)
        text_search.create_trigram_indexes(conn)  # as 0021_list_filters_more does
        sqlite_text_search.create_fts_indexes(conn)  # as 0022_sqlite_text_search does
        # Without Alembic: a first start would otherwise keep it resident for the process's life.
        stamp_empty(conn, state.head)
        return state.head
    if state.state is State.UNVERSIONED:
        _check_baseline(conn)
        stamp_empty(conn, BASELINE)
    from alembic import command

    command.upgrade(alembic_config(conn), "head")
    return state.head


async def upgrade(db: Database, *, replay: bool = False) -> str:
    """Bring the database to head and seed reference data; return the revision reached.

    An empty database is built from the models and stamped (``replay=True`` runs every
    revision instead, which is what the drift test needs). A database from 0.1.0 is
    checked against revision 1, stamped, then upgraded. Tables are never dropped or
    recreated to get there.
    """
    async with _schema_transaction(db) as conn:
        reached = await conn.run_sync(_upgrade_sync, replay)
    await seed_reference_data(db)
    return reached


@dataclass(frozen=True)
class Downgrade:
    """What ``downgrade`` did: from which revision to which, undoing ``undone`` (newest first)."""

    before: str
    after: str | None
    undone: tuple[str, ...]

    def describe(self) -> str:
        """One line for ``db downgrade``."""
        target = self.after or "base (no tables)"
        if not self.undone:
            return f"already at {target}: nothing to do"
        return f"downgraded {self.before} -> {target}; undid {', '.join(self.undone)}"


def _downgrade_sync(conn: Connection, target: str) -> Downgrade:
    from alembic import command
    from alembic.script.revision import RangeNotAncestorError

    found = _status_sync(conn)
    if found.state is State.AHEAD:
        raise found.refusal()
    if found.revision is None:
        raise SchemaError(f"database has no revision ({found.describe()}): nothing to downgrade")
    goal = None if target == "base" else target
    try:
        undone = tuple(s.revision for s in _script().iterate_revisions(found.revision, target))
    except RangeNotAncestorError:
        raise SchemaError(
            f"{target} is newer than the database's revision {found.revision}: use `evidence-gateway db upgrade`"
        ) from None
    if undone:
        command.downgrade(alembic_config(conn), target)
    return Downgrade(found.revision, goal, undone)


async def downgrade(db: Database, target: str) -> Downgrade:
    """Take the schema back to revision ``target`` (or ``base``: no tables), running each newer
    revision's downgrade in turn, in one transaction under the upgraders' lock.

    Refuses an unknown revision, a database this code does not know, and a target newer than
    the database. Seeds nothing: the code that runs next is the older release, whose start-up
    seeds what it needs.
    """
    if target != "base" and target not in known_revisions():
        known = ", ".join(s.revision for s in _script().walk_revisions())
        raise SchemaError(f"unknown revision {target!r} (this version knows base, {known})")
    async with _schema_transaction(db) as conn:
        done: Downgrade = await conn.run_sync(_downgrade_sync, target)
        return done


async def prepare(db: Database, *, migrate: bool | None = None) -> None:
    """Make the schema fit to serve: the one entry point for the app, the CLI and the tests.

    The start-up rule: SQLite upgrades itself; PostgreSQL only when told to (None: the
    ``EVIDENCE_MIGRATE`` setting, so the app's lifespan needs no argument), else it must
    already be at head or ``SchemaError`` says what to run. An embedded SQLite file has one
    owner, so upgrading in place is safe. A PostgreSQL database is shared by nodes that may
    run different releases during a deploy; the operator decides when it moves (``db
    upgrade`` or one ``serve --migrate``). Reference data is seeded either way.
    """
    if migrate is None:
        migrate = get_settings().migrate
    if db.is_sqlite or migrate:
        await upgrade(db)
        return
    found = await status(db)
    if found.state is not State.CURRENT:
        raise found.refusal()
    await seed_reference_data(db)


async def run_in_schema_transaction(url: str, work: Callable[[Connection], _T]) -> _T:
    """For env.py under the ``alembic`` command: the same lock and SQLite care as ``upgrade``."""
    db = Database(url)
    try:
        async with _schema_transaction(db) as conn:
            return await conn.run_sync(work)
    finally:
        await db.dispose()
