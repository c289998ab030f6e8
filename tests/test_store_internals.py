"""The private attributes store/internals.py reaches for are still there, on the installed
versions; an upgrade that removes one fails here, naming the library and its version, rather
than failing every write. The pins in pyproject.toml keep them below the next minor version."""

from __future__ import annotations

import re
import sqlite3
import tomllib
from importlib.metadata import version
from pathlib import Path

import aiosqlite
import pytest
from sqlalchemy import Integer, bindparam, column, select, table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.pool import QueuePool
from sqlalchemy.sql.compiler import SQLCompiler

from evidence_gateway.store import internals

ROOT = Path(__file__).resolve().parent.parent


async def test_aiosqlite_still_has_its_worker_queue(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "probe.db") as driver:
        missing = [name for name in internals.AIOSQLITE_PRIVATE if not hasattr(driver, name)]
        assert missing == [], (
            f"aiosqlite {version('aiosqlite')} has no {missing}: store/internals.py.on_aiosqlite_thread needs them"
        )
        ran: list[int] = []
        await internals.on_aiosqlite_thread(driver, lambda con: ran.append(con.execute("SELECT 41 + 1").fetchone()[0]))
        assert ran == [42]


@pytest.mark.parametrize("dialect", [postgresql.asyncpg.dialect(), sqlite.dialect()], ids=["postgresql", "sqlite"])
def test_sqlalchemy_still_keeps_compiled_processors_and_columns(dialect: object) -> None:
    t = table("t", column("a", Integer))
    compiled = select(t.c.a.label("alias")).where(t.c.a == bindparam("x", type_=Integer)).compile(dialect=dialect)  # type: ignore[arg-type]
    assert isinstance(compiled, SQLCompiler)
    missing = [name for name in internals.SQLALCHEMY_PRIVATE if not hasattr(compiled, name)]
    assert missing == [], (
        f"SQLAlchemy {version('sqlalchemy')} has no {missing}: store/internals.py.compiled_parts needs them"
    )
    binds, columns = internals.compiled_parts(compiled)
    assert isinstance(binds, dict)
    assert [key for key, _type in columns] == ["alias"]


def test_sqlalchemy_queue_pools_still_keep_their_queue_and_overflow() -> None:
    pool = QueuePool(lambda: sqlite3.connect(":memory:"), pool_size=1, max_overflow=3)
    missing = [name for name in internals.SQLALCHEMY_POOL_PRIVATE if not hasattr(pool, name)]
    assert missing == [], (
        f"SQLAlchemy {version('sqlalchemy')} has no {missing}: store/internals.py.queue_pool_state needs them"
    )
    held = pool.connect()
    assert internals.queue_pool_state(pool) == (0, 3)
    held.close()


@pytest.mark.parametrize("name", ["sqlalchemy", "aiosqlite"])
def test_libraries_reached_into_are_pinned_below_their_next_minor(name: str) -> None:
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (spec,) = [d for d in dependencies if re.match(rf"{name}\b", d)]
    upper = re.search(r"<\s*([\d.]+)", spec)
    assert upper is not None, f"{spec}: store/internals.py reaches into {name}; pin it below its next minor version"
    installed = tuple(int(p) for p in version(name).split(".")[:2])
    assert installed < tuple(int(p) for p in upper.group(1).split(".")[:2]), f"{name} {version(name)} is past {spec}"
