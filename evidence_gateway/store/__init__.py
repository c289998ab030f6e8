"""Persistence: engines, sessions, executors, records, hand-written SQL and driver calls,
migrations and backups."""
