"""Serve the product (or the floor) with a per-request SQL statement counter.

No product code changes: a global SQLAlchemy ``before_cursor_execute`` listener on
``Engine`` counts every statement sent to the database (including BEGIN issued as SQL;
a driver-level COMMIT/ROLLBACK is not a statement and is not counted), and an ASGI
wrapper puts the count of the current request into the ``x-bench-sql-count`` response header
(with the reads the product sends on the driver itself, PostgreSQL's hot reads, which it
reports through ``Database.statement_listeners``). Counts are only meaningful for sequential
requests (bench/run.py sends them one at a time).

    python bench/sqlcount_server.py --app product|floor --port 8118 --database-url URL
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import uvicorn
from sqlalchemy import event
from sqlalchemy.engine import Engine

COUNT = [0]


@event.listens_for(Engine, "before_cursor_execute")
def _count(*_args: Any) -> None:
    COUNT[0] += 1


class Counting:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = COUNT[0]

        async def counted_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-bench-sql-count", str(COUNT[0] - start).encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, counted_send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--app", choices=["product", "floor"], required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--database-url", required=True)
    args = parser.parse_args()
    if args.app == "product":
        os.environ["EVIDENCE_DATABASE_URL"] = args.database_url
        from evidence_gateway.app import create_app
        from evidence_gateway.settings import Settings

        app = create_app(Settings())
        app.state.db.statement_listeners.append(lambda _sql: _count())
    else:
        os.environ["BENCH_FLOOR_DATABASE_URL"] = args.database_url
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from floor_app import create_app as create_floor

        app = create_floor()
    uvicorn.run(Counting(app), host="127.0.0.1", port=args.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
