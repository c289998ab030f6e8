"""Rate limits (DESIGN.md §17): per API key, per client address before authentication, and a
points budget GraphQL documents spend by their cost; counters in memory, or in Redis when
``EVIDENCE_REDIS_URL`` is set so that every node spends the same budget.

The ``limits`` library keeps the counters: fixed windows, atomic hits of any cost, one code
path for memory and Redis (and the other stores it knows) — the parts that are easy to get
subtly wrong across nodes. This package decides what is counted against whom and how it is
reported (docs/observability.md).
"""
