"""GraphiQL that works offline: the page's pinned scripts served by our own app.

Strawberry's GraphiQL page loads React, GraphiQL and the explorer plugin from unpkg.
``evidence-gateway graphiql-assets`` fetches the very same versions with ``npm pack``,
checks each tarball against its pinned npm integrity (sha512) and each extracted file
against the SRI hash the page itself carries (sha384), and stores them outside git.
When every file is present, ``/graphql`` references ``/graphql/assets/...`` instead of
the CDN; otherwise the stock CDN page is served.

Subscriptions work with either: the page derives its subscription URL from its own address
(``ws://`` or ``wss://``, so also behind a TLS proxy) and hands it to GraphiQL's fetcher, whose
bundle includes the ``graphql-ws`` client; GraphiQL sends the JSON of its Headers pane as the
``connection_init`` payload, which is where the server reads the key (schema/websocket.py).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from evidence_gateway.settings import Settings
from evidence_gateway.web.json_response import JSONResponse

CDN = "https://unpkg.com/"
ASSETS_URL = "/graphql/assets/"
DEFAULT_DIR = ".graphiql-assets"
MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class Package:
    name: str
    version: str
    # `npm view <name>@<version> dist.integrity`: the published tarball's hash.
    integrity: str
    # File inside the package -> its SRI hash as written in Strawberry's graphiql.html.
    files: tuple[tuple[str, str], ...]

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"


# The versions Strawberry's graphiql.html pins (strawberry-graphql 0.341).
PACKAGES = (
    Package(
        "react",
        "18.2.0",
        "sha512-/3IjMdb2L9QbBdWiW5e3P2/npwMBaU9mHCSCUzNln0ZCYbcfTsGbTJrU/kGemdH2IWmB2ioZ+zkxtmq6g09fGQ==",
        (("umd/react.production.min.js", "sha384-tMH8h3BGESGckSAVGZ82T9n90ztNXxvdwvdM6UoR56cYcf+0iGXBliJ29D+wZ/x8"),),
    ),
    Package(
        "react-dom",
        "18.2.0",
        "sha512-6IMTriUmvsjHUjNtEDudZfuDQUoWXVxKHhlEGSk81n4YFS+r/Kl99wXiwlVXtPBtJenozv2P+hxDsw9eA7Xo6g==",
        (
            (
                "umd/react-dom.production.min.js",
                "sha384-bm7MnzvK++ykSwVJ2tynSE5TRdN+xL418osEVF2DE/L/gfWHj91J2Sphe582B1Bh",
            ),
        ),
    ),
    Package(
        "js-cookie",
        "3.0.5",
        "sha512-cEiJEAEoIbWfCZYKWhVwFuvPX1gETRYPw6LlaTKoxD3s2AkXzkCjnp6h0V77ozyqj0jakteJ4YqDJT830+lVGw==",
        (("dist/js.cookie.min.js", "sha384-/vxhYfM1LENRhdpZ8dwEsQn/X4VhpbEZSiU4m/FwR+PVpzar4fkEOw8FP9Y+OfQN"),),
    ),
    Package(
        "graphiql",
        "3.8.3",
        "sha512-cuPDYtXVKV86Pu5PHBX642Odi/uVEE2y1Jxq5rGO/Qy1G2lRp7ZZ7a/T30RzxhuLSWo9zUbzq0P3U49//H0Ugw==",
        (
            ("graphiql.min.css", "sha384-Mq3vbRBY71jfjQAt/DcjxUIYY33ksal4cgdRt9U/hNPvHBCaT2JfJ/PTRiPKf0aM"),
            ("graphiql.min.js", "sha384-HbRVEFG0JGJZeAHCJ9Xm2+tpknBQ7QZmNlO/DgZtkZ0aJSypT96YYGRNod99l9Ie"),
        ),
    ),
    Package(
        "@graphiql/plugin-explorer",
        "1.0.2",
        "sha512-9j+kg2UjtLZD5EBmGjeWHkoVVxtbShYg2DzbUVebibnZYZM/iMBEF4vaccXJIAm5KaomIPLx0aoNs4LbODyc3Q==",
        (
            ("dist/style.css", "sha384-5DFJlDPW2tSATRbM8kzoP1j194jexLswuNmClWoRr2Q0x7R68JIQzPHZ02Faktwi"),
            ("dist/index.umd.js", "sha384-2oonKe47vfHIZnmB6ZZ10vl7T0Y+qrHQF2cmNTaFDuPshpKqpUMGMc9jgj9MLDZ9"),
        ),
    ),
)

# URL path under /graphql/assets/ (= path under the assets dir) -> content type. Nothing else is served.
CONTENT_TYPES = {
    f"{p.spec}/{file}": "text/css; charset=utf-8" if file.endswith(".css") else "text/javascript; charset=utf-8"
    for p in PACKAGES
    for file, _ in p.files
}

# First in <head>: when GraphiQL's scripts cannot load (no route to the CDN, no local copies) the
# page says so and how to fix it, instead of "Loading..." forever. Load errors of <script> and
# <link> do not bubble, hence the capturing listener; "load" fires once every script was tried.
LOAD_FAILURE_SCRIPT = """
    <script>
      (function () {
        var failed = [];
        window.addEventListener("error", function (event) {
          var el = event.target;
          if (el && (el.tagName === "SCRIPT" || el.tagName === "LINK")) failed.push(el.src || el.href);
        }, true);
        window.addEventListener("load", function () {
          if (typeof window.GraphiQL !== "undefined" && typeof window.React !== "undefined") return;
          var box = document.getElementById("graphiql");
          if (!box) return;
          box.textContent = "";
          box.style.cssText = "display:block;padding:2em;font:16px/1.5 system-ui,sans-serif;overflow:auto";
          var lines = [
            "GraphiQL could not load its scripts" + (failed.length ? ":" : "."),
          ].concat(failed.map(function (url) { return "  " + url; })).concat([
            "",
            "This server has no local copy of them and the browser cannot reach the CDN.",
            "Run `evidence-gateway graphiql-assets` where the server runs (it fetches and verifies",
            "the pinned files), then reload this page.",
            "",
            "The API works without GraphiQL: POST /graphql with Content-Type: application/json.",
          ]);
          var pre = document.createElement("pre");
          pre.id = "graphiql-load-failure";
          pre.style.whiteSpace = "pre-wrap";
          pre.textContent = lines.join("\\n");
          box.appendChild(pre);
        });
      })();
    </script>
