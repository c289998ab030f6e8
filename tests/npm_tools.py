"""Node packages the tests drive (the graphql-http audit), installed once into a git-ignored
folder of the checkout with pinned versions; a file lock keeps parallel workers from racing."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOOLS = REPO / ".npm-tools"
PACKAGES = ("graphql-http@1.23.1", "graphql@16.15.0")


def node_modules() -> Path:
    """The installed packages, installing them first if needed; skips only without npm/node."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm/node not installed: the graphql-http audit needs Node.js (Debian: apt-get install npm)")
    TOOLS.mkdir(exist_ok=True)
    marker = TOOLS / ("installed-" + "-".join(p.replace("/", "_") for p in PACKAGES))
    with (TOOLS / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            (TOOLS / "package.json").write_text('{"private": true, "type": "module"}\n')
            proc = subprocess.run(  # noqa: S603 - fixed argv, pinned versions
                [npm, "install", "--no-audit", "--no-fund", "--no-save", *PACKAGES],
                cwd=TOOLS,
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if proc.returncode != 0:
                pytest.fail(f"npm install {' '.join(PACKAGES)} failed: {proc.stderr[-1000:]}")
            marker.touch()
    return TOOLS / "node_modules"
