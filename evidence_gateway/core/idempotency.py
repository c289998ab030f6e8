"""Idempotency-Key (IETF httpapi idempotency-key draft, Stripe's semantics; DESIGN.md §14).

A key is claimed in its own short transaction before the work starts (so a concurrent twin is
told 409 at once); the unit of work that makes the change stores the answer in the *same*
transaction as the change. If the work fails, the claim is released: nothing happened, so the
retry runs afresh. If the process dies mid-work, the claim's lock runs out and a retry takes
the key over; because change and answer commit together, the work is either done (replayed)
or not done (run once more), never done twice.

A key belongs to the API key that sent it: another API key's request under the same
Idempotency-Key is its own request, checked and run afresh, never answered from the record.
What is stored is the answer without the secrets it showed once (``Claim.shown_once``).
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from evidence_gateway.core.leases import kept_alive
from evidence_gateway.core.timeutil import as_aware, utcnow
from evidence_gateway.errors import BadRequest, IdempotencyKeyInUse, IdempotencyKeyReused
from evidence_gateway.store.db import Database
from evidence_gateway.store.repositories.idempotency import IdempotencyRepository

RETENTION = timedelta(hours=24)
MAX_KEY_LENGTH = 255
HEADER = "Idempotency-Key"
_KEPT_HEADERS = ("content-type", "location", "etag", "preference-applied")


@dataclass(frozen=True, slots=True)
class StoredResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    @classmethod
    def of(cls, response: Any) -> StoredResponse:
        """An HTTP response as stored: the representation's headers, not the connection's."""
        headers = {k: v for k, v in response.headers.items() if k.lower() in _KEPT_HEADERS}
        return cls(status=response.status_code, headers=headers, body=bytes(response.body))

    def replayed_headers(self) -> dict[str, str]:
        return {**self.headers, "Idempotent-Replayed": "true"}

    def withholding(self, secrets: Iterable[str], *, graphql: bool = False) -> StoredResponse:
        """This answer as it may be kept: every secret it shows once replaced by null.

        REST notes it beside the field (``secret_withheld: true`` next to ``secret: null``);
        GraphQL, whose objects hold only what the selection asked for, in the response's
        ``extensions.withheld`` (the paths of the withheld fields). A secret inside a longer
        string (never one of ours) is cut out of it.
        """
        secrets = [s for s in secrets if s]
        if not secrets or not self.body:
            return self
        try:
            document = orjson.loads(self.body)
        except orjson.JSONDecodeError:
            document = self.body.decode("utf-8", "replace")
        paths: list[list[str | int]] = []
        cleaned = _withhold(document, frozenset(secrets), [], paths, mark=not graphql)
        if graphql and paths and isinstance(cleaned, dict):
            extensions = cleaned.get("extensions")
            extensions = dict(extensions) if isinstance(extensions, dict) else {}
            extensions["withheld"] = [
                {"path": path[1:] if path[:1] == ["data"] else path, "reason": "shown once, in the first answer"}
                for path in paths
            ]
            cleaned["extensions"] = extensions
        body = cleaned.encode() if isinstance(cleaned, str) else orjson.dumps(cleaned)
        return StoredResponse(status=self.status, headers=dict(self.headers), body=body)


WITHHELD = "[withheld]"


def _withhold(
    value: Any, secrets: frozenset[str], path: list[str | int], found: list[list[str | int]], *, mark: bool
) -> Any:
    if isinstance(value, str):
        if value in secrets:
            found.append(path)
            return None
        for secret in secrets:
            value = value.replace(secret, WITHHELD)
        return value
    if isinstance(value, list):
        return [_withhold(v, secrets, [*path, i], found, mark=mark) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {key: _withhold(item, secrets, [*path, key], found, mark=mark) for key, item in value.items()}
        if mark:
            for key, item in value.items():
                if isinstance(item, str) and item in secrets:
                    out[f"{key}_withheld"] = True
        return out
    return value


@dataclass(eq=False, slots=True)
class Claim:
    """A key this request holds; ``render`` turns the operation's result into the answer.

    ``key`` is the record's key: the client's Idempotency-Key bound to the API key that sent it.
    ``response`` is the answer as sent; what is stored is that answer without ``shown_once``,
    the secrets it shows for the only time (a new webhook endpoint's, a new API key).
    """

    org_id: uuid.UUID
    key: str
    fingerprint: str
    render: Callable[[Any], StoredResponse | None] | None = None
    response: StoredResponse | None = None
    completed: bool = field(default=False)
    shown_once: set[str] = field(default_factory=set)
    graphql: bool = False

    def storable(self, response: StoredResponse) -> StoredResponse:
        return response.withholding(self.shown_once, graphql=self.graphql)


def check_key(raw: str) -> str:
    """1–255 printable ASCII characters; anything else is a malformed header (400)."""
    if not 1 <= len(raw) <= MAX_KEY_LENGTH or any(not 0x20 <= ord(c) < 0x7F for c in raw):
        raise BadRequest(
            "malformed Idempotency-Key header: 1 to 255 printable ASCII characters",
            header=HEADER,
        )
    return raw


def record_key(api_key_id: uuid.UUID | None, key: str) -> str:
    """The record's key: the client's key bound to the API key that sent it, so a stored answer
    replays only to that API key. Another key (of any scope) sending the same Idempotency-Key
    is a request of its own, checked and run as if the key were new."""
    owner = api_key_id.hex if api_key_id is not None else "operator"
    return hashlib.sha256(f"{owner}:{key}".encode()).hexdigest()


def fingerprint(method: str, path: str, body: bytes) -> str:
    """method + path + SHA-256 of the body, as one digest."""
    body_hash = hashlib.sha256(body).hexdigest()
    return hashlib.sha256(f"{method.upper()} {path} {body_hash}".encode()).hexdigest()


async def claim(
    db: Database,
    org_id: uuid.UUID,
    api_key_id: uuid.UUID | None,
    raw_key: str,
    print_: str,
    *,
    lock_seconds: float,
    graphql: bool = False,
) -> Claim | StoredResponse:
    """The key for this request, or the stored answer of its first completion by the same API key.

    Raises 422 ``idempotency_key_reused`` for another request under the same key and 409
    ``idempotency_key_in_use`` while its first request is still running.
    """
    key = record_key(api_key_id, raw_key)
    now = utcnow()
    locked_until = now + timedelta(seconds=lock_seconds)
    fresh = {
        "org_id": org_id,
        "key": key,
        "fingerprint": print_,
        "completed": False,
        "locked_until": locked_until,
        "response_status": None,
        "response_headers": {},
        "response_body": None,
        "created_at": now,
        "expires_at": now + RETENTION,
    }
    records = IdempotencyRepository(org_id)
    async with db.write() as session:
        if await records.insert_first(db, session, fresh):
            return Claim(org_id, key, print_, graphql=graphql)
        record = await records.load(session, key)
        if as_aware(record.expires_at) <= now:
            # Older than the retention window: the key is free again.
            await records.set(session, key, **fresh)
            return Claim(org_id, key, print_, graphql=graphql)
        if record.fingerprint != print_:
            raise IdempotencyKeyReused(
                "this Idempotency-Key was already used for a different request",
                header=HEADER,
            )
        if record.completed and record.response_status is None:
            # GraphQL stores its answer just after the change; the process died in between.
            raise IdempotencyKeyInUse(
                "the first request with this Idempotency-Key completed, but its answer was not recorded",
                header=HEADER,
            )
        if record.completed:
            return StoredResponse(
                status=record.response_status or 200,
                headers=dict(record.response_headers or {}),
                body=record.response_body or b"",
            )
        held = as_aware(record.locked_until)
        if held is not None and held > now:
            raise IdempotencyKeyInUse(
                "a request with this Idempotency-Key is still being processed; retry later",
                header=HEADER,
            )
        # The first request's process died before completing: nothing of it committed.
        await records.set(session, key, locked_until=locked_until)
        return Claim(org_id, key, print_, graphql=graphql)


async def complete(session: AsyncSession, held: Claim, result: Any) -> None:
    """Inside the unit of work that makes the change: store the answer with it."""
    response = held.render(result) if held.render is not None else None
    stored = held.storable(response) if response is not None else None
    await IdempotencyRepository(held.org_id).set(
        session,
        held.key,
        completed=True,
        locked_until=None,
        response_status=stored.status if stored else None,
        response_headers=stored.headers if stored else {},
        response_body=stored.body if stored else None,
    )
    held.response = response
    held.completed = True


async def store_late(db: Database, held: Claim, response: StoredResponse) -> None:
    """For an answer only known after the transaction (GraphQL's selection set)."""
    response = held.storable(response)
    async with db.write() as session:
        await IdempotencyRepository(held.org_id).set(
            session,
            held.key,
            completed=True,
            locked_until=None,
            response_status=response.status,
            response_headers=response.headers,
            response_body=response.body,
        )
    held.completed = True


async def release(db: Database, held: Claim) -> None:
    """The work failed and changed nothing: forget the key so a retry runs again."""
    async with db.write() as session:
        await IdempotencyRepository(held.org_id).release(session, held.key)


async def renew(db: Database, held: Claim, lock_seconds: float) -> None:
    async with db.write() as session:
        await IdempotencyRepository(held.org_id).renew(session, held.key, utcnow() + timedelta(seconds=lock_seconds))


@asynccontextmanager
async def holding(db: Database, held: Claim, lock_seconds: float) -> AsyncIterator[None]:
    """While the request's work runs under the key: the claim is renewed; if the work raises,
    the claim is released (nothing of it committed — or it completed, which release keeps)."""
    try:
        async with kept_alive(lambda: renew(db, held, lock_seconds), lock_seconds):
            yield
    except BaseException:
        await asyncio.shield(release(db, held))
        raise


async def purge(db: Database) -> int:
    """Drop answers older than the retention window (the sweeper calls this)."""
    async with db.write() as session:
        return await IdempotencyRepository.purge(session, utcnow())
