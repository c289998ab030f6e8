"""Pack generation for 50,000 shipments through the public API: wall time and peak server RSS.

    python bench/pack_rss.py                    # SQLite file in a temp dir, 50,000 rows
    python bench/pack_rss.py --pg               # a fresh PostgreSQL database on 127.0.0.1:5432
    python bench/pack_rss.py --rows 10000 --port 8102

Starts a real ``evidence-gateway serve`` process, registers one import with the rows,
calculates, then times ``POST /api/v2/workspaces/{id}/packs``. Peak RSS is the kernel's
high-water mark (VmHWM) of the server process, reset (``/proc/PID/clear_refs``) just before
generation so the import and calculation peaks do not count; RSS is also sampled every 20 ms
as a cross-check. Targets (issue 4): <= 10 s and <= 250 MB peak RSS for 50,000 rows.
"""

from __future__ import annotations

import argparse
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

MODES = ("road", "rail", "sea", "air", "inland_waterway")


def rows(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        row: dict[str, Any] = {
            "external_id": f"SHP-{i:07d}",
            "mode": MODES[i % 5],
            "distance_km": 50.0 + (i % 900),
            "mass_tonnes": 1.0 + (i % 24),
            "origin": f"DC {i % 37:02d} Rotterdam",
            "destination": f"Hub {i % 53:02d} Duisburg",
            "distance_source": "modelled" if i % 7 == 0 else "measured",
        }
        if i % 11 == 0:
            row["fuel_type"], row["fuel_amount"] = "diesel", 40.0 + (i % 13)
        elif i % 5 == 1:
            row["carrier_intensity_g_per_tkm"] = 20.0
            row["carrier_intensity_basis"] = "wtw"
        if i % 97 == 0:
            del row["distance_km"]
        out.append(row)
    return out


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of the process so far (independent of other load on the box)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM in kB (Linux)."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0])
    return values


class Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kb, self.stop = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak_kb = max(self.peak_kb, proc_status(self.pid)["VmRSS"])
            time.sleep(0.02)


def wait_ready(base: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"server exited with {proc.returncode}")
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("server did not start")


def pg_url(create: bool, name: str) -> str:
    import asyncio

    import asyncpg

    async def admin(sql: str) -> None:
        conn = await asyncpg.connect(host="127.0.0.1", port=5432, user="postgres", database="postgres")
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(admin(f'CREATE DATABASE "{name}"' if create else f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    return f"postgresql://postgres@127.0.0.1:5432/{name}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--port", type=int, default=8102)
    parser.add_argument("--pg", action="store_true", help="PostgreSQL instead of a SQLite file")
    parser.add_argument("--repeat", type=int, default=2, help="generations to time (version 1, 2, ...)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="pack-rss-"))
    pg_name = f"pack_rss_{uuid.uuid4().hex[:10]}"
    url = pg_url(True, pg_name) if args.pg else f"sqlite:///{tmp / 'bench.db'}"
    env = {**os.environ, "EVIDENCE_DATABASE_URL": url, "EVIDENCE_SECRET_KEY": "bench-secret",
           "EVIDENCE_PUBLIC_BASE_URL": f"http://127.0.0.1:{args.port}"}  # fmt: skip
    exe = [sys.executable, "-m", "evidence_gateway.cli"]
    subprocess.run([*exe, "db", "upgrade"], env=env, check=True, capture_output=True)  # as an operator would
    key = subprocess.run([*exe, "keys", "create", "--org", "bench"], env=env, check=True,
                         capture_output=True, text=True).stdout.strip()  # fmt: skip
    server = subprocess.Popen(
        [*exe, "serve", "--port", str(args.port), "--log-level", "warning"], env=env, cwd=tmp,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    base = f"http://127.0.0.1:{args.port}"
    results: dict[str, Any] = {"rows": args.rows, "database": "postgresql" if args.pg else "sqlite"}
    try:
        wait_ready(base, server)
        http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=600)
        ws = http.post("/api/v2/workspaces", json={"name": "Bench 50k"}).json()["data"]
        t0 = time.perf_counter()
        body = {"source_row_count": args.rows, "source_filename": "bench.csv", "shipments": rows(args.rows)}
        resp = http.post(f"/api/v2/workspaces/{ws['id']}/imports", content=json.dumps(body).encode(),
                         headers={"Content-Type": "application/json"})  # fmt: skip
        assert resp.status_code == 201, resp.text
        results["import_s"] = round(time.perf_counter() - t0, 2)
        t0 = time.perf_counter()
        resp = http.post(f"/api/v2/workspaces/{ws['id']}/calculate")
        assert resp.status_code == 200, resp.text
        results["calculate_s"] = round(time.perf_counter() - t0, 2)
        results["load_average"] = os.getloadavg()
        results["rss_before_pack_mb"] = round(proc_status(server.pid)["VmRSS"] / 1024, 1)

        generations = []
        for _ in range(args.repeat):
            Path(f"/proc/{server.pid}/clear_refs").write_text("5")  # reset VmHWM to the current RSS
            sampler = Sampler(server.pid)
            sampler.start()
            t0, cpu0 = time.perf_counter(), cpu_seconds(server.pid)
            resp = http.post(f"/api/v2/workspaces/{ws['id']}/packs")
            elapsed, cpu = time.perf_counter() - t0, cpu_seconds(server.pid) - cpu0
            sampler.stop.set()
            sampler.join()
            assert resp.status_code == 201, resp.text
            pack = resp.json()["data"]
            generations.append({
                "version": pack["version_number"],
                "seconds": round(elapsed, 2),
                "server_cpu_seconds": round(cpu, 2),
                "peak_rss_mb": round(proc_status(server.pid)["VmHWM"] / 1024, 1),
                "sampled_peak_rss_mb": round(sampler.peak_kb / 1024, 1),
                "pack_hash": pack["pack_hash"],
            })  # fmt: skip
        results["generations"] = generations
        results["same_pack_hash"] = len({g["pack_hash"] for g in generations}) == 1

        artifacts = http.get(f"/api/v2/packs/{pack['id']}/artifacts").json()["data"]
        results["artifact_bytes"] = {a["artifact_type"]: a["size_bytes"] for a in artifacts}
        digests = []
        t0 = time.perf_counter()
        for a in artifacts:
            content = httpx.get(a["signed_download_url"], timeout=120).content
            digests.append(hashlib.sha256(content).hexdigest())
        # The ninth file pack_hash covers: the iLEAP file, from the pack's own link (docs/packs.md).
        ileap = http.get(pack["ileap_shipment_footprints_url"])
        digests.append(hashlib.sha256(ileap.content).hexdigest())
        results["download_all_s"] = round(time.perf_counter() - t0, 2)
        results["pack_hash_rederived"] = hashlib.sha256("".join(digests).encode()).hexdigest() == pack["pack_hash"]
        results["rss_after_mb"] = round(proc_status(server.pid)["VmRSS"] / 1024, 1)
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
