"""The log lines' format, pinned (DESIGN.md §17, docs/observability.md): the fields, their values
and their order, written out in full for a few representative records. The expected lines are
what the structlog pipeline the formatter replaced wrote for the same records (its bound fields
came in an order that changed from process to process; they now come in the order bound)."""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from collections.abc import Iterator
from decimal import Decimal
from types import SimpleNamespace
from typing import Any

import pytest

from evidence_gateway.web.observability import log_context, tracing
from evidence_gateway.web.observability.logs import console_formatter, json_formatter

CREATED = 1767604364.120931  # 2026-01-05T09:12:44.120931Z
KEY = "evk_" + "ab" * 24


@pytest.fixture(autouse=True)
def _no_bound_fields() -> Iterator[None]:
    log_context.clear()
    yield
    log_context.clear()


def record(
    name: str, level: int, msg: object, *args: object, exc_info: Any = None, stack: str | None = None, **extra: Any
) -> logging.LogRecord:
    made = logging.getLogger(name).makeRecord(name, level, "src.py", 7, msg, args, exc_info, extra=extra, sinfo=stack)
    made.created = CREATED
    return made


def test_an_access_line_has_the_bound_fields_then_its_own() -> None:
    log_context.start(request_id="rid-1")
    log_context.bind(org="0f0f", key_prefix="abcd1234")
    line = record(
        "evidence_gateway.access", logging.INFO, "request",
        method="GET", path="/api/v2/workspaces", route="/api/v2/workspaces", graphql_operation=None,
        org="0f0f", key_prefix="abcd1234", status=200, duration_ms=1.25, client="127.0.0.1",
    )  # fmt: skip
    assert json_formatter().format(line) == (
        '{"timestamp":"2026-01-05T09:12:44.120931Z","level":"info","event":"request",'
        '"logger":"evidence_gateway.access","request_id":"rid-1","org":"0f0f","key_prefix":"abcd1234",'
        '"method":"GET","path":"/api/v2/workspaces","route":"/api/v2/workspaces","graphql_operation":null,'
        '"status":200,"duration_ms":1.25,"client":"127.0.0.1"}'
    )


def test_an_error_has_its_exception_last_and_every_secret_redacted() -> None:
    log_context.start(request_id="rid-2")
    log_context.bind(key_prefix="abcd1234")
    error = RuntimeError(f"lost {KEY} at /d?x=1&signature=0f0f")
    line = record(
        "evidence_gateway.web", logging.ERROR, "boom %s", "Bearer xyz",
        exc_info=(RuntimeError, error, None), id=uuid.UUID(int=5), amount=Decimal("1.50"),
    )  # fmt: skip
    assert json_formatter().format(line) == (
        '{"timestamp":"2026-01-05T09:12:44.120931Z","level":"error","event":"boom Bearer [credentials]",'
        '"logger":"evidence_gateway.web","request_id":"rid-2","key_prefix":"abcd1234",'
        '"id":"00000000-0000-0000-0000-000000000005","amount":"1.50",'
        '"exception":"RuntimeError: lost [api key] at /d?x=1&[link signature]"}'
    )


def test_a_traceback_is_the_exception_text_as_python_prints_it() -> None:
    try:
        raise ValueError(f"whsec_abc= {KEY}")
    except ValueError:
        line = record("x", logging.ERROR, "failed", exc_info=sys.exc_info())
    exception = json_formatter().fields(line)["exception"]
    assert exception.startswith("Traceback (most recent call last):\n  File ")
    assert exception.endswith("\nValueError: [webhook secret] [api key]")
    assert line.exc_text is None  # the record is left as it came, for any other handler


def test_uvicorns_coloured_copy_is_dropped_and_its_arguments_applied() -> None:
    line = record("uvicorn.error", logging.INFO, "Started server process [%d]", 42, color_message="[\x1b[36m%d\x1b[0m]")
    assert json_formatter().format(line) == (
        '{"timestamp":"2026-01-05T09:12:44.120931Z","level":"info","event":"Started server process [42]",'
        '"logger":"uvicorn.error"}'
    )


def test_stack_nested_secrets_tuples_and_whole_second_timestamps() -> None:
    line = record(
        "x", logging.WARNING, "hook failed", stack="Stack (most recent call last):\n  at signature=1",
        details={"password": "p", "url": "https://h/?signature=1"}, tags=("a", "whsec_abc"),
    )  # fmt: skip
    line.created = 1767604364.0
    assert json_formatter().format(line) == (
        '{"timestamp":"2026-01-05T09:12:44Z","level":"warning","event":"hook failed","logger":"x",'
        '"stack_info":"Stack (most recent call last):\\n  at [link signature]",'
        '"details":{"password":"[redacted]","url":"https://h/?[link signature]"},"tags":["a","[webhook secret]"]}'
    )


def test_a_message_that_is_not_text_and_a_level_of_its_own() -> None:
    assert json_formatter().format(record("x", logging.DEBUG, ValueError("not a string"))) == (
        '{"timestamp":"2026-01-05T09:12:44.120931Z","level":"debug","event":"not a string","logger":"x"}'
    )
    # A level no library names (uvicorn names 5 "TRACE" once it is imported).
    assert json_formatter().fields(record("x", 7, "deep"))["level"] == "level 7"


def test_trace_ids_while_a_span_is_current(monkeypatch: pytest.MonkeyPatch) -> None:
    context = SimpleNamespace(is_valid=True, trace_id=0xABC, span_id=0xDEF)
    span = SimpleNamespace(get_span_context=lambda: context)
    monkeypatch.setattr(tracing, "active", True)
    monkeypatch.setattr(tracing, "_trace", SimpleNamespace(get_current_span=lambda: span), raising=False)
    log_context.start(request_id="rid-3")
    fields = json_formatter().fields(record("x", logging.INFO, "traced", status=200))
    assert list(fields) == ["timestamp", "level", "event", "logger", "request_id", "status", "trace_id", "span_id"]
    assert (fields["trace_id"], fields["span_id"]) == (f"{0xABC:032x}", f"{0xDEF:016x}")


def test_the_console_line_reads_as_one_line_with_its_exception_below() -> None:
    log_context.start(request_id="rid-4")
    error = RuntimeError(f"lost {KEY}")
    line = record("evidence_gateway.web", logging.ERROR, "boom", exc_info=(RuntimeError, error, None), note="two words")
    assert console_formatter().format(line) == (
        "2026-01-05T09:12:44.120931Z [error   ] boom                           "
        "request_id=rid-4 note='two words' [evidence_gateway.web]\n"
        "RuntimeError: lost [api key]"
    )


async def test_fields_bound_in_a_child_task_stay_in_it() -> None:
    log_context.start(request_id="parent")

    async def child() -> dict[str, Any]:
        log_context.bind(org="o")
        return dict(log_context.bound())

    assert await asyncio.create_task(child()) == {"request_id": "parent", "org": "o"}
    assert dict(log_context.bound()) == {"request_id": "parent"}
    log_context.bind(request_id="again")
    assert dict(log_context.bound()) == {"request_id": "again"}
