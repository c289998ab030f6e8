"""``--help`` and ``--version`` answer at once (issue 31): they load neither the app nor its
frameworks, and the top-level help speaks to an operator."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from evidence_gateway.auth import Scope
from evidence_gateway.resolvers.keys import DEFAULT_SCOPE
from tests.test_cli import run_cli

HEAVY = ("sqlalchemy", "strawberry", "starlette", "pydantic", "evidence_gateway.app", "evidence_gateway.schema")

PROBE = """
import json, sys
from evidence_gateway.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [("--version",), ("--help",), ("db", "--help"), ("keys", "create", "--help"), ("serve", "--help")],
    ids=["version", "help", "db-help", "keys-create-help", "serve-help"],
)
def test_help_and_version_load_no_framework(args: tuple[str, ...]) -> None:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout, done.stderr
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY] == []


def test_a_command_still_loads_what_it_needs() -> None:
    """The probe can fail: a command that runs does import its frameworks."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "export-schema"], capture_output=True, text=True, timeout=60, check=False
    )
    loaded = json.loads(done.stderr.strip().splitlines()[-1])
    assert "strawberry" in loaded and "sqlalchemy" in loaded


def test_top_level_help_is_for_operators() -> None:
    done = run_cli("--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "transport-emissions evidence" in text and "COMMAND --help" in text and ".env" in text
    assert "(a contract" not in text and '"""' not in text


def test_the_scope_choices_are_the_keys_scopes() -> None:
    text = " ".join(run_cli("keys", "create", "--help").stdout.split())
    assert "{" + ",".join(s.value for s in Scope) + "}" in text
    assert f"(default: {DEFAULT_SCOPE.value})" in text
