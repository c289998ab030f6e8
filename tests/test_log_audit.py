"""``evidence-gateway log verify`` (resolvers/log_audit.py) catches edits made behind the
server's back: every event field, leaf, checkpoint, signed statement, pack hash, artifact digest
and byte, and approval row is changed in turn in the database, checked, and put back."""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy import Table, Text, bindparam, cast, select, text, update
from starlette.applications import Starlette

from evidence_gateway.models import (
    ApprovalAction,
    ArtifactContent,
    ArtifactContentChunk,
    Event,
    PackArtifact,
    ReportPack,
    SignedStatement,
    TlogCheckpoint,
)
from evidence_gateway.models.base import table_of
from evidence_gateway.resolvers import log_audit
from evidence_gateway.store.db import Database
from tests.conftest import Api
from tests.test_packs import calculated_workspace, generated


async def _history(api: Api) -> None:
    ws = await calculated_workspace(api)
    pack = (await generated(api, ws["id"]))["data"]
    for action in ("requested", "approved"):
        body = {"action_type": action, "comment": f"{action} by audit"}
        assert (await api.post(f"/api/v2/packs/{pack['id']}/approvals", body)).status_code == 201
    assert (await api.get(f"/api/v2/packs/{pack['id']}/bundle")).status_code == 200


def _other(value: Any, rng: random.Random) -> Any:
    """The same kind of value with one small change."""
    if isinstance(value, (bytes, memoryview)):
        raw = bytearray(bytes(value))
        raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
        return bytes(raw)
    if isinstance(value, str):
        letters = [i for i, c in enumerate(value) if c.isalnum()]
        i = rng.choice(letters)
        return value[:i] + ("x" if value[i] != "x" else "y") + value[i + 1 :]
    return value


def _other_json(value: str, rng: random.Random) -> str:
    """One letter inside a JSON string changed: still JSON (PostgreSQL's json type checks)."""
    inside, escaped, letters = False, False, []
    for i, c in enumerate(value):
        if inside and not escaped and c.isalnum():
            letters.append(i)
        if c == '"' and not escaped:
            inside = not inside
        escaped = inside and c == "\\" and not escaped
    i = rng.choice(letters)
    return value[:i] + ("x" if value[i] != "x" else "y") + value[i + 1 :]


async def _rows(db: Database, table: Table) -> list[Any]:
    async with db.engine.connect() as conn:
        return list((await conn.execute(select(table))).all())


async def _set(db: Database, table: Table, row: Any, column: str, value: Any) -> None:
    keys = list(table.primary_key.columns)
    async with db.engine.begin() as conn:
        await conn.execute(update(table).where(*(c == getattr(row, c.name) for c in keys)).values({column: value}))


async def _set_data(db: Database, event_id: Any, value: str) -> None:
    """event.data as text, exactly (the JSON type would re-encode it)."""
    target = "CAST(:d AS json)" if not db.is_sqlite else ":d"
    async with db.engine.begin() as conn:
        await conn.execute(
            text(f"UPDATE event SET data = {target} WHERE id = :id").bindparams(
                bindparam("id", type_=table_of(Event).c.id.type)
            ),
            {"d": value, "id": event_id},
        )


async def test_every_edit_behind_the_servers_back_is_reported(app: Starlette, api: Api) -> None:
    db: Database = app.state.db
    await _history(api)
    assert (await log_audit.audit(db)).problems == []
    rng = random.Random(28)
    missed: list[str] = []
    cases = 0

    async def case(what: str, change: Callable[[], Awaitable[None]], undo: Callable[[], Awaitable[None]]) -> None:
        nonlocal cases
        cases += 1
        await change()
        try:
            if not (await log_audit.audit(db)).problems:
                missed.append(what)
        finally:
            await undo()

    edits: dict[type, tuple[str, ...]] = {
        Event: (
            "type",
            "request_id",
            "subject_type",
            "subject_id",
            "actor",
            "workspace_id",
            "occurred_at",
            "leaf_hash",
        ),
        TlogCheckpoint: ("note", "root", "frontier"),
        SignedStatement: ("envelope",),
        ReportPack: ("pack_hash",),
        PackArtifact: ("content_sha256",),
        ApprovalAction: ("action_type", "comment", "status_before", "status_after"),
        ArtifactContent if db.is_sqlite else ArtifactContentChunk: ("content" if db.is_sqlite else "data",),
    }
    for model, columns in edits.items():
        table = table_of(model)
        for row in await _rows(db, table):
            for column in columns:
                before = getattr(row, column)
                if before is None:
                    continue
                if column == "occurred_at":
                    after = before.replace(microsecond=(before.microsecond + 1) % 1_000_000)
                elif column == "actor":
                    after = None  # a foreign key: another key would have to exist
                elif column in ("subject_id", "workspace_id"):
                    after = uuid.UUID(int=before.int ^ 1)
                else:
                    after = _other(before, rng)
                await case(
                    f"{table.name}.{column}",
                    lambda t=table, r=row, c=column, v=after: _set(db, t, r, c, v),
                    lambda t=table, r=row, c=column, v=before: _set(db, t, r, c, v),
                )
    async with db.engine.connect() as conn:
        stored = (await conn.execute(select(table_of(Event).c.id, cast(table_of(Event).c.data, Text)))).all()
    for event_id, data in stored:
        for _ in range(3):
            await case(
                "event.data",
                lambda e=event_id, d=_other_json(data, rng): _set_data(db, e, d),
                lambda e=event_id, d=data: _set_data(db, e, d),
            )
    assert (await log_audit.audit(db)).problems == []  # every edit was put back
    assert missed == [], missed
    assert cases >= 100, cases


async def test_the_command_says_consistent_or_names_the_problem(app: Starlette, api: Api, database_url: str) -> None:
    db: Database = app.state.db
    await _history(api)
    command = [sys.executable, "-m", "evidence_gateway.cli", "log", "verify", "--database-url", database_url]
    ok = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert "CONSISTENT" in ok.stdout
    event = (await _rows(db, table_of(Event)))[0]
    await _set(db, table_of(Event), event, "leaf_hash", b"\x00" * 32)
    bad = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True)
    assert bad.returncode == 1 and "does not hash to its leaf" in bad.stderr
