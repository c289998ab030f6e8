"""A real ``evidence-gateway serve`` process whose stdout (the terminal: the demo key) and
stderr (the JSON log stream) are kept apart, for tests of what an operator sees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.test_crash_safety import CLI, SERVE_MIGRATE, Database, clean_env, free_port, until


@dataclass
class Node:
    database: Database
    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def stdout_path(self) -> Path:
        return self.workdir / f"serve-{self.port}.out"

    @property
    def stderr_path(self) -> Path:
        return self.workdir / f"serve-{self.port}.err"

    def start(self, *args: str) -> Node:
        cmd = [*CLI, "serve", "--port", str(self.port), *args]
        if not self.database.is_sqlite and SERVE_MIGRATE:
            cmd.append("--migrate")
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                cmd, stdout=out, stderr=err, env=clean_env(self.database, **self.env), cwd=self.workdir,
                start_new_session=True,
            )  # fmt: skip
        until(self._answers, f"serve to answer on {self.base}", logs=self.output)
        return self

    def _answers(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            pytest.fail(f"serve exited with {self.proc.returncode}\n{self.output()}")
        try:
            return httpx.get(f"{self.base}/healthz", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

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
