"""Settings as an operator meets them (issue 31): a ``.env`` file below the environment and the
command line, and log lines a person can read on a terminal while pipes keep getting JSON."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path

import pytest

from tests.test_cli import CLI, run_cli

# `serve` logs this warning as soon as logging is set up, then stops at the unsupported URL:
# a log line from the real command without starting a server.
WARNING = "GET /metrics answers 401 on 0.0.0.0"
SERVE = ("serve", "--host", "0.0.0.0", "--database-url", "mysql://nobody@nowhere/db")


def plain_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVIDENCE_")}
    env.update(extra)
    return env


def test_a_dotenv_file_sits_below_the_environment_and_the_options(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        f"# read from the working directory\nEVIDENCE_DATABASE_URL=sqlite:///{tmp_path / 'dotenv.db'}\nOTHER=ignored\n"
    )
    made = run_cli("keys", "create", "--org", "acme", env=plain_env(), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "dotenv.db").exists()

    env = plain_env(EVIDENCE_DATABASE_URL=f"sqlite:///{tmp_path / 'environment.db'}")
    assert run_cli("keys", "create", "--org", "acme", env=env, cwd=tmp_path).returncode == 0
    assert (tmp_path / "environment.db").exists()

    option = ("--database-url", f"sqlite:///{tmp_path / 'option.db'}")
    assert run_cli("keys", "create", "--org", "acme", *option, env=env, cwd=tmp_path).returncode == 0
    assert (tmp_path / "option.db").exists()
    listed = run_cli("keys", "list", "--org", "acme", env=plain_env(), cwd=tmp_path)
    assert len(listed.stdout.splitlines()) == 2, "one key in the .env database: the header and that key"


def on_a_terminal(env: dict[str, str], cwd: Path) -> str:
    """What ``serve`` writes to stderr when stderr is a terminal."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([*CLI, *SERVE], stdout=subprocess.PIPE, stderr=follower, env=env, cwd=cwd)
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
    proc.stdout.close()
    assert proc.wait(timeout=60) == 1
    os.close(leader)
    return drawn.decode(errors="replace")


def logged(text: str) -> str:
    (line,) = [line for line in text.splitlines() if WARNING in line]
    return line


@pytest.mark.parametrize(
    ("terminal", "setting", "expected"),
    [(True, None, "console"), (True, "json", "json"), (False, None, "json"), (False, "console", "console")],
    ids=["terminal", "terminal-forced-json", "pipe", "pipe-forced-console"],
)
def test_log_lines_are_readable_on_a_terminal_and_json_elsewhere(
    terminal: bool, setting: str | None, expected: str, tmp_path: Path
) -> None:
    env = plain_env(**({"EVIDENCE_LOG_FORMAT": setting} if setting else {}))
    if terminal:
        line = logged(on_a_terminal(env, tmp_path))
    else:
        done = run_cli(*SERVE, env=env, cwd=tmp_path)
        assert done.returncode == 1
        line = logged(done.stderr)
    if expected == "json":
        record = json.loads(line)
        assert record["level"] == "warning" and WARNING in record["event"]
    else:
        assert not line.lstrip().startswith("{")
        assert "warning" in line and "evidence_gateway.cli" in line


def test_an_unknown_log_format_is_one_error_line(tmp_path: Path) -> None:
    done = run_cli(*SERVE, env=plain_env(EVIDENCE_LOG_FORMAT="xml"), cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr == "error: bad setting EVIDENCE_LOG_FORMAT: Input should be 'auto', 'json' or 'console'\n"
