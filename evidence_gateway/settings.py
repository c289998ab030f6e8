"""Runtime settings, read once from ``EVIDENCE_*`` environment variables."""

from __future__ import annotations

import logging
import secrets
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

log = logging.getLogger(__name__)

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./evidence.db"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="EVIDENCE_", extra="ignore")

    database_url: str = DEFAULT_DATABASE_URL
    # Signs download links. Empty in dev: generated and persisted beside the DB.
    secret_key: str = ""
    public_base_url: str = "http://127.0.0.1:8000"
    signed_url_ttl_seconds: int = Field(default=900, ge=1)
    max_body_bytes: int = Field(default=1024 * 1024, ge=1)
    max_import_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    webhook_allow_private_targets: bool = False
    webhook_connect_timeout_seconds: float = Field(default=3.0, gt=0)
    webhook_read_timeout_seconds: float = Field(default=5.0, gt=0)
    legacy_sunset: str | None = None
    # Seconds a verified key is trusted per process (0: look it up on every request).
    auth_cache_seconds: float = Field(default=5.0, ge=0)
    sql_echo: bool = False
    # PostgreSQL: let start-up upgrade the schema. Off, so nodes of a deploy do not race
    # to migrate; SQLite always upgrades itself.
    migrate: bool = False
    # Calculation runs and pack generations hold a lease this long, renewed while they work; a
    # sweeper fails the work of a node that stopped renewing (DESIGN.md §15).
    lease_seconds: float = Field(default=30.0, gt=0)
    # Run the sweeper and the queue of respond-async work in this process.
    background_work: bool = True
    # Testing aid: name of a checkpoint (e.g. "calculation.computed") where work blocks forever.
    pause_at: str = ""
    graphiql_assets_dir: str = ""

    def resolved_secret_key(self) -> str:
        """Return the signing secret, creating a persisted dev secret if none is set."""
        if self.secret_key:
            return self.secret_key
        path = _dev_secret_path(self.database_url)
        if path.exists():
            return path.read_text().strip()
        key = secrets.token_hex(32)
        path.write_text(key)
        log.warning("EVIDENCE_SECRET_KEY not set: generated a dev secret in %s", path)
        return key


def _dev_secret_path(database_url: str) -> Path:
    if database_url.startswith("sqlite") and ":///" in database_url:
        db_path = database_url.split(":///", 1)[1]
        if db_path and db_path != ":memory:":
            return Path(db_path).with_suffix(".secret")
    return Path(".evidence-secret")


@lru_cache
def get_settings() -> Settings:
    return Settings()
