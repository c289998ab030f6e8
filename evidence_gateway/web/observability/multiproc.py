"""Metrics across ``serve --workers N`` processes: prometheus-client's multiprocess mode wants
a directory shared by the workers, empty when they start (samples of a previous run would be
added to this one's), and named in ``PROMETHEUS_MULTIPROC_DIR`` before any worker imports it."""

from __future__ import annotations

import tempfile
from collections.abc import MutableMapping
from pathlib import Path

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def prepare(environ: MutableMapping[str, str]) -> Path:
    """The operator's directory (emptied of old sample files), or a fresh private one."""
    given = environ.get(MULTIPROC_ENV)
    if given:
        directory = Path(given)
        directory.mkdir(parents=True, exist_ok=True)
        for stale in directory.glob("*.db"):
            stale.unlink()
    else:
        directory = Path(tempfile.mkdtemp(prefix="evidence-metrics-"))
        environ[MULTIPROC_ENV] = str(directory)
    return directory
