"""Headless Chromium driven over the DevTools protocol (a websocket): just enough to load a page,
run JavaScript in it and read network events. Every host but the ones named is unreachable."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.waiting import until

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Browser:
    """Commands by id; events kept for inspection."""

    ws: Any
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    events: list[dict[str, Any]] = field(default_factory=list)

    def send(self, method: str, **params: Any) -> dict[str, Any]:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))
            self.events.append(msg)

    def js(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"JS failed: {result['exceptionDetails']}")
        return result["result"].get("value")


@contextmanager
def chromium(profile: Path, reachable: tuple[str, ...] = ("127.0.0.1",)) -> Iterator[Browser]:
    from websockets.sync.client import connect

    assert CHROMIUM is not None
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        # No network but the named hosts: a CDN, for one, is unreachable.
        "--host-resolver-rules=MAP * ~NOTFOUND, " + ", ".join(f"EXCLUDE {host}" for host in reachable),
        "--window-size=1400,900",
        f"--user-data-dir={profile}",
        "--remote-debugging-port=0",
        "about:blank",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: S603
    try:
        port_file = profile / "DevToolsActivePort"
        until(lambda: port_file.exists() and port_file.read_text().strip(), "Chromium's DevTools port")
        port = port_file.read_text().split()[0]
        targets = until(
            lambda: [t for t in httpx.get(f"http://127.0.0.1:{port}/json/list").json() if t["type"] == "page"],
            "a page target",
            within=10,
        )
        with connect(targets[0]["webSocketDebuggerUrl"], max_size=None, open_timeout=10) as ws:
            yield Browser(ws)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
