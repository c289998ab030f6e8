"""Operating the service (DESIGN.md §17): structured logs, the access line of each request,
metrics, readiness and tracing. docs/observability.md is the operator's side of it."""
