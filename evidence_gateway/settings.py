"""Runtime settings, read once from ``EVIDENCE_*`` environment variables."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from functools import lru_cache
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from evidence_gateway.web.proxies import HEADERS as PROXY_HEADERS
from evidence_gateway.web.proxies import parse_networks


def parse_day_or_http_date(raw: str) -> datetime | None:
    """An ISO date/datetime (UTC when it names no zone) or an RFC 9110 HTTP-date, else None."""
    value = raw.strip()
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        try:
            parsed = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


# RFC 9110 §5.1: a field name is a token.
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./evidence.db"


class Settings(BaseSettings):
    # The environment wins over a .env file in the working directory, which wins over the defaults
    # (command-line options win over both: they are set into the environment).
    model_config = SettingsConfigDict(
        env_prefix="EVIDENCE_", extra="ignore", env_file=".env", env_file_encoding="utf-8"
    )

    database_url: str = DEFAULT_DATABASE_URL
    # PostgreSQL: connections each process keeps open, and never more; a request finding them
    # all busy waits its turn (a connection opened and closed per request cost more than a read).
    # One event loop keeps about ten busy; each more holds its own prepared statements (memory)
    # and counts against the server's max_connections once per worker.
    database_pool_size: int = Field(default=10, ge=1)
    # Signs download links. Empty: generated once and kept in the database (instance_secrets.py).
    secret_key: str = ""
    public_base_url: str = "http://127.0.0.1:8000"
    signed_url_ttl_seconds: int = Field(default=900, ge=1)
    max_body_bytes: int = Field(default=1024 * 1024, ge=1)
    max_import_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    webhook_allow_private_targets: bool = False
    webhook_connect_timeout_seconds: float = Field(default=3.0, gt=0)
    webhook_read_timeout_seconds: float = Field(default=5.0, gt=0)
    # Seconds between the attempts of a delivery to a registered endpoint (DESIGN.md §16), each
    # with ±20 % jitter; once spent, the message is given up (a hand retry may still send it).
    webhook_retry_schedule: str = "5,300,1800,7200,18000,36000,36000"
    # An endpoint whose attempts all failed for this long is disabled (5 days).
    webhook_disable_after_seconds: float = Field(default=5 * 86400, ge=0)
    # Attempts one node has on the wire at once.
    webhook_max_in_flight: int = Field(default=64, ge=1)
    # Run the webhook dispatcher in this process (`serve --no-dispatcher` turns it off).
    dispatcher: bool = True
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
    # "development" turns on what helps someone exploring and tells an attacker about the schema:
    # GraphiQL, introspection without a key, "Did you mean" suggestions. Each explicit setting
    # below wins over it; unset, each follows it.
    env: str = "production"
    # Serve the GraphiQL IDE at GET /graphql (false: 404, for deployments that want no IDE).
    graphiql: bool | None = None
    # GET /metrics (Prometheus text format) with "Authorization: Bearer <token>"; without a token it
    # is served only to a server listening on loopback alone (docs/observability.md). false: 404.
    metrics: bool = True
    metrics_token: str = ""
    # Set by `serve`: the address it listens on ("" in process: tests, embedding).
    listen_host: str = ""
    # Rate limits (docs/observability.md), per fixed window of this many seconds. Generous by
    # default: they stop floods and key guessing, not ordinary clients or the benchmarks.
    rate_limits: bool = True
    rate_limit_window_seconds: int = Field(default=60, ge=1)
    rate_limit_per_key: int = Field(default=100_000, ge=1)  # requests with one API key
    rate_limit_per_address: int = Field(default=2_000, ge=1)  # requests without a key, per client address
    rate_limit_auth_failures: int = Field(default=60, ge=1)  # 401s per client address, then 429
    rate_limit_graphql_points: int = Field(default=20_000_000, ge=1)  # GraphQL document cost, per key or address
    # GraphQL subscriptions over WebSocket (docs/events.md), counted per process: open sockets per
    # API key and per client address, and live subscriptions per API key (over all its sockets).
    ws_max_connections_per_key: int = Field(default=100, ge=1)
    ws_max_connections_per_address: int = Field(default=100, ge=1)
    ws_max_subscriptions_per_key: int = Field(default=500, ge=1)
    # Shared rate-limit counters for several nodes (redis://host:port/db); memory otherwise.
    redis_url: str = ""
    # Reverse proxies whose forwarding header names the client (comma-separated addresses or CIDRs);
    # none by default: the TCP peer is the client (evidence_gateway/web/proxies.py).
    trusted_proxies: str = ""
    # The one header read from them: x-forwarded-for, or forwarded (RFC 7239).
    trusted_proxy_header: str = "x-forwarded-for"
    # Slow clients (docs/operations.md): the request line and headers, and then the body, must
    # arrive within these many seconds (408 otherwise); an idle keep-alive connection is closed.
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    body_timeout_seconds: float = Field(default=60.0, gt=0)
    keep_alive_seconds: int = Field(default=5, ge=1)
    # Connections (and requests in flight) one server process holds at once: past it new requests
    # get 503. Per client address: connections past it are closed at once (trusted proxies exempt).
    max_connections: int = Field(default=1000, ge=1)
    max_connections_per_address: int = Field(default=100, ge=1)
    # Origins whose pages may call the API from a browser (comma-separated, e.g.
    # "https://app.example.com,http://localhost:5173"); none by default (evidence_gateway/web/cors.py).
    cors_origins: str = ""
    # Request headers pages may send besides the defaults (comma-separated, e.g. "X-Tenant,Sentry-Trace").
    cors_allow_headers: str = ""
    # GraphQL hardening (docs/graphql.md, "Limits"). Introspection off also drops "Did you mean".
    graphql_introspection: bool = True
    # Introspection without an API key, and "Did you mean" in validation errors: unset, only when
    # EVIDENCE_ENV=development.
    graphql_anonymous_introspection: bool | None = None
    graphql_suggestions: bool | None = None
    # Mutation fields one document may run: each is a change of its own (a transaction, events).
    graphql_max_mutations: int = Field(default=5, ge=1)
    # A document (the ``query`` text, over HTTP and WebSocket) larger than this is refused before
    # it is lexed: QUERY_TOO_COMPLEX.
    graphql_max_document_bytes: int = Field(default=64 * 1024, ge=1024)
    # A query answer larger than this is replaced by a RESPONSE_TOO_LARGE error.
    graphql_max_response_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    # A query still executing after this long is stopped with QUERY_TIMEOUT (mutations run to the end).
    graphql_execution_seconds: float = Field(default=15.0, gt=0)
    # Automatic persisted queries (resolvers/persisted_queries.py): the largest document one may
    # hold (larger ones are refused, PERSISTED_QUERY_TOO_LARGE), how many one organisation may
    # hold (its least recently used make room), how long an unused one is kept, and the bytes of
    # documents each node keeps in memory.
    graphql_persisted_query_max_bytes: int = Field(default=32 * 1024, ge=1)
    graphql_persisted_queries_per_org: int = Field(default=500, ge=1)
    graphql_persisted_query_unused_days: float = Field(default=30.0, gt=0)
    graphql_persisted_query_cache_bytes: int = Field(default=8 * 1024 * 1024, ge=0)
    # A JSON file of sha256 -> document: when set, only those documents run (schema/persisted.py).
    graphql_trusted_documents: str = ""
    # Webhook endpoints whose id labels the delivery-latency histogram in a process; the rest
    # count as "other" (docs/observability.md): the label's cardinality stays bounded.
    metrics_webhook_endpoints: int = Field(default=20, ge=0)
    # Log lines on stderr: "auto" renders readable lines on a terminal and JSON otherwise;
    # "json" or "console" forces one (observability/logs.py).
    log_format: Literal["auto", "json", "console"] = "auto"
    # The instance's Ed25519 signing key of log checkpoints and pack seals, from outside (a secret
    # manager): a PEM file, or the PEM / base64 raw key itself. Unset: generated and kept in the
    # database (docs/verification.md, "Keys"). Never logged, never answered.
    signing_key_file: str = ""
    signing_key: SecretStr = SecretStr("")
    # The signer name in checkpoints' signature lines and the origin prefix of each organisation's
    # log; unset: the host of EVIDENCE_PUBLIC_BASE_URL.
    log_name: str = ""
    # How often a node signs a checkpoint of each organisation's log while it grows.
    checkpoint_seconds: float = Field(default=10.0, gt=0)
    # An RFC 3161 time-stamping authority each seal's signature is stamped by (empty: none); the
    # PEM certificates of its chain, put in bundles so auditors can check it offline.
    tsa_url: str = ""
    tsa_ca_file: str = ""
    tsa_timeout_seconds: float = Field(default=10.0, gt=0)
    # Where `api-docs-assets` stores, and /api/docs looks for, Redoc's pinned script (web/api_docs.py).
    api_docs_assets_dir: str = ""
    # Live GraphQL subscriptions one client address holds over all its sockets and keys, per process.
    ws_max_subscriptions_per_address: int = Field(default=500, ge=1)
    # PACT / iLEAP exchange (docs/ileap.md): how long an access token from /auth/token is valid.
    pact_token_ttl_seconds: int = Field(default=3600, ge=60, le=86400)
    # @defer/@stream answered incrementally (multipart/mixed or text/event-stream) to a client that
    # asks for it; off, or to any other client, such a document answers one complete result.
    graphql_incremental_delivery: bool = True

    @field_validator("webhook_retry_schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        delays = [part.strip() for part in value.split(",") if part.strip()]
        if not delays or any(float(d) < 0 for d in delays):
            raise ValueError("a comma-separated list of seconds, each >= 0")
        return value

    @field_validator("legacy_sunset")
    @classmethod
    def _sunset(cls, value: str | None) -> str | None:
        if value and value.strip() and parse_day_or_http_date(value) is None:
            raise ValueError(f"{value!r}: an ISO date or datetime (2027-06-30) or an HTTP-date")
        return value

    @field_validator("cors_origins")
    @classmethod
    def _origins(cls, value: str) -> str:
        for origin in (part.strip() for part in value.split(",")):
            if origin and origin != "*" and ("://" not in origin or origin.endswith("/")):
                raise ValueError(f"{origin!r}: an origin is scheme://host[:port], without a path")
        return value

    @field_validator("cors_allow_headers")
    @classmethod
    def _header_names(cls, value: str) -> str:
        for name in (part.strip() for part in value.split(",")):
            if name and not _TOKEN.fullmatch(name):
                raise ValueError(f"{name!r} is not an HTTP header name")
        return value

    def cors_allow_header_list(self) -> list[str]:
        return [part.strip() for part in self.cors_allow_headers.split(",") if part.strip()]

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        parse_networks(value)
        return value

    @field_validator("trusted_proxy_header")
    @classmethod
    def _proxy_header(cls, value: str) -> str:
        if value.strip().lower() not in PROXY_HEADERS:
            raise ValueError(f"one of {', '.join(PROXY_HEADERS)}")
        return value.strip().lower()

    @model_validator(mode="after")
    def _development_defaults(self) -> Settings:
        development = self.env.strip().lower() == "development"
        for name in ("graphiql", "graphql_anonymous_introspection", "graphql_suggestions"):
            if getattr(self, name) is None:
                setattr(self, name, development)
        return self

    def cors_origin_list(self) -> list[str]:
        return [part.strip() for part in self.cors_origins.split(",") if part.strip()]

    def webhook_retry_delays(self) -> list[float]:
        return [float(part) for part in self.webhook_retry_schedule.split(",") if part.strip()]

    @property
    def webhook_claim_seconds(self) -> float:
        """How long a node holds a message it is sending: one resolve, one connect, the response,
        and a margin. A node that dies mid-attempt lets the message go after this."""
        return 2 * self.webhook_connect_timeout_seconds + 2 * self.webhook_read_timeout_seconds + 2


@lru_cache
def get_settings() -> Settings:
    return Settings()
