"""What the parser needs, and nothing heavier than the standard library: building the parser
for ``--help`` and ``--version`` must not load the app (issue 31)."""

from __future__ import annotations

import argparse
import re
from datetime import UTC, datetime, timedelta


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Every option's help ends with its default, except where there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default in (None, False, "") or isinstance(action, argparse._HelpAction):
            return action.help
        return super()._get_help_string(action)


class CliError(Exception):
    """Bad input the user can fix: printed as one ``error: ...`` line, exit 1."""


_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw]?)\s*$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def duration(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w`` or plain seconds (argparse ``type``)."""
    match = _DURATION.match(text)
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 90d, 12h, 30m or 3600")
    return timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])


def instant(text: str) -> datetime:
    """An ISO 8601 date or date-time; without a zone it is UTC (argparse ``type``)."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 date-time (2027-01-31T18:00Z)") from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value
