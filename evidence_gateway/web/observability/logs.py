"""One JSON object per line on stderr, for every logger of the process (ours, uvicorn's,
SQLAlchemy's), or a readable line when stderr is a terminal (EVIDENCE_LOG_FORMAT): one
``logging.Formatter`` renders standard-library records, so no module needs a logging API of its
own, and the fields bound for a request (request id, organisation, key prefix; log_context.py)
are merged into every line written while it runs.

A formatter of our own rather than a logging library's: the lines need a handful of steps
(bound fields, extras, trace ids, an ISO timestamp, the exception as text, redaction, JSON),
and a serving process then loads nothing more than the standard library and orjson for them.
The fields and their order are those of the structlog pipeline this replaced (see
``LogFormatter.fields``), so what reads the logs reads them as before.
"""

from __future__ import annotations

import datetime
import logging
import logging.config
import sys
from collections.abc import Callable
from typing import Any

import orjson

from evidence_gateway.web.observability import log_context, tracing
from evidence_gateway.web.observability.redaction import redact_fields

# Leading fields of every line, in this order; the rest follow as they were added.
_FIRST = ("timestamp", "level", "event", "logger", "request_id")
# What every record has: any other attribute of a record came from ``extra=``.
_RECORD_KEYS = frozenset(logging.LogRecord("name", 0, "pathname", 0, "msg", (), None).__dict__)
# Level names as the lines have always spelled them: lower case, the two aliases resolved.
_RENAMED = {"warn": "warning", "exception": "error"}
_UTC = datetime.UTC


def _level(levelname: str) -> str:
    lowered = levelname.lower()
    return _RENAMED.get(lowered, lowered)


def _timestamp(created: float) -> str:
    """ISO 8601 in UTC with a ``Z``, microseconds when there are any (``isoformat``'s rule)."""
    return datetime.datetime.fromtimestamp(created, _UTC).isoformat().replace("+00:00", "Z")


def _json(fields: dict[str, Any]) -> str:
    return orjson.dumps(fields, default=str).decode()


class LogFormatter(logging.Formatter):
    """The fields of a record, redacted, rendered by ``render`` (JSON unless told otherwise).
    The record itself is left as it came: other handlers may format it too."""

    def __init__(self, render: Callable[[dict[str, Any]], str] = _json) -> None:
        super().__init__()
        self.render = render

    def format(self, record: logging.LogRecord) -> str:
        return self.render(self.fields(record))

    def fields(self, record: logging.LogRecord) -> dict[str, Any]:
        """In the order the fields were always added: the message, the bound fields (which name
        nothing already there), level and logger, the record's extras (which replace anything
        of their name), trace ids, the timestamp, the exception; then ``_FIRST`` goes first.
        Redaction comes last, once the exception is text; uvicorn's ANSI-coloured copy of its
        message is dropped."""
        event: dict[str, Any] = {"event": record.getMessage()}
        if record.stack_info:
            event["stack_info"] = record.stack_info
        for key, value in log_context.bound().items():
            event.setdefault(key, value)
        event["level"] = _level(record.levelname)
        event["logger"] = record.name
        for key, value in record.__dict__.items():
            if key not in _RECORD_KEYS:
                event[key] = value
        tracing.log_ids(event)
        event["timestamp"] = _timestamp(record.created)
        exc_info = record.exc_info
        if exc_info and exc_info[0] is not None:
            event["exception"] = self.formatException(exc_info)
        event.pop("color_message", None)
        event = redact_fields(event)
        first = {key: event.pop(key) for key in _FIRST if key in event}
        return {**first, **event}


def json_formatter() -> logging.Formatter:
    """The formatter of every handler; named in ``dict_config`` so uvicorn's worker processes
    build it too (they re-apply the logging configuration after they start)."""
    return LogFormatter()


def _console(fields: dict[str, Any]) -> str:
    """``timestamp [level] event  key=value … [logger]`` on one line; an exception or a stack
    below it, as Python prints them."""
    fields = dict(fields)
    parts = [f"{fields.pop('timestamp', '')} [{fields.pop('level', ''):<8}] {fields.pop('event', ''):<30}"]
    logger = fields.pop("logger", None)
    below = [fields.pop(key) for key in ("stack_info", "exception") if key in fields]
    parts.extend(f"{key}={_console_value(value)}" for key, value in fields.items())
    if logger:
        parts.append(f"[{logger}]")
    return "\n".join([" ".join(parts), *below])


def _console_value(value: Any) -> str:
    if isinstance(value, str) and value and not any(c.isspace() or c in "\"'=" for c in value):
        return value
    return repr(value)


def console_formatter() -> logging.Formatter:
    """For a person at a terminal: one line per record, its fields as key=value."""
    return LogFormatter(_console)


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
