"""The REST reference at /api/docs: Redoc over /api/openapi.json, served from a pinned, verified copy.

``evidence-gateway api-docs-assets`` fetches Redoc's standalone bundle with ``npm pack`` and checks
the tarball against its pinned npm integrity (sha512) and the file against its pinned SRI hash
(sha384), exactly as GraphiQL's files are fetched (web/graphiql.py); the page also names that hash
in its ``integrity`` attribute, so a browser refuses a changed file. Nothing is loaded from a CDN:
without the file the page says how to fetch it (503), and the OpenAPI document stays at
/api/openapi.json for any other viewer.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from evidence_gateway.settings import Settings
from evidence_gateway.web.graphiql import Package, sri
from evidence_gateway.web.json_response import JSONResponse

DEFAULT_DIR = ".api-docs-assets"
COMMAND = "evidence-gateway api-docs-assets"

# `npm view redoc@2.5.4 dist.integrity`, and the SRI hash of the bundle inside that tarball (Redoc 3's
# bundle is an ES module, not a standalone script).
REDOC = Package(
    "redoc",
    "2.5.4",
    "sha512-M6jWhG1qoBnH6TFmzJnstyCZ87HmOY/UzDm78mHiYihEdlV/YcS9ogOo1NlElnJMeLsyxHFe2yFc4sNjHTrABQ==",
    (("bundles/redoc.standalone.js", "sha384-w447zOpYfw/1Tv/5AK9NfHTlQIqE3RVR6KY62jCyy9zNDgO64cMwGGP1Fj0zJVf5"),),
)
PACKAGES = (REDOC,)
SCRIPT, SCRIPT_SRI = f"{REDOC.spec}/{REDOC.files[0][0]}", REDOC.files[0][1]
# URL path under /api/docs/assets/ (= path under the assets dir) -> content type. Nothing else is served.
CONTENT_TYPES = {SCRIPT: "text/javascript; charset=utf-8"}

INIT = 'Redoc.init("openapi.json", {}, document.getElementById("redoc"));'
# Nothing leaves the origin: Redoc's only outside reference (the Redocly logo under its menu) is
# blocked by the browser, not requested. Redoc styles inline and searches in a blob: worker.
CSP = "; ".join(
    [
        "default-src 'none'",
        f"script-src 'self' '{sri('sha256', INIT.encode())}'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src blob:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)

# Relative URLs: from /api/docs they name /api/openapi.json and /api/docs/assets/..., also behind
# a proxy that serves the API under a path prefix.
PAGE = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Evidence Gateway REST API reference</title>
  <style>body {{ margin: 0; padding: 0; }}</style>
</head>
<body>
  <div id="redoc"></div>
  <script src="docs/assets/{SCRIPT}" integrity="{SCRIPT_SRI}" crossorigin="anonymous"></script>
  <script>{INIT}</script>
</body>
</html>
"""

MISSING_PAGE = f"""<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>REST API reference: Redoc not installed</title></head>
<body style="font: 16px/1.5 system-ui, sans-serif; padding: 2em; max-width: 48em">
  <h1>The REST reference needs Redoc's pinned script</h1>
  <p>This server serves the reference page from its own verified copy of
  <code>{SCRIPT}</code>, never from a CDN, and has none yet.</p>
  <p>Run <code>{COMMAND}</code> where the server runs (it fetches the pinned version with
  <code>npm pack</code>, checks its integrity and stores it in <code>./{DEFAULT_DIR}</code> or
  <code>EVIDENCE_API_DOCS_ASSETS_DIR</code>), then reload this page.</p>
  <p>The OpenAPI document itself is at <a href="openapi.json">/api/openapi.json</a>.</p>
</body>
</html>
"""


def assets_dir(settings: Settings | None = None, override: str | None = None) -> Path:
    return Path(override or (settings.api_docs_assets_dir if settings else "") or DEFAULT_DIR)


def assets_present(directory: Path) -> bool:
    return all((directory / name).is_file() for name in CONTENT_TYPES)


async def docs_page(request: Request) -> Response:
    """GET /api/docs: the reference when Redoc is installed, else how to install it (503)."""
    if assets_present(assets_dir(request.app.state.settings)):
        return HTMLResponse(PAGE, headers={"Content-Security-Policy": CSP})
    return HTMLResponse(MISSING_PAGE, status_code=503)


async def docs_asset(request: Request) -> Response:
    """GET /api/docs/assets/{path}: only the pinned file, never a path built from the request."""
    name = request.path_params["path"]
    content_type = CONTENT_TYPES.get(name)
    directory = assets_dir(request.app.state.settings)
    if content_type is None or not (directory / name).is_file():
        return JSONResponse({"error": "not found", "details": {"code": "not_found"}}, status_code=404)
    headers = {"Cache-Control": "public, max-age=31536000, immutable"}
    return Response((directory / name).read_bytes(), media_type=content_type, headers=headers)


routes = [
    Route("/api/docs", docs_page, methods=["GET"]),
    Route("/api/docs/assets/{path:path}", docs_asset, methods=["GET"]),
]
