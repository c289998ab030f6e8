"""The one domain error family. Each transport maps it once (REST status, GraphQL code)."""

from __future__ import annotations

from typing import Any, ClassVar


class DomainError(Exception):
    status: ClassVar[int] = 400
    code: ClassVar[str] = "bad_request"
    graphql_code: ClassVar[str] = "BAD_USER_INPUT"

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def body(self) -> dict[str, Any]:
        """ErrorResponse body: ``{"error": ..., "details": {"code": ..., ...}}``."""
        return {"error": self.message, "details": {"code": self.code, **self.details}}


class BadRequest(DomainError):
    status = 400
    code = "bad_request"


class Unauthenticated(DomainError):
    status = 401
    code = "unauthenticated"
    graphql_code = "UNAUTHENTICATED"

    def __init__(self, message: str = "missing or invalid API key", **details: Any) -> None:
        super().__init__(message, **details)


class Forbidden(DomainError):
    status = 403
    code = "forbidden"
    graphql_code = "FORBIDDEN"


class InsufficientScope(Forbidden):
    """The key is valid but its scope does not cover the operation (RFC 6750's error name)."""

    code = "insufficient_scope"


class NotFound(DomainError):
    status = 404
    code = "not_found"
    graphql_code = "NOT_FOUND"


class RequestTimeout(DomainError):
    """The request body did not arrive within its deadline (EVIDENCE_BODY_TIMEOUT_SECONDS)."""

    status = 408
    code = "request_timeout"
    graphql_code = "REQUEST_TIMEOUT"


class MethodNotAllowed(DomainError):
    status = 405
    code = "method_not_allowed"


class Conflict(DomainError):
    status = 409
    code = "conflict"
    graphql_code = "CONFLICT"


class PayloadTooLarge(DomainError):
    status = 413
    code = "payload_too_large"
    graphql_code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaType(DomainError):
    """A body declared as something other than JSON: refused unread, whatever it contains.

    ``accept_post`` is what the REST transport sends as ``Accept-Post`` so a client can learn
    the one media type we take (RFC 9110 §15.5.16 asks for a hint; Accept-Post is the
    registered header for it).
    """

    status = 415
    code = "unsupported_media_type"
    accept_post: ClassVar[str] = "application/json"


class InvalidInput(DomainError):
    """Well-formed but invalid input; ``details.fields`` maps each field to why."""

    status = 422
    code = "invalid_input"

    def __init__(self, message: str = "invalid input", *, fields: dict[str, str], **details: Any):
        super().__init__(message, fields=fields, **details)
        self.fields = fields


class UpstreamFailed(DomainError):
    status = 502
    code = "upstream_failed"
    graphql_code = "UPSTREAM_FAILED"


class InternalError(DomainError):
    status = 500
    code = "internal_error"
    graphql_code = "INTERNAL_SERVER_ERROR"


class PreconditionFailed(DomainError):
    """If-Match named another version of the resource than the current one."""

    status = 412
    code = "precondition_failed"
    graphql_code = "PRECONDITION_FAILED"


class IdempotencyKeyReused(DomainError):
    """The Idempotency-Key was used before for a different request."""

    status = 422
    code = "idempotency_key_reused"


class IdempotencyKeyInUse(Conflict):
    """A request with this Idempotency-Key is still being processed."""

    code = "idempotency_key_in_use"
