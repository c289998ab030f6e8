"""One JSON object per line on stderr, for every logger of the process (ours, uvicorn's,
SQLAlchemy's), or a readable line when stderr is a terminal (EVIDENCE_LOG_FORMAT): structlog's
ProcessorFormatter renders standard-library records, so no module needs a logging API of its
own, and the fields bound for a request (request id, organisation, key prefix) are merged into
every line written while it runs.

structlog rather than a hand-written ``logging.Formatter``: it brings the context variables a
request binds, ISO timestamps, exception rendering and JSON output as composable processors,
and the redaction step slots in before rendering.
"""

from __future__ import annotations

import logging
import logging.config
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import orjson
import structlog

from evidence_gateway.web.observability import tracing
from evidence_gateway.web.observability.redaction import redact_processor


def _dumps(event: Any, **_kw: Any) -> str:
    return orjson.dumps(event, default=str).decode()


# Leading fields of every line, in this order; the rest follow as they were added.
_FIRST = ("timestamp", "level", "event", "logger", "request_id")


def _tidy(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    """Leading fields first; uvicorn's ANSI-coloured copy of its message dropped."""
    event.pop("color_message", None)
    first = {k: event.pop(k) for k in _FIRST if k in event}
    return {**first, **event}


def json_formatter(renderer: Any = None) -> logging.Formatter:
    """The formatter of every handler; named in ``dict_config`` so uvicorn's worker processes
    build it too (they re-apply the logging configuration after they start). ``renderer``
    replaces the JSON rendering only: every line is redacted and tidied the same way."""
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.stdlib.ExtraAdder(),
        tracing.log_ids,  # trace_id and span_id while tracing is on
        structlog.processors.TimeStamper(fmt="iso", utc=True, key="timestamp"),
    ]
    return structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared,
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            redact_processor,
            _tidy,
            renderer or structlog.processors.JSONRenderer(serializer=_dumps),
        ],
    )


def console_formatter() -> logging.Formatter:
    """For a person at a terminal: one aligned line per record, its fields as key=value."""
    return json_formatter(structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))


def resolve_format(setting: str = "auto") -> str:
    """``json`` or ``console``: ``auto`` (EVIDENCE_LOG_FORMAT's default) is console when stderr is a terminal."""
    if setting == "auto":
        return "console" if sys.stderr.isatty() else "json"
    return setting


def dict_config(level: str = "info", log_format: str = "auto") -> dict[str, Any]:
    """``logging.config.dictConfig`` input: JSON (or, see ``resolve_format``, console lines) on
    stderr at ``level``; uvicorn's access log is off (the access middleware writes one line per
    request, without query strings). Decided here, in the process that owns the terminal, so
    worker processes write what it writes."""
    chosen = resolve_format(log_format)
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {chosen: {"()": f"evidence_gateway.web.observability.logs.{chosen}_formatter"}},
        "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": chosen, "stream": "ext://sys.stderr"}},
        "root": {"handlers": ["stderr"], "level": level.upper()},
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
            "uvicorn.access": {"handlers": [], "propagate": False},
            # Its "Context impl …" lines at every schema check say nothing to an operator; the
            # commands that migrate print the revision they reached themselves.
            "alembic": {"level": "WARNING"},
        },
    }


def configure(level: str = "info", log_format: str = "auto") -> None:
    logging.config.dictConfig(dict_config(level, log_format))
