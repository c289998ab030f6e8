"""Alembic's environment and revisions, shipped in the package so an installed copy can migrate."""
