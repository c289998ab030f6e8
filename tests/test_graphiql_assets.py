"""Offline GraphiQL: the page uses our copies only when all are present; the asset route serves nothing else."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from evidence_gateway.web import graphiql

HTML = {"Accept": "text/html"}


def fake_assets(directory: Path) -> None:
    for name in graphiql.CONTENT_TYPES:
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(f"/* {name} */")


async def test_page_uses_the_cdn_without_assets(app: Starlette, client: httpx.AsyncClient, tmp_path: Path) -> None:
    app.state.settings.graphiql_assets_dir = str(tmp_path / "absent")
    page = (await client.get("/graphql", headers=HTML)).text
    assert "https://unpkg.com/graphiql@3.8.3/graphiql.min.js" in page
    assert "/graphql/assets/" not in page
    assert "defaultHeaders" in page and "Bearer evk_..." in page  # where the key goes


async def test_page_uses_our_copies_when_present(app: Starlette, client: httpx.AsyncClient, tmp_path: Path) -> None:
    fake_assets(tmp_path)
    app.state.settings.graphiql_assets_dir = str(tmp_path)
    page = (await client.get("/graphql", headers=HTML)).text
    assert "unpkg.com" not in page
    for name, content_type in graphiql.CONTENT_TYPES.items():
        assert f'"/graphql/assets/{name}"' in page
        resp = await client.get(f"/graphql/assets/{name}")
        assert resp.status_code == 200
        assert resp.headers["content-type"] == content_type
        assert resp.text == f"/* {name} */"


async def test_partial_assets_fall_back_to_the_cdn(app: Starlette, client: httpx.AsyncClient, tmp_path: Path) -> None:
    fake_assets(tmp_path)
    (tmp_path / next(iter(graphiql.CONTENT_TYPES))).unlink()
    app.state.settings.graphiql_assets_dir = str(tmp_path)
    assert "https://unpkg.com/" in (await client.get("/graphql", headers=HTML)).text


@pytest.mark.parametrize(
    "path",
    [
        "manifest.json",
        "../evidence.db",
        "%2e%2e/evidence.db",
        "react@18.2.0/umd/../../manifest.json",
        "react@18.2.0/umd/react.development.js",
        "/etc/passwd",
        "..%2f..%2fetc%2fpasswd",
    ],
)
async def test_only_pinned_files_are_served(
    app: Starlette, client: httpx.AsyncClient, tmp_path: Path, path: str
) -> None:
    fake_assets(tmp_path)
    (tmp_path / "manifest.json").write_text("{}")
    app.state.settings.graphiql_assets_dir = str(tmp_path / "react@18.2.0")  # so ../ would reach real files
    resp = await client.get(f"/graphql/assets/{path}")
    assert resp.status_code == 404
    assert resp.json()["details"]["code"] == "not_found"


def _tarball(tmp_path: Path, files: dict[str, bytes]) -> Path:
    path = tmp_path / "pkg.tgz"
    with tarfile.open(path, "w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


def test_tarball_with_wrong_integrity_is_refused(tmp_path: Path) -> None:
    package = graphiql.PACKAGES[0]
    tarball = _tarball(tmp_path, {file: b"tampered" for file, _ in package.files})
    with pytest.raises(graphiql.AssetError, match="integrity"):
        graphiql._extract(package, tarball)


def test_file_differing_from_the_cdn_pin_is_refused(tmp_path: Path) -> None:
    real = graphiql.PACKAGES[0]
    tarball = _tarball(tmp_path, {file: b"tampered" for file, _ in real.files})
    trusted = graphiql.Package(real.name, real.version, graphiql.sri("sha512", tarball.read_bytes()), real.files)
    with pytest.raises(graphiql.AssetError, match="differs"):
        graphiql._extract(trusted, tarball)


def test_pins_match_the_page_strawberry_ships() -> None:
    from strawberry.http.ides import get_graphql_ide_html

    page = get_graphql_ide_html("graphiql")
    for package in graphiql.PACKAGES:
        for file, sri in package.files:
            assert f"https://unpkg.com/{package.spec}/{file}" in page
            assert sri in page


def test_cli_without_npm_fails_clearly_and_installs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evidence_gateway.cli import main

    monkeypatch.setattr(graphiql.shutil, "which", lambda _name: None)
    assert main(["graphiql-assets", "--dir", str(tmp_path / "assets")]) == 1
    assert "npm not found" in capsys.readouterr().err
    assert not (tmp_path / "assets").exists()
