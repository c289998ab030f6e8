"""What the commands share once they run: one-line errors, progress bars on a terminal, the
keys table, the database URL check and the database each command opens."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from evidence_gateway.cli.arguments import CliError
from evidence_gateway.settings import get_settings
from evidence_gateway.store import migrate
from evidence_gateway.store.db import Database, UnsupportedDatabase, normalise_url, refuse_in_memory


class Advance(Protocol):
    def __call__(self, done: int, total: int) -> None: ...


@contextmanager
def progress(description: str, finishing: str | None = None) -> Iterator[Advance]:
    """A progress bar on stderr when it is a terminal; silent otherwise (scripts, logs, CI).
    ``finishing`` replaces the description once every item is done (e.g. while committing)."""
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    # Here, not at the top: ``serve`` imports this module, and a serving process draws no bar.
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        transient=True,
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task(description, total=None)

        def advance(done: int, total: int) -> None:
            finished = finishing is not None and done >= total
            bar.update(task, completed=done, total=total, description=finishing if finished else description)

        yield advance


def _when(value: datetime | None) -> str:
    if value is None:
        return "-"
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value.strftime("%Y-%m-%d %H:%M")


def key_table(rows: Sequence[Any]) -> str:
    """Aligned columns, one key a line; the key itself is never stored, so never shown."""
    header = ("ID", "PREFIX", "NAME", "SCOPE", "CREATED", "LAST USED", "EXPIRES", "REVOKED")
    lines = [header] + [
        (
            str(k.id),
            k.display_prefix,
            k.name or "-",
            k.scope,
            _when(k.created_at),
            _when(k.last_used_at),
            _when(k.expires_at),
            _when(k.revoked_at),
        )
        for k in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() + "\n" for line in lines)


BAD_URL = "use sqlite:///PATH or postgresql://USER@HOST/DB, e.g. sqlite:///./evidence.db"


def checked_database_url(url: str) -> str:
    """Refuse what is not a SQLite or PostgreSQL URL before any driver is imported."""
    try:
        backend = make_url(normalise_url(url)).get_backend_name()
    except ArgumentError:
        raise CliError(f"bad database URL {url!r} ({BAD_URL})") from None
    if backend not in ("sqlite", "postgresql"):
        raise CliError(f"unsupported database {backend!r} in the URL ({BAD_URL})")
    try:
        refuse_in_memory(url)
    except UnsupportedDatabase as exc:
        raise CliError(str(exc)) from None
    return url


def one_line(exc: BaseException) -> str:
    """An operator's sentence for what went wrong, for errors with no message of our own."""
    if isinstance(exc, NoSuchModuleError | ArgumentError):
        return "bad database URL (use sqlite:///PATH or postgresql://USER@HOST/DB, e.g. sqlite:///./evidence.db)"
    if isinstance(exc, DBAPIError):
        cause = exc.orig if exc.orig is not None else exc
        return f"database error: {_first_line(cause)}"
    if isinstance(exc, ConnectionError | OSError):
        return f"cannot reach the database: {_first_line(exc)}"
    return f"{type(exc).__name__}: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def open_database(args: argparse.Namespace) -> Database:
    url = args.database_url or get_settings().database_url
    return Database(checked_database_url(url))


async def prepared(
    args: argparse.Namespace, work: Callable[[Database], Awaitable[Any]], *, allow_migrate: bool | None = None
) -> Any:
    """Run ``work`` once the schema is fit: SQLite is upgraded, PostgreSQL must be at head
    unless ``allow_migrate`` (None: EVIDENCE_MIGRATE) allows upgrading it, like ``serve``."""
    db = open_database(args)
    try:
        await migrate.prepare(db, migrate=allow_migrate)
        return await work(db)
    finally:
        await db.dispose()


async def on_database(args: argparse.Namespace, work: Callable[[Database], Awaitable[Any]]) -> Any:
    """Run ``work`` on the database as it is (the ``db`` commands look at or change its schema)."""
    db = open_database(args)
    try:
        return await work(db)
    finally:
        await db.dispose()
