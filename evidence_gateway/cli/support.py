"""What makes the command line pleasant: help with defaults, durations, one-line errors,
progress bars on a terminal, and the keys table."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError

from evidence_gateway.store.db import UnsupportedDatabase, normalise_url, refuse_in_memory


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, except where there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, "") or isinstance(action, argparse._HelpAction):
            return action.help
        return super()._get_help_string(action)


class CliError(Exception):
    """Bad input the user can fix: printed as one ``error: ...`` line, exit 1."""


_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w`` or plain seconds (argparse ``type``)."""
    match = _DURATION.match(text)
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 90d, 12h, 30m or 3600")
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


def instant(text: str) -> datetime:
    """An ISO 8601 date or date-time; without a zone it is UTC (argparse ``type``)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 date-time (2027-01-31T18:00Z)") from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


class Advance(Protocol):
    def __call__(self, done: int, total: int) -> None: ...


@contextmanager
def progress(description: str, finishing: str | None = None) -> Iterator[Advance]:
    """A progress bar on stderr when it is a terminal; silent otherwise (scripts, logs, CI).
    ``finishing`` replaces the description once every item is done (e.g. while committing)."""
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
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
