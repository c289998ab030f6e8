"""The one operation whose answer is a file, not a model: an artifact's download.

Its answer is the artifact's bytes under their own content type, reachable with a signed link
(no key) or with the Bearer key, and revalidated by ETag, so it has no row in openapi_routes.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evidence_gateway.rest_compat.openapi_routes import path_id
from evidence_gateway.rest_compat.openapi_schemas import EXT, Schema, integer, string

# The artifacts' own content types (evidence_gateway/artifacts/): the answer's Content-Type is one of them.
ARTIFACT_MEDIA_TYPES = (
    "application/pdf",
    "text/csv",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/json",
    "text/markdown",
)
BINARY = "application/octet-stream"
ERRORS = (401, 403, 404, 409, 429)


def _file(media: str) -> Schema:
    """A file's bytes (OpenAPI 3.1: ``contentMediaType``; ``format: binary`` for generators that read that)."""
    return {"type": "string", "format": "binary", "contentMediaType": media}


def download_content() -> dict[str, Any]:
    """Every download is a file to keep byte for byte (pack_hash is over the bytes). The generic binary
    type comes first: generators that type a response by its first media type they know (e.g.
    openapi-python-client) then return bytes, never text decoded from a PDF. The real types follow;
    a JSON artifact is also described as the JSON document it is."""
    content: dict[str, Any] = {
        BINARY: {"schema": {**_file(BINARY), "description": "Any artifact, read as bytes."}},
    }
    for media in ARTIFACT_MEDIA_TYPES:
        json_doc = {"description": "machine_json, ileap_shipment_footprints: a JSON document."}
        content[media] = {"schema": json_doc if media == "application/json" else _file(media)}
    return content


def download_operation(bearer: list[dict[str, list[str]]], error_ref: Callable[[int], Schema]) -> dict[str, Any]:
    return {
        "operationId": "downloadArtifact",
        "summary": "Artifact content: with a valid signed link (no key) or with the Bearer key",
        "description": (
            "With `expires` and `signature` (from signed_download_url) no key is needed; an expired or "
            "tampered link is 403. Without them the Bearer key is required (401)."
        ),
        "tags": ["packs"],
        # The empty requirement: a signed link needs no key.
        "security": [*bearer, {}],
        "parameters": [
            path_id("Artifact"),
            {"name": "expires", "in": "query", "schema": integer(minimum=0), "description": "Unix time."},
            {"name": "signature", "in": "query", "schema": string(), "description": "HMAC-SHA256, hex."},
            {"name": "If-None-Match", "in": "header", "schema": string(), "description": "ETag from an earlier GET."},
        ],
        "responses": {
            "200": {
                "description": "The file, with its own content type (the artifact's content_type).",
                "content": download_content(),
                "headers": {
                    "ETag": {"required": True, "schema": string(description="Quoted SHA-256 of the content.")},
                    "Content-Disposition": {"required": True, "schema": string()},
                },
            },
            "304": {
                "description": "Not modified: If-None-Match matched the ETag.",
                "headers": {"ETag": {"required": True, "schema": string()}},
            },
            **{str(code): error_ref(code) for code in ERRORS},
        },
        **EXT,
    }


def bundle_operation(bearer: list[dict[str, list[str]]], error_ref: Callable[[int], Schema]) -> dict[str, Any]:
    """A pack's verifiable bundle (docs/verification.md): one zip, checked offline."""
    return {
        "operationId": "getPackBundle",
        "summary": "The pack's verifiable bundle (zip): files, seal, statements, checkpoint, proofs, keys",
        "tags": ["packs"],
        "security": bearer,
        "parameters": [path_id("Pack")],
        "responses": {
            "200": {
                "description": "A zip; `evidence-gateway verify` checks it offline.",
                # The generic binary type first, as for downloads: generators then return bytes.
                "content": {
                    BINARY: {"schema": {**_file(BINARY), "description": "The zip, read as bytes."}},
                    "application/zip": {"schema": _file("application/zip")},
                },
                "headers": {"Content-Disposition": {"required": True, "schema": string()}},
            },
            **{str(code): error_ref(code) for code in ERRORS},
        },
        **EXT,
    }
