"""The transparency log over HTTP (docs/verification.md): every event is a leaf of its
organisation's RFC 6962 tree; checkpoints are C2SP signed notes by a key published at
/.well-known/evidence-keys; inclusion and consistency proofs verify with code written from the
RFCs alone; an organisation sees only its own log."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.applications import Starlette

from evidence_gateway.core import evidence_keys, merkle
from evidence_gateway.proofs.notes import PublicKey, SigningKey, verify_checkpoint
from tests.conftest import Api, Configured, create_workspace
from tests.waiting import eventually


def _b(value: str) -> bytes:
    return base64.b64decode(value)


async def _keys(api: Api) -> list[PublicKey]:
    resp = await api.get("/.well-known/evidence-keys", key=None)
    assert resp.status_code == 200, resp.text
    return [PublicKey.from_vkey(k["vkey"]) for k in resp.json()["keys"]]


async def _checkpoint(api: Api, **params: Any) -> dict[str, Any]:
    resp = await api.get("/api/v2/log/checkpoint", params=params)
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()["data"]
    return data


async def test_every_event_is_included_in_a_signed_checkpoint(api: Api, api_b: Api) -> None:
    for i in range(5):
        await create_workspace(api, name=f"ws {i}")
    await create_workspace(api_b, name="b's")
    events = (await api.get("/api/v2/events")).json()["data"]
    assert [e["sequence"] for e in events] == [1, 2, 3, 4, 5]
    keys = await _keys(api)
    cp = await _checkpoint(api)
    checkpoint, signer = verify_checkpoint(cp["note"], keys)
    assert (checkpoint.size, checkpoint.root) == (5, _b(cp["root_hash"]))
    assert signer.key_id == cp["key_id"] and checkpoint.origin == cp["origin"]
    leaves = []
    for event in events:
        resp = await api.get("/api/v2/log/proof/inclusion", params={"event": event["id"]})
        assert resp.status_code == 200, resp.text
        proof = resp.json()["data"]
        leaf = _b(proof["leaf"])
        assert merkle.leaf_hash(leaf) == _b(proof["leaf_hash"])
        assert proof["leaf_index"] == event["sequence"] - 1 and proof["tree_size"] == 5
        merkle.verify_inclusion(
            proof["leaf_index"], 5, _b(proof["leaf_hash"]), [_b(h) for h in proof["audit_path"]], checkpoint.root
        )
        # The leaf is the event as served, less its position (the leaf index) and cursor.
        served = {k: v for k, v in event.items() if k not in ("sequence", "cursor")}
        assert json.loads(leaf) == served
        leaves.append(merkle.leaf_hash(leaf))
    assert merkle.root_of(leaves) == checkpoint.root
    # The other organisation's log is its own: one leaf, and A's events are unknown to it.
    assert (await _checkpoint(api_b))["size"] == 1
    resp = await api_b.get("/api/v2/log/proof/inclusion", params={"event": events[0]["id"]})
    assert resp.status_code == 404
    assert (await api_b.get("/api/v2/log/checkpoint", params={"size": 5})).status_code == 404
    # A missing or malformed event parameter is bad input, not an unknown event.
    for params in ({}, {"event": "nope"}):
        resp = await api.get("/api/v2/log/proof/inclusion", params=params)
        assert resp.status_code == 422 and resp.json()["details"]["fields"] == {"event": "an event id (UUID)"}


async def test_checkpoints_are_kept_and_consistent(api: Api) -> None:
    await create_workspace(api)
    first = await _checkpoint(api)
    assert (await _checkpoint(api))["note"] == first["note"]  # nothing grew: the same checkpoint
    for i in range(6):
        await create_workspace(api, name=f"more {i}")
    second = await _checkpoint(api)
    assert (first["size"], second["size"]) == (1, 7)
    assert (await _checkpoint(api, size=1))["note"] == first["note"]
    resp = await api.get("/api/v2/log/proof/consistency", params={"from": 1, "to": 7})
    assert resp.status_code == 200, resp.text
    proof = resp.json()["data"]
    keys = await _keys(api)
    old, _ = verify_checkpoint(proof["from_checkpoint"]["note"], keys)
    new, _ = verify_checkpoint(proof["to_checkpoint"]["note"], keys)
    merkle.verify_consistency(old.size, new.size, old.root, new.root, [_b(h) for h in proof["proof"]])
    bad = await api.get("/api/v2/log/proof/consistency", params={"from": 2, "to": 7})
    assert bad.status_code == 404  # no checkpoint was issued at size 2
    assert (await api.get("/api/v2/log/proof/consistency", params={"from": "x", "to": 7})).status_code == 422


async def test_each_node_signs_checkpoints_while_the_log_grows(configured: Configured) -> None:
    async with configured(background_work=True, checkpoint_seconds=0.05) as api:
        await create_workspace(api)

        async def signed(size: int) -> bool:
            return (await api.get("/api/v2/log/checkpoint", params={"size": size})).status_code == 200

        await eventually(lambda: signed(1), "a checkpoint of the first event, signed by the worker")
        await create_workspace(api, name="second")
        await eventually(lambda: signed(2), "a checkpoint of the grown log")


async def test_graphql_serves_the_same_log(api: Api, api_b: Api) -> None:
    await create_workspace(api)
    await create_workspace(api)
    event = (await api.get("/api/v2/events")).json()["data"][0]
    rest = (await api.get("/api/v2/log/proof/inclusion", params={"event": event["id"]})).json()["data"]
    body = await api.gql(
        "query($e: UUID!) { logInclusionProof(eventId: $e) { sequence leafIndex treeSize leafHash leaf auditPath "
        "checkpoint { size rootHash keyId note } } logCheckpoint(size: 2) { note } "
        "logConsistencyProof(fromSize: 2, toSize: 2) { proof } }",
        {"e": event["id"]},
    )
    assert "errors" not in body, body
    proof = body["data"]["logInclusionProof"]
    assert proof["leaf"] == rest["leaf"] and proof["auditPath"] == rest["audit_path"]
    assert proof["checkpoint"]["note"] == rest["checkpoint"]["note"] == body["data"]["logCheckpoint"]["note"]
    assert body["data"]["logConsistencyProof"]["proof"] == []
    other = await api_b.gql("query($e: UUID!) { logInclusionProof(eventId: $e) { leaf } }", {"e": event["id"]})
    assert other["errors"][0]["extensions"]["code"] == "NOT_FOUND"


async def test_rotation_keeps_old_checkpoints_verifying(app: Starlette, api: Api) -> None:
    await create_workspace(api)
    old = await _checkpoint(api)
    rotated = await evidence_keys.rotate(app.state.db, app.state.settings)
    await create_workspace(api, name="after rotation")
    new = await _checkpoint(api)
    assert new["key_id"] == rotated.key_id != old["key_id"]
    keys = await _keys(api)
    assert verify_checkpoint(old["note"], keys)[1].key_id == old["key_id"]
    assert verify_checkpoint(new["note"], keys)[1].key_id == rotated.key_id
    listed = (await api.get("/.well-known/evidence-keys", key=None)).json()["keys"]
    assert [k["retired_at"] is not None for k in listed] == [True, False]


async def test_a_key_from_outside_signs_and_is_never_shown(configured: Configured) -> None:
    key = SigningKey.generate("ignored")
    seed = base64.b64encode(key.seed()).decode()
    async with configured(signing_key=SecretStr(seed), log_name="evidence.example") as api:
        await create_workspace(api)
        cp = await _checkpoint(api)
        public = SigningKey.from_seed("evidence.example", key.seed()).public_key
        assert verify_checkpoint(cp["note"], [public])[1] == public
        assert cp["origin"].startswith("evidence.example/log/")
        answers = [
            (await api.get("/.well-known/evidence-keys", key=None)).text,
            (await api.get("/api/v2/log/checkpoint")).text,
            (await api.get("/api/v2/events")).text,
        ]
        assert not any(seed in answer for answer in answers)


@pytest.mark.parametrize(
    ("setting", "value", "said"),
    [
        ("EVIDENCE_SIGNING_KEY_FILE", "{tmp}/missing.pem", "EVIDENCE_SIGNING_KEY_FILE: cannot read {tmp}/missing.pem"),
        ("EVIDENCE_SIGNING_KEY", "bm90IGEga2V5", "EVIDENCE_SIGNING_KEY: not an Ed25519 private key"),
    ],
)
def test_a_supplied_key_that_cannot_sign_stops_serve_in_one_line(
    tmp_path: Path, setting: str, value: str, said: str
) -> None:
    """Refused at start-up, not with a 500 at the first checkpoint; the line never quotes the key."""
    env = {**os.environ, setting: value.format(tmp=tmp_path), "EVIDENCE_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    done = subprocess.run(
        [sys.executable, "-m", "evidence_gateway.cli", "serve", "--port", "0"],
        env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + said.format(tmp=tmp_path)), done.stderr
    assert "bm90IGEga2V5" not in done.stderr
    assert not (tmp_path / "x.db").exists()  # nothing was started
