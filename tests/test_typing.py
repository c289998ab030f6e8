"""``mypy --strict`` over the package stays clean (settings: pyproject.toml, [tool.mypy]).

mypy is in the ``test`` extra, which is what CI installs, so this runs there rather than
skipping: a typing check that can quietly skip is one nobody notices failing. The skip below
only spares a hand-made environment without it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_strict_finds_nothing() -> None:
    pytest.importorskip("mypy", reason="mypy is in the 'test' extra: pip install -e '.[test]'")
    # The package list, strictness and plugins come from pyproject.toml; the cache in the
    # checkout (.mypy_cache, ignored by git) makes a second run take about a second.
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
