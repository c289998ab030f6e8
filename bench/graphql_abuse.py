"""Time the refusal of every abusive GraphQL request of issues 13 and 23 (each must take under
50 ms; a document over EVIDENCE_GRAPHQL_MAX_DOCUMENT_BYTES under 10 ms, refused before lexing).

Each body is POSTed to /graphql of an app on a fresh SQLite file (in-process, over ASGI: what
is timed is the server's work, without a socket) or, with --url, of a running server; the
median, 90th percentile and worst wall time of --n runs (after one warm-up), and the 90th
percentile of this process's CPU time (client and server in-process: an upper bound of the
server's work, which a busy machine does not inflate) and of the CPU time spent inside the app
alone (in-process runs), are printed with the answer's status and error code and the sizes of
request and answer. Exits 1 when a request was not refused, when its answer is over twice the
request (or 8 KB), or when its wall and CPU 90th percentiles are all over the budget (the worst
single run is shown but not judged: on a shared machine it measures the neighbours' load as
much as ours).

    python bench/graphql_abuse.py [--n 20] [--url http://127.0.0.1:8000/graphql --key evk_...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

BUDGET_MS = 50.0
# Requests refused on their size alone: no lexer, no parser, no validation.
SIZE_BUDGET_MS = 10.0
CREATE = 'createWorkspace(input: {name: "x"}) { id }'
PACKS = (
    "items { packs { artifacts { id reportPackId workspaceId artifactType status a: id b: id } "
    "approvals { actionType statusAfter } evidenceItems { id title } } }"
)


def q(document: str, **extra: object) -> bytes:
    return json.dumps({"query": document, **extra}).encode()


def abuse() -> dict[str, bytes]:
    deep = b"[" * 100_000 + b"]" * 100_000
    with_variables = q("query($n: Int) { workspaces(perPage: $n) { items { id } } }")[:-1]
    return {
        "30 aliased __schema (no key)": q(
            "{ "
            + " ".join(f"s{i}: __schema {{ types {{ name fields {{ name type {{ name }} }} }} }}" for i in range(30))
            + " }"
        ),
        "__type with 150 nested ofType": q(
            '{ __type(name: "Workspace") ' + "{ ofType " * 150 + "{ name }" + " }" * 150 + " }"
        ),
        "the same after a newline": q(
            '\n{ __type(name: "Workspace") ' + "{ ofType " * 150 + "{ name }" + " }" * 150 + " }"
        ),
        "2 KB of deep list literals": q(
            "{ "
            + " ".join(f"a{i}: workspaces(perPage: {'[' * 30}1{']' * 30}) {{ items {{ id }} }}" for i in range(25))
            + " }"
        ),
        "300 bad list items in 2 KB": q("{ workspaces(perPage: [" + ", ".join(["[1]"] * 300) + "]) { items { id } } }"),
        "size: 900 KB string argument": q('{ workspace(id: "' + "x" * 900_000 + '") { id } }'),
        "body 5": b"5",
        "body null": b"null",
        "body true": b"true",
        "body a string": b'"{ workspaces { items { id } } }"',
        "body nested 100k deep": deep,
        "body invalid UTF-8": b'{"query": "{ \xff\xfe }"}',
        "5000-digit integer variable": with_variables + b', "variables": {"n": ' + b"9" * 5000 + b"}}",
        "NaN variable": with_variables + b', "variables": {"n": NaN}}',
        "query + mutation, no operationName": q(
            f"query A {{ workspaces {{ items {{ id }} }} }} mutation B {{ {CREATE} }}"
        ),
        "30 aliased createWorkspace": q("mutation { " + " ".join(f"m{i}: {CREATE}" for i in range(30)) + " }"),
        "30 aliased testWebhook": q(
            "mutation { "
            + " ".join(
                f'm{i}: testWebhook(input: {{targetUrl: "http://10.0.0.1/"}}) {{ delivered }}' for i in range(30)
            )
            + " }"
        ),
        "nested lists (two full pages)": q(
            f"{{ a: workspaces(perPage: 100) {{ {PACKS} }} b: workspaces(perPage: 100) {{ {PACKS} }} }}"
        ),
        "fragment bomb": q(
            "{ workspaces { items { ...F0 } } } "
            + " ".join(
                f"fragment F{i} on Workspace {{ {' '.join([f'...F{i + 1}'] * 4) if i < 39 else 'id'} }}"
                for i in range(40)
            )
        ),
        "1000 aliases": q(
            "{ " + " ".join(f"a{i}: workspaces {{ pagination {{ total }} }}" for i in range(1000)) + " }"
        ),
        "100k-token document": q("{ workspaces { pagination { total " + "total " * 100_000 + "} } }"),
        "50 levels of data nesting": q("{ " + "workspaces { items { " * 50 + "id" + " } }" * 50 + " }"),
    }


def refused(status: int, body: dict[str, object]) -> bool:
    errors = body.get("errors")
    return isinstance(errors, list) and bool(errors) and not body.get("data")


class ServerClock:
    """In-process runs: the CPU time spent inside the app (the client's encoding of a 900 KB body
    is not the server's work). Empty when the server is elsewhere (--url)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.spent: list[float] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        started = time.process_time()
        try:
            await self.app(scope, receive, send)
        finally:
            self.spent.append((time.process_time() - started) * 1000)


async def run(client: httpx.AsyncClient, url: str, key: str | None, n: int, clock: ServerClock | None = None) -> bool:
    ok = True
    headers = {"Content-Type": "application/json", "Accept": "application/graphql-response+json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    head = f"{'request':40} {'median ms':>10} {'p90 ms':>10} {'worst ms':>10} {'cpu p90':>10} {'app cpu':>8}"
    head += f" {'sent':>8} {'answer':>7}"
    print(f"{head}  status code")
    for name, body in abuse().items():
        timings: list[float] = []
        cpu: list[float] = []
        if clock is not None:
            clock.spent.clear()
        for attempt in range(n + 1):
            started, started_cpu = time.perf_counter(), time.process_time()
            resp = await client.post(
                url, content=body, headers=headers if "no key" not in name else headers | {"Authorization": ""}
            )
            if attempt:  # the first is a warm-up (lazy imports, first parse of the schema's caches)
                timings.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - started_cpu) * 1000)
        answer = resp.json()
        code = (answer.get("errors") or [{}])[0].get("extensions", {}).get("code")
        p90 = statistics.quantiles(timings, n=10)[-1] if len(timings) > 1 else timings[0]
        cpu_p90 = statistics.quantiles(cpu, n=10)[-1] if len(cpu) > 1 else cpu[0]
        app_cpu = clock.spent[1:] if clock is not None else []  # without the warm-up
        app_p90 = statistics.quantiles(app_cpu, n=10)[-1] if len(app_cpu) > 1 else float("nan")
        budget = SIZE_BUDGET_MS if name.startswith("size:") else BUDGET_MS
        # An error answer is at most twice the request, or 8 KB (no amplification).
        small = len(resp.content) <= max(2 * len(body), 8 * 1024)
        fastest = min(p90, cpu_p90, app_p90) if app_cpu else min(p90, cpu_p90)
        good = refused(resp.status_code, answer) and fastest < budget and small
        ok &= good
        mark = "" if good else "  <-- over budget, too large or not refused"
        median, worst = statistics.median(timings), max(timings)
        sizes = f"{len(body):8} {len(resp.content):7}"
        row = f"{name:40} {median:10.2f} {p90:10.2f} {worst:10.2f} {cpu_p90:10.2f} {app_p90:8.2f} {sizes}"
        print(f"{row}  {resp.status_code} {code}{mark}")
    return ok


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--url")
    parser.add_argument("--key")
    args = parser.parse_args()
    if args.url:
        async with httpx.AsyncClient(timeout=30) as client:
            return 0 if await run(client, args.url, args.key, args.n) else 1

    from evidence_gateway.app import create_app
    from evidence_gateway.resolvers.organizations import create_api_key
    from evidence_gateway.settings import Settings

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            database_url=f"sqlite+aiosqlite:///{Path(tmp) / 'abuse.db'}",
            secret_key="bench",
            background_work=False,
            dispatcher=False,
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            key = await create_api_key(app.state.db, "bench")
            clock = ServerClock(app)
            transport = httpx.ASGITransport(app=clock)
            async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
                return 0 if await run(client, "/graphql", key, args.n, clock) else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
