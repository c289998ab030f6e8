"""Revisions, one file each, named by revision id (Alembic skips this file)."""