"""

# Shown in the Headers pane of a new tab: where the key goes.
DEFAULT_HEADERS = '{\n  "Authorization": "Bearer evk_..."\n}'


class AssetError(RuntimeError):
    """Fetching or verifying an asset failed; nothing was installed."""


def sri(algorithm: str, data: bytes) -> str:
    return f"{algorithm}-" + base64.b64encode(hashlib.new(algorithm, data).digest()).decode()


def assets_dir(settings: Settings | None = None, override: str | None = None) -> Path:
    return Path(override or (settings.graphiql_assets_dir if settings else "") or DEFAULT_DIR)


def assets_present(directory: Path) -> bool:
    return all((directory / name).is_file() for name in CONTENT_TYPES)


# -- fetching -----------------------------------------------------------------------------------


def _npm_pack(package: Package, workdir: Path) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise AssetError("npm not found: install Node.js/npm to fetch the GraphiQL assets")
    proc = subprocess.run(  # noqa: S603 - fixed argv, pinned spec
        [npm, "pack", package.spec, "--json", "--pack-destination", str(workdir)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if proc.returncode != 0:
        raise AssetError(f"npm pack {package.spec} failed: {proc.stderr.strip()[-500:]}")
    tarballs = list(workdir.glob("*.tgz"))
    if len(tarballs) != 1:
        raise AssetError(f"npm pack {package.spec}: expected one tarball, found {len(tarballs)}")
    return tarballs[0]


def _extract(package: Package, tarball: Path) -> dict[str, bytes]:
    import tarfile  # only `graphiql fetch` unpacks: a serving process does not load it (issue 29)

    got = sri("sha512", tarball.read_bytes())
    if got != package.integrity:
        raise AssetError(f"{package.spec}: tarball integrity {got} does not match the pinned {package.integrity}")
    out: dict[str, bytes] = {}
    with tarfile.open(tarball, "r:gz") as archive:
        for file, expected in package.files:
            # Read named members only: nothing from the archive is written by its own path.
            member = archive.extractfile(f"package/{file}")
            if member is None:
                raise AssetError(f"{package.spec}: {file} missing from the tarball")
            data = member.read()
            if sri("sha384", data) != expected:
                raise AssetError(f"{package.spec}/{file}: content differs from the file the CDN page pins")
            out[f"{package.spec}/{file}"] = data
    return out


def fetch_assets(
    directory: Path, log: Callable[[str], object] = print, packages: tuple[Package, ...] = PACKAGES
) -> list[str]:
    """Fetch, verify, then install every file of ``packages`` (all or nothing). Returns the stored
    paths. The REST reference's Redoc (web/api_docs.py) is fetched the same way."""
    files: dict[str, bytes] = {}
    with tempfile.TemporaryDirectory(prefix="pinned-assets-") as tmp:
        for package in packages:
            workdir = Path(tmp) / package.spec.replace("/", "__")
            workdir.mkdir(parents=True)
            files.update(_extract(package, _npm_pack(package, workdir)))
            log(f"verified {package.spec} ({package.integrity[:20]}...)")
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + ".part")
        partial.write_bytes(data)
        os.replace(partial, target)
    manifest = {p.spec: {"integrity": p.integrity, "files": [f for f, _ in p.files]} for p in packages}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return sorted(files)


# -- serving ------------------------------------------------------------------------------------


def ide_html(stock_html: str, directory: Path) -> str:
    """Strawberry's page, pointed at our copies when they are all present (else unchanged)."""
    # The Headers pane of a fresh tab shows where the key goes (storage wins once edited).
    html = stock_html.replace(
        "isHeadersEditorEnabled: true,",
        f"isHeadersEditorEnabled: true,\n          defaultHeaders: {json.dumps(DEFAULT_HEADERS)},",
    ).replace("<head>", "<head>" + LOAD_FAILURE_SCRIPT, 1)
    if not assets_present(directory):
        return html
    local = html.replace(CDN, ASSETS_URL)
    # Only the pinned files may be referenced; anything else means the page changed upstream.
    if CDN in local or any(f"{ASSETS_URL}{name}" not in local for name in CONTENT_TYPES):
        return html
    return local


async def graphiql_asset(request: Request) -> Response:
    """GET /graphql/assets/{path}: only the pinned files, never a path built from the request."""
    name = request.path_params["path"]
    content_type = CONTENT_TYPES.get(name)
    directory = assets_dir(request.app.state.settings)
    if content_type is None or not (directory / name).is_file():
        return JSONResponse({"error": "not found", "details": {"code": "not_found"}}, status_code=404)
    headers = {"Cache-Control": "public, max-age=31536000, immutable", "X-Content-Type-Options": "nosniff"}
    return Response((directory / name).read_bytes(), media_type=content_type, headers=headers)


def ide_response(request: Request, stock_html: str) -> HTMLResponse:
    return HTMLResponse(ide_html(stock_html, assets_dir(request.app.state.settings)))


routes = [Route("/graphql/assets/{path:path}", graphiql_asset, methods=["GET"])]
