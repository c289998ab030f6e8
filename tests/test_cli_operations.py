"""The command line as a new operator meets it (issue 14): help with defaults, --version, one
error line and exit 1 for every mistake they can fix, progress on a terminal, and backups
that a server can open."""

from __future__ import annotations

import argparse
import json
import os
import pty
import re
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.cli import build_parser
from tests.cli_inprocess import run_cli as run_main
from tests.serve_process import Database, Server
from tests.test_cli import CLI, run_cli


def _url(database_url: str) -> str:
    return database_url.replace("+aiosqlite", "").replace("+asyncpg", "")


def assert_one_error_line(done: subprocess.CompletedProcess[str], contains: str) -> None:
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert re.fullmatch(r"error: [^\n]+\n", done.stderr), done.stderr
    assert contains in done.stderr


def legacy_records(count: int) -> list[dict[str, object]]:
    return [
        {
            "id": str(uuid.uuid4()),
            "title": f"FY2025 report {n}",
            "reporting_period_start": "2025-01-01",
            "reporting_period_end": "2025-12-31",
            "status": "final",
            "total_co2e_kg": 1000.0 + n,
            "shipment_count": 12,
        }
        for n in range(count)
    ]


# ---- help and version ---------------------------------------------------------------------------


def test_version() -> None:
    from evidence_gateway import __version__
    from evidence_gateway.store import migrate

    done = run_cli("--version")
    assert (done.returncode, done.stdout) == (0, f"evidence-gateway {__version__} (schema {migrate.head()})\n")


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.append((f"{parser.prog.removeprefix('evidence-gateway').strip()} {name}".strip(), child))
                found.extend(_subparsers(child))
    return found


def test_every_command_and_option_has_help_and_shows_its_default() -> None:
    commands = _subparsers(build_parser())
    assert {name for name, _ in commands} >= {
        "serve",
        "worker",
        "keys create",
        "keys list",
        "keys revoke",
        "legacy import",
        "webhooks secret",
        "db upgrade",
        "db downgrade",
        "db current",
        "db backup",
        "export-schema",
        "graphiql-assets",
    }
    for name, parser in commands:
        assert parser.description, name
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"
    serve = run_cli("serve", "--help")
    assert serve.returncode == 0
    text = " ".join(serve.stdout.split())
    for shown in ("(default: 127.0.0.1)", "(default: 8000)", "(default: 1)", "(default: 30)", "EVIDENCE_DATABASE_URL"):
        assert shown in text
    assert "(default: admin)" in " ".join(run_cli("keys", "create", "--help").stdout.split())


# ---- one line for each mistake ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "contains"),
    [
        (
            ("keys", "create", "--org", "x", "--database-url", "mysql://nobody@nowhere/db"),
            "unsupported database 'mysql'",
        ),
        (("keys", "list", "--org", "x", "--database-url", "not a url"), "bad database URL"),
        (("db", "current", "--database-url", "postgresql://postgres@127.0.0.1:1/none"), "cannot reach the database"),
        (("legacy", "import", "no-such-file.json", "--org", "x"), "cannot read no-such-file.json"),
    ],
    ids=["unknown-driver", "not-a-url", "unreachable", "missing-file"],
)
def test_bad_input_is_one_line_and_exit_1(args: tuple[str, ...], contains: str, tmp_path: Path) -> None:
    assert_one_error_line(run_cli(*args, cwd=tmp_path), contains)


def test_an_unreadable_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("[{")
    assert_one_error_line(run_cli("legacy", "import", "broken.json", "--org", "x", cwd=tmp_path), "cannot read")
    assert_one_error_line(run_cli("legacy", "import", ".", "--org", "x", cwd=tmp_path), "cannot read .")


