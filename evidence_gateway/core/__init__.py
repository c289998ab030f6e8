"""The write-path core: unit of work, the event log, idempotency, leases, organisation scoping
and the request context."""
