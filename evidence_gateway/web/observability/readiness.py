"""``/readyz`` (DESIGN.md §17): may this process take traffic? The database answers, its schema
is at this code's head, and the background tasks this process is configured to run (the
sweeper and queue, the webhook dispatcher) are running. ``/healthz`` only says it lives.

A load balancer takes a node out of rotation on 503 and puts it back once every check passes;
the body says which check failed, so the operator need not guess.
"""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from evidence_gateway import __version__
from evidence_gateway.store import migrate
from evidence_gateway.web.json_response import JSONResponse

# A database that takes longer than this to answer a trivial query is not ready.
CHECK_TIMEOUT_SECONDS = 3.0
OK = "ok"


async def _database(request: Request) -> tuple[str, str, str | None]:
    """(database, schema, revision): a trivial query, then the recorded revision against this code's head.
    The version row is read directly: alembic's migration context is heavier and logs each use."""
    db = request.app.state.db
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            found = await db.recorded_revisions()
    except TimeoutError:
        return f"no answer within {CHECK_TIMEOUT_SECONDS:g} s", "not checked", None
    except Exception as exc:  # whatever the driver raises: unreachable, refused, bad credentials
        return f"unreachable: {type(exc).__name__}", "not checked", None
    head = migrate.head()
    revision = ", ".join(sorted(found)) or None
    if found == {head}:
        return OK, OK, revision
    return OK, f"at {revision or 'no revision'}, this code needs {head}", revision


async def readyz(request: Request) -> Response:
    state = request.app.state
    checks: dict[str, Any] = {}
    checks["database"], checks["schema"], revision = await _database(request)
    # Which release answers, on which schema: what an operator compares across nodes mid-deploy.
    release = {"version": __version__, "schema_revision": revision}
    if state.settings.background_work:
        checks["background_work"] = OK if state.worker.running else "not running"
    if state.settings.dispatcher:
        checks["webhook_dispatcher"] = OK if state.dispatcher.running else "not running"
    failing = {name: why for name, why in checks.items() if why != OK}
    if failing:
        reason = "; ".join(f"{name}: {why}" for name, why in failing.items())
        return JSONResponse(
            {"error": f"not ready: {reason}", "details": {"code": "not_ready", **release, "checks": checks}},
            status_code=503,
            headers={"Retry-After": "5"},
        )
    return JSONResponse({"status": "ready", **release, "checks": checks})
