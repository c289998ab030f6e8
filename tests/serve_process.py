"""A real ``evidence-gateway serve`` process whose stdout (the terminal: the demo key) and
stderr (the JSON log stream) are kept apart, for tests of what an operator sees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.test_crash_safety import Server


@dataclass
class Node(Server):
    """The crash tests' ``Server`` (process group, /healthz wait), with the two streams in two files."""

    @property
    def stdout_path(self) -> Path:
        return self.workdir / f"serve-{self.port}.out"

    @property
    def stderr_path(self) -> Path:
        return self.workdir / f"serve-{self.port}.err"

    def start(self, *args: str, pause_at: str = "") -> Node:  # type: ignore[override]
        self.starts += 1
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self._launch(args, out, err, {"EVIDENCE_PAUSE_AT": pause_at} if pause_at else {})
        return self

    def logs(self) -> str:
        return self.output()

    def output(self) -> str:
        return f"--- stdout ---\n{self.stdout()}\n--- stderr ---\n{self.stderr()[-6000:]}"

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace") if self.stdout_path.exists() else ""

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def stop(self) -> None:
        """SIGTERM and wait: every log line is written once this returns."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)

    def log_lines(self) -> list[dict[str, Any]]:
        """Every stderr line, each of which must be one JSON object."""
        lines = []
        for line in self.stderr().splitlines():
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pytest.fail(f"a log line that is not JSON: {line!r}")
        return lines
