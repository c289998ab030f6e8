"""Fallback load driver when ``wrk`` is not installed: raw asyncio HTTP/1.1 keep-alive.

Fixed number of connections, fixed duration, one request shape; prints the same
``BENCH_JSON {...}`` line as bench/wrk_request.lua. httpx is not used on purpose: as a
load generator it saturates itself long before our server does (PERFORMANCE-NOTES).

    python bench/driver.py --url http://127.0.0.1:8110/api/v2/workspaces -c 32 -d 5 \
        [--method POST --body '{"name":"x"}'] --key evk_...
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from urllib.parse import urlsplit


def build_request(method: str, url: str, key: str, body: bytes) -> tuple[str, int, bytes]:
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    head = [f"{method} {target} HTTP/1.1", f"Host: {parts.hostname}:{parts.port}", f"Authorization: Bearer {key}"]
    if body:
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    raw = ("\r\n".join(head) + "\r\n\r\n").encode() + body
    return parts.hostname or "127.0.0.1", parts.port or 80, raw


async def read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = None
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        lname = name.strip().lower()
        if lname == b"content-length":
            length = int(value.strip())
        elif lname == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if chunked:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    elif length:
        await reader.readexactly(length)
    return status


async def worker(host: str, port: int, raw: bytes, deadline: float, lat: list[float], errs: dict[str, int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline:
            t0 = time.perf_counter()
            writer.write(raw)
            try:
                status = await read_response(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                errs["read"] += 1
                writer.close()
                reader, writer = await asyncio.open_connection(host, port)
                continue
            lat.append(time.perf_counter() - t0)
            if status >= 400:
                errs["status"] += 1
    finally:
        writer.close()


async def run(args: argparse.Namespace) -> dict[str, float]:
    host, port, raw = build_request(args.method, args.url, args.key, (args.body or "").encode())
    lat: list[float] = []
    errs = {"read": 0, "status": 0}
    start = time.perf_counter()
    deadline = start + args.duration
    await asyncio.gather(*(worker(host, port, raw, deadline, lat, errs) for _ in range(args.connections)))
    elapsed = time.perf_counter() - start
    lat.sort()

    def pct(p: float) -> int:
        return int(lat[min(len(lat) - 1, int(p / 100 * len(lat)))] * 1e6) if lat else 0

    return {
        "requests": len(lat),
        "duration_us": int(elapsed * 1e6),
        "p50_us": pct(50),
        "p90_us": pct(90),
        "p99_us": pct(99),
        "max_us": pct(100),
        "mean_us": (sum(lat) / len(lat) * 1e6) if lat else 0,
        "err_read": errs["read"],
        "err_status": errs["status"],
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--method", default="GET")
    parser.add_argument("--body", default="")
    parser.add_argument("-c", "--connections", type=int, default=32)
    parser.add_argument("-d", "--duration", type=float, default=5.0)
    args = parser.parse_args()
    try:
        import uvloop

        result = uvloop.run(run(args))
    except ImportError:
        result = asyncio.run(run(args))
    print("BENCH_JSON " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
