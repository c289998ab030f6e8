"""Artifact downloads: signed links need no key, the stable link needs the key of the same organisation."""

from __future__ import annotations

import csv
import io
import json
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import openpyxl
from pypdf import PdfReader

from evidence_gateway.core import signing
from tests.conftest import Api
from tests.test_packs import calculated_workspace, generated


async def artifacts_of(api: Api) -> dict[str, dict[str, Any]]:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    listed = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
    return {a["artifact_type"]: a for a in listed}


def with_query(url: str, **params: Any) -> str:
    parts = urlsplit(url)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query.update({k: str(v) for k, v in params.items() if v is not None})
    for k, v in params.items():
        if v is None:
            query.pop(k, None)
    return f"{parts.scheme}://{parts.netloc}{parts.path}?{urlencode(query)}"


def assert_forbidden(resp: Any) -> None:
    assert resp.status_code == 403, resp.text
    body = resp.json()
    assert body["details"]["code"] == "forbidden" and body["error"]
    assert "content-disposition" not in resp.headers


async def test_all_eight_artifacts_download_without_a_key_as_valid_files(api: Api) -> None:
    artifacts = await artifacts_of(api)
    files = {}
    for kind, artifact in artifacts.items():
        resp = await api.get(artifact["signed_download_url"], key=None)
        assert resp.status_code == 200, (kind, resp.text)
        assert resp.headers["content-type"].startswith(artifact["content_type"].split(";")[0])
        assert resp.headers["content-disposition"] == f'attachment; filename="{artifact["file_name"]}"'
        assert resp.headers["etag"] == f'"{artifact["content_sha256"]}"'
        assert len(resp.content) == artifact["size_bytes"]
        files[kind] = resp.content
    pdf = PdfReader(io.BytesIO(files["summary_pdf"]))
    assert files["summary_pdf"].startswith(b"%PDF") and "Q1 freight" in pdf.pages[0].extract_text()
    rows = list(csv.DictReader(io.StringIO(files["shipment_csv"].decode())))
    assert [r["external_id"] for r in rows] == ["D", "S", "P", "X"]
    book = openpyxl.load_workbook(io.BytesIO(files["shipment_xlsx"]), read_only=True)
    assert len(list(book["Shipments"].iter_rows(values_only=True))) == 5
    assert len(json.loads(files["machine_json"])["shipments"]) == 4
    assert files["methodology_statement"].decode().startswith("# Methodology statement")
    assert files["quality_report"].decode().startswith("# Data quality report")
    assert next(csv.reader(io.StringIO(files["evidence_register"].decode())))[0] == "id"
    assert "import_registered" in files["audit_trail"].decode()


async def test_tampered_expired_and_borrowed_signatures_are_refused(api: Api) -> None:
    artifacts = await artifacts_of(api)
    pdf, csv_artifact = artifacts["summary_pdf"], artifacts["shipment_csv"]
    url = pdf["signed_download_url"]
    query = parse_qs(urlsplit(url).query)
    sig, expires = query["signature"][0], int(query["expires"][0])
    flipped = ("0" if sig[0] != "0" else "1") + sig[1:]
    assert_forbidden(await api.get(with_query(url, signature=flipped), key=None))
    assert_forbidden(await api.get(with_query(url, expires=expires + 3600), key=None))
    assert_forbidden(await api.get(with_query(url, signature=None), key=None))
    assert_forbidden(await api.get(with_query(url, expires=None), key=None))
    assert_forbidden(await api.get(with_query(url, expires="soon"), key=None))
    assert_forbidden(await api.get(with_query(url, signature="ü" * 64), key=None))
    # Another artifact's valid signature does not open this one.
    other = parse_qs(urlsplit(csv_artifact["signed_download_url"]).query)
    borrowed = with_query(url, signature=other["signature"][0], expires=other["expires"][0])
    assert_forbidden(await api.get(borrowed, key=None))
    # A correctly signed but expired link.
    settings = api.http._transport.app.state.settings  # type: ignore[attr-defined]
    old = signing.signed_download_url(settings, pdf["id"], now=time.time() - settings.signed_url_ttl_seconds - 5)
    resp = await api.get(old, key=None)
    assert_forbidden(resp)
    assert resp.json()["details"]["reason"] == "expired"
    # A valid signature still opens it, even when a key is sent too.
    assert (await api.get(url)).status_code == 200


