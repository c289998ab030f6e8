"""Concurrent downloads of one large artifact: peak server RSS above its resting RSS.

    python bench/download_rss.py                 # 24 downloads of a 24 MB artifact, SQLite
    python bench/download_rss.py --size-mb 48 --concurrency 8 --port 8103
    python bench/download_rss.py --pg            # the same against a fresh PostgreSQL database

Starts a real ``evidence-gateway serve`` process, generates a small pack through the API, then
gives one of its artifacts 24 MB of random content (written straight into the database: no
public call makes a file that big quickly) and downloads it N times at once over the signed
link, each in its own thread and connection, checking every copy's SHA-256 against the ETag.
Peak RSS is the kernel's high-water mark (VmHWM) of the server, reset just before the
downloads, minus the RSS it rested at; RSS is also sampled every 20 ms as a cross-check.
Target (issue 14): under +60 MB for 24 downloads of 24 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from pack_rss import Sampler, pg_url, proc_status, rows, wait_ready

SLICE = 1024 * 1024  # PostgreSQL stores a file as rows of slices (artifact_content_chunk)


def enlarge(url: str, artifact_id: str, content: bytes) -> None:
    """Replace the artifact's bytes (and the size and digest that describe them): one BLOB on
    SQLite, consecutive slices on PostgreSQL, as the server stores them."""
    digest = hashlib.sha256(content).hexdigest()
    if url.startswith("sqlite"):
        import sqlite3

        con = sqlite3.connect(url.split(":///", 1)[1])
        key = uuid.UUID(artifact_id).hex  # SQLAlchemy's Uuid is 32 hex digits on SQLite
        with con:
            con.execute("UPDATE artifact_content SET content = ? WHERE artifact_id = ?", (content, key))
            con.execute(
                "UPDATE pack_artifact SET size_bytes = ?, content_sha256 = ? WHERE id = ?", (len(content), digest, key)
            )
        con.close()
        return

    import asyncpg

    async def update() -> None:
        conn = await asyncpg.connect(url.replace("postgresql://", "postgres://"))
        try:
            aid = uuid.UUID(artifact_id)
            await conn.execute("DELETE FROM artifact_content_chunk WHERE artifact_id = $1", aid)
            await conn.executemany(
                "INSERT INTO artifact_content_chunk (artifact_id, seq, data) VALUES ($1, $2, $3)",
                [(aid, i, content[at : at + SLICE]) for i, at in enumerate(range(0, len(content), SLICE))],
            )
            await conn.execute(
                "UPDATE pack_artifact SET size_bytes = $1, content_sha256 = $2 WHERE id = $3", len(content), digest, aid
            )
        finally:
            await conn.close()

    asyncio.run(update())


def download(link: str, expected: str, results: list[bool], start: threading.Barrier) -> None:
    start.wait()
    digest = hashlib.sha256()
    with httpx.Client(timeout=600) as client, client.stream("GET", link) as resp:
        for piece in resp.iter_bytes(256 * 1024):
            digest.update(piece)
    results.append(resp.status_code == 200 and f'"{digest.hexdigest()}"' == expected)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-mb", type=int, default=24)
    parser.add_argument("--concurrency", type=int, default=24)
    parser.add_argument("--port", type=int, default=8103)
    parser.add_argument("--pg", action="store_true", help="PostgreSQL instead of a SQLite file")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="download-rss-"))
    pg_name = f"download_rss_{uuid.uuid4().hex[:10]}"
    url = pg_url(True, pg_name) if args.pg else f"sqlite:///{tmp / 'bench.db'}"
    env = {**os.environ, "EVIDENCE_DATABASE_URL": url, "EVIDENCE_SECRET_KEY": "bench-secret",
           "EVIDENCE_PUBLIC_BASE_URL": f"http://127.0.0.1:{args.port}", "EVIDENCE_MIGRATE": "true"}  # fmt: skip
    exe = [sys.executable, "-m", "evidence_gateway.cli"]
    key = subprocess.run([*exe, "keys", "create", "--org", "bench"], env=env, check=True,
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    server = subprocess.Popen(
        [*exe, "serve", "--port", str(args.port), "--log-level", "warning"], env=env, cwd=tmp,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{args.port}"
    results: dict[str, Any] = {
        "database": "postgresql" if args.pg else "sqlite",
        "artifact_mb": args.size_mb,
        "concurrent_downloads": args.concurrency,
    }
    try:
        wait_ready(base, server)
        http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=600)
        ws = http.post("/api/v2/workspaces", json={"name": "Downloads"}).json()["data"]
        body = {"source_row_count": 20, "source_filename": "small.csv", "shipments": rows(20)}
        assert http.post(f"/api/v2/workspaces/{ws['id']}/imports", json=body).status_code == 201
        assert http.post(f"/api/v2/workspaces/{ws['id']}/calculate").status_code == 200
        pack = http.post(f"/api/v2/workspaces/{ws['id']}/packs").json()["data"]
        artifact = http.get(f"/api/v2/packs/{pack['id']}/artifacts").json()["data"][0]
        enlarge(url, artifact["id"], os.urandom(args.size_mb * 1024 * 1024))
        artifact = next(a for a in http.get(f"/api/v2/packs/{pack['id']}/artifacts").json()["data"]
                        if a["id"] == artifact["id"])  # fmt: skip
        link, etag = artifact["signed_download_url"], f'"{artifact["content_sha256"]}"'
        # One download first: imports, pools and caches are warm before the resting RSS is read.
        warm: list[bool] = []
        download(link, etag, warm, threading.Barrier(1))
        assert warm == [True], "the warm-up download did not match its ETag"

        resting_kb = proc_status(server.pid)["VmRSS"]
        Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        sampler = Sampler(server.pid)
        sampler.start()
        ok: list[bool] = []
        start = threading.Barrier(args.concurrency)
        threads = [threading.Thread(target=download, args=(link, etag, ok, start)) for _ in range(args.concurrency)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
        sampler.stop.set()
        sampler.join()
        peak_kb = proc_status(server.pid)["VmHWM"]
        results.update(
            all_downloads_match_etag=len(ok) == args.concurrency and all(ok),
            seconds=round(elapsed, 2),
            resting_rss_mb=round(resting_kb / 1024, 1),
            peak_rss_mb=round(peak_kb / 1024, 1),
            peak_above_resting_mb=round((peak_kb - resting_kb) / 1024, 1),
            sampled_peak_above_resting_mb=round((sampler.peak_kb - resting_kb) / 1024, 1),
            load_average=os.getloadavg(),
        )
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        if args.pg:
            pg_url(False, pg_name)
    print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