async def test_an_unknown_organisation_is_one_line_and_nothing_is_made(
    app: Starlette, database_url: str, key_a: str, tmp_path: Path
) -> None:
    url = _url(database_url)
    file = tmp_path / "reports.json"
    file.write_text(json.dumps(legacy_records(2)))
    for args in (
        ("legacy", "import", str(file), "--org", "typo-org"),
        ("keys", "list", "--org", "typo-org"),
        ("webhooks", "secret", "--org", "typo-org"),
    ):
        assert_one_error_line(run_main(*args, "--database-url", url), "no organisation named 'typo-org'")
    # The typo made nothing: the organisation still does not exist.
    assert_one_error_line(run_main("keys", "list", "--org", "typo-org", "--database-url", url), "typo-org")
    made = run_main("legacy", "import", str(file), "--org", "typo-org", "--create-org", "--database-url", url)
    assert made.returncode == 0, made.stderr
    assert len(made.stdout.splitlines()) == 2


# ---- progress -----------------------------------------------------------------------------------


def test_legacy_import_shows_progress_on_a_terminal_and_nothing_in_a_pipe(tmp_path: Path) -> None:
    file = tmp_path / "reports.json"
    file.write_text(json.dumps(legacy_records(1000)))
    url = f"sqlite:///{tmp_path / 'progress.db'}"
    args = [*CLI, "legacy", "import", str(file), "--org", "acme", "--create-org", "--database-url", url]

    leader, follower = pty.openpty()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=follower, env={**os.environ, "COLUMNS": "100"})
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        drawn += chunk
    assert proc.stdout is not None
    with proc.stdout:
        ids = proc.stdout.read().decode().splitlines()
    assert proc.wait(timeout=60) == 0
    os.close(leader)
    assert len(ids) == 1000
    text = drawn.decode(errors="replace")
    assert "importing legacy reports" in text
    # rich redraws ten times a second, so which intermediate counts show is up to the clock.
    assert "1000/1000" in text and "committing the import" in text

    piped = run_cli("legacy", "import", str(file), "--org", "acme", "--database-url", url)
    assert (piped.returncode, piped.stderr) == (0, "")


# ---- db backup ----------------------------------------------------------------------------------


@pytest.mark.slow
def test_db_backup_makes_a_private_copy_that_serve_opens_with_the_data(tmp_path: Path) -> None:
    source = tmp_path / "live.db"
    url = f"sqlite:///{source}"
    key = run_cli("keys", "create", "--org", "acme", "--database-url", url).stdout.strip()
    file = tmp_path / "reports.json"
    records = legacy_records(3)
    file.write_text(json.dumps(records))
    assert run_cli("legacy", "import", str(file), "--org", "acme", "--database-url", url).returncode == 0

    done = run_cli("db", "backup", str(tmp_path / "copy.db"), "--database-url", url)
    assert done.returncode == 0, done.stderr
    copy = tmp_path / "copy.db"
    assert copy.stat().st_mode & 0o777 == 0o600  # it holds key hashes and signing secrets
    assert not list(tmp_path.glob("*.partial"))
    assert_one_error_line(run_cli("db", "backup", str(copy), "--database-url", url), "exists")  # never overwritten

    source.unlink()  # the copy stands alone
    (tmp_path / "serve").mkdir()
    srv = Server(Database(f"sqlite+aiosqlite:///{copy}", sqlite_path=copy), tmp_path / "serve")
    try:
        srv.start()
        listed = httpx.get(f"{srv.base}/api/v1/reports", headers={"Authorization": f"Bearer {key}"}, timeout=10)
        assert listed.status_code == 200, listed.text
        assert sorted(r["id"] for r in listed.json()["data"]) == sorted(r["id"] for r in records)
    finally:
        srv.cleanup()


def test_db_backup_on_postgresql_points_at_pg_dump(tmp_path: Path) -> None:
    done = run_cli("db", "backup", str(tmp_path / "x.dump"), "--database-url", "postgresql://postgres@127.0.0.1/x")
    assert_one_error_line(done, "pg_dump")
    assert not (tmp_path / "x.dump").exists()
