"""One ``error:`` line for every failure the user can act on: a traceback would bury the one
thing to fix. Loaded only once a command has failed, by which time what it names is loaded."""

from __future__ import annotations

from pydantic import ValidationError

from evidence_gateway.cli.arguments import CliError
from evidence_gateway.cli.support import one_line
from evidence_gateway.core.evidence_keys import SigningKeyError
from evidence_gateway.errors import DomainError, InvalidInput
from evidence_gateway.schema.persisted import TrustedDocumentsError
from evidence_gateway.store.backup import BackupError
from evidence_gateway.store.migrate import SchemaError


def describe(exc: Exception) -> str:
    """The line after ``error:``."""
    if isinstance(exc, SchemaError | CliError | TrustedDocumentsError | BackupError | SigningKeyError):
        return str(exc)
    if isinstance(exc, InvalidInput):
        where = "; ".join(f"{k}: {v}" for k, v in list(exc.fields.items())[:5])
        more = f" (and {len(exc.fields) - 5} more)" if len(exc.fields) > 5 else ""
        return f"{exc.message}: {where}{more}; nothing changed"
    if isinstance(exc, DomainError):
        return exc.message
    if isinstance(exc, ValidationError) and exc.title == "Settings":
        # Settings come from EVIDENCE_* variables (or .env): name the variable, not the field.
        found = exc.errors()[0]
        name = "EVIDENCE_" + "_".join(str(part) for part in found["loc"]).upper()
        return f"bad setting {name}: {found['msg']}"
    return one_line(exc)
