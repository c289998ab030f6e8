"""The fixed per-request cost of the middleware alone, layer by layer: the product's stack
(bench/layers.py ``layered``) around a trivial endpoint that answers a 20-item JSON page without
touching the database. No threads, no I/O but the access line (JSON, into /dev/null): CPU per
request here is steady even on a shared machine, unlike the figures with a database beneath.

    python bench/middleware_tax.py [--n 4000] [--rounds 5] [--json FILE]

Point PYTHONPATH at another checkout's package to measure that build with the same script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import layers  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import Response  # noqa: E402
from starlette.routing import Route  # noqa: E402

from evidence_gateway.app import create_app  # noqa: E402
from evidence_gateway.settings import Settings  # noqa: E402
from evidence_gateway.web.json_response import JSONResponse  # noqa: E402

ITEMS = [{"id": f"{i:032x}", "name": f"workspace {i}", "status": "draft"} for i in range(20)]


async def trivial(_request: Request) -> Response:
    return JSONResponse({"data": ITEMS, "pagination": {"page": 1, "per_page": 20, "total": 1000}})


async def main(n: int, rounds: int) -> dict[str, float]:
    layers.quiet_logging()
    os.environ.setdefault("EVIDENCE_SECRET_KEY", "bench-secret-" + "0" * 32)
    os.environ["EVIDENCE_RATE_LIMIT_PER_KEY"] = "1000000000"
    app = create_app(Settings(database_url=f"sqlite:///{tempfile.mkdtemp(prefix='eg-tax-')}/tax.db"))
    # First in the route list: the access line and metrics see the template /api/v2/workspaces.
    app.router.routes.insert(0, Route("/api/v2/workspaces", trivial, methods=["GET"]))
    apps: dict[str, Any] = {**layers.layered(app), "product": app}
    key = "evk_" + "ab" * 24  # well formed: counted against as a key; never looked up here
    scenario = ("GET", "/api/v2/workspaces", b"", "page=1&per_page=20")
    samples: dict[str, list[float]] = {name: [] for name in apps}
    for _ in range(rounds):
        for name, asgi in apps.items():
            samples[name].append(await layers.measure(asgi, key, scenario, n))
    return {name: statistics.median(got) for name, got in samples.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="write the figures (µs per request) here")
    args = parser.parse_args()
    out = asyncio.run(main(args.n, args.rounds))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    previous = 0.0
    for name, us in out.items():
        step = f"(+{us - previous:5.1f})" if name != "product" else ""
        print(f"{name:16s} {us:7.1f} µs {step}")
        previous = us