async def test_file_url_needs_the_key_of_the_same_organisation(api: Api, api_b: Api) -> None:
    artifacts = await artifacts_of(api)
    url = artifacts["quality_report"]["file_url"]
    assert "signature" not in url
    assert (await api.get(url, key=None)).status_code == 401
    assert (await api.get(url, key="evk_" + "0" * 48)).status_code == 401
    assert (await api_b.get(url)).status_code == 404
    resp = await api.get(url)
    assert resp.status_code == 200 and resp.text.startswith("# Data quality report")


async def test_etag_revalidation_answers_304(api: Api) -> None:
    artifacts = await artifacts_of(api)
    artifact = artifacts["machine_json"]
    etag = f'"{artifact["content_sha256"]}"'
    resp = await api.http.get(artifact["signed_download_url"], headers={"If-None-Match": etag})
    assert resp.status_code == 304 and resp.content == b"" and resp.headers["etag"] == etag
    auth = {"Authorization": f"Bearer {api.key}"}
    resp = await api.http.get(artifact["file_url"], headers={**auth, "If-None-Match": f'W/"x", {etag}'})
    assert resp.status_code == 304
    resp = await api.http.get(artifact["file_url"], headers={**auth, "If-None-Match": '"other"'})
    assert resp.status_code == 200 and resp.content


async def test_unknown_artifact_ids(api: Api) -> None:
    assert (await api.get("/api/v2/artifacts/not-a-uuid/download")).status_code == 404
    settings = api.http._transport.app.state.settings  # type: ignore[attr-defined]
    unknown = "00000000-0000-4000-8000-000000000000"
    assert (await api.get(signing.signed_download_url(settings, unknown), key=None)).status_code == 404


async def test_large_artifacts_stream_in_chunks(api: Api) -> None:
    rows = [
        {"external_id": f"S-{i:06d}", "mode": "road", "distance_km": 100 + i, "mass_tonnes": 2.5,
         "origin": "Rotterdam distribution centre", "destination": "Duisburg inland hub"}
        for i in range(6000)
    ]  # fmt: skip
    ws = await calculated_workspace(api, rows=rows)
    pack = (await generated(api, ws["id"]))["data"]
    listed = (await api.get(f"/api/v2/packs/{pack['id']}/artifacts")).json()["data"]
    artifact = next(a for a in listed if a["artifact_type"] == "machine_json")
    assert artifact["size_bytes"] > 1024 * 1024  # over one read chunk
    resp = await api.get(artifact["signed_download_url"], key=None)
    assert resp.status_code == 200 and int(resp.headers["content-length"]) == artifact["size_bytes"]
    doc = json.loads(resp.content)
    assert [s["external_id"] for s in doc["shipments"]] == [r["external_id"] for r in rows]


async def test_head_over_a_signed_link_gives_the_headers_without_the_bytes(api: Api) -> None:
    artifacts = await artifacts_of(api)
    artifact = artifacts["shipment_csv"]
    resp = await api.http.head(artifact["signed_download_url"])
    assert resp.status_code == 200 and resp.content == b""
    assert resp.headers["etag"] == f'"{artifact["content_sha256"]}"'
    assert resp.headers["content-disposition"] == f'attachment; filename="{artifact["file_name"]}"'
    # The link's parameters decide even with a key: a broken one is refused, never the key's answer.
    broken = with_query(artifact["signed_download_url"], signature="0" * 64)
    resp = await api.http.head(broken, headers={"Authorization": f"Bearer {api.key}"})
    assert resp.status_code == 403
