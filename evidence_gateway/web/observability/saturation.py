"""Saturation gauges, read when ``/metrics`` is scraped rather than kept up to date on every
request: nothing on the hot path, and the value is the one of the moment of the scrape.

- **This process** (free to read): the database pools' connections in use, idle and waiting,
  and the GraphQL subscriptions open. With several worker processes each copies them to the
  multiprocess files every ``MIRROR_SECONDS`` instead, and a scrape sums the workers.
- **The cluster** (one indexed query each, read from the database, the same on every node):
  the respond-async queue (depth and age of the oldest item, by kind) and the webhook backlog
  (messages owed, age of the oldest one already due). Being shared state, every node reports the
  same value: aggregate them with ``max``, not ``sum``.

The database read is bounded by ``READ_TIMEOUT_SECONDS``; when it fails the cluster gauges are
left out of that scrape (``evidence_metrics_database_read_ok`` says 0) and the rest is served.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from prometheus_client import Gauge, multiprocess
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.pool import Pool

from evidence_gateway.core.timeutil import utcnow
from evidence_gateway.store import internals
from evidence_gateway.store.repositories import backlog

log = logging.getLogger(__name__)

READ_TIMEOUT_SECONDS = 2.0


@dataclass(slots=True)
class Cluster:
    """The last read of the shared state: by kind, (count, oldest timestamp or None)."""

    ok: bool = False
    read_at: datetime = field(default_factory=utcnow)
    rows: dict[str, tuple[int, datetime | None]] = field(default_factory=dict)


async def read_cluster(db: Any) -> Cluster:
    try:
        async with asyncio.timeout(READ_TIMEOUT_SECONDS):
            rows = await backlog.waiting(db)
    except Exception:  # a scrape must not fail because the database is slow or away
        log.warning("metrics: reading the queue and webhook backlog failed", exc_info=True)
        return Cluster()
    return Cluster(True, utcnow(), dict(rows))


def pool_figures(pool: Pool) -> tuple[int, int, int, int]:
    """(in use, idle, waiting, most it will open) of a queue pool; zeros for another kind."""
    checkedout = getattr(pool, "checkedout", None)
    if checkedout is None:
        return 0, 0, 0, 0
    waiting, max_overflow = internals.queue_pool_state(pool)
    size = int(pool.size()) + max(0, max_overflow)  # type: ignore[attr-defined]
    return int(checkedout()), int(pool.checkedin()), waiting, size  # type: ignore[attr-defined]


# Several worker processes (``serve --workers N``): a scrape is answered by one of them, so each
# copies its own figures into prometheus-client's multiprocess files every MIRROR_SECONDS, summed
# over the live workers. Not registered: in one process the collector below reads them itself.
MIRROR_SECONDS = 2.0
POOL_HELP = "Database connections of this node's processes, by pool and state."
WAITING_HELP = "Callers waiting for a database connection, by pool."
MAX_HELP = "The most connections the pools of this node's processes open."
SUBSCRIPTIONS_HELP = "GraphQL subscriptions open on this node."


@functools.cache
def _mirrored() -> dict[str, Gauge]:
    """Made at the first copy, in a worker: its sample file opens then, in a directory that exists."""
    summed: dict[str, Any] = {"registry": None, "multiprocess_mode": "livesum"}
    return {
        "connections": Gauge("evidence_db_pool_connections", POOL_HELP, ["pool", "state"], **summed),
        "waiting": Gauge("evidence_db_pool_waiting", WAITING_HELP, ["pool"], **summed),
        "max": Gauge("evidence_db_pool_max_connections", MAX_HELP, ["pool"], **summed),
        "subscriptions": Gauge("evidence_subscriptions_open", SUBSCRIPTIONS_HELP, **summed),
    }


class Saturation(Collector):
    """Yields the gauges above; ``cluster`` is refreshed by the scrape before collection.
    ``mirrored``: this process's figures go to the multiprocess files (``mirror``) instead."""

    def __init__(
        self,
        pools: Callable[[], Sequence[tuple[str, Pool]]],
        subscriptions: Callable[[], int],
        *,
        mirrored: bool = False,
    ) -> None:
        self.pools = pools
        self.subscriptions = subscriptions
        self.mirrored = mirrored
        self.cluster = Cluster()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.mirrored:
            self.mirror()
            self._task = asyncio.create_task(self._mirror_loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            # A worker that stops takes its figures with it (one that crashes leaves its last ones).
            multiprocess.mark_process_dead(os.getpid())

    async def _mirror_loop(self) -> None:
        while True:
            await asyncio.sleep(MIRROR_SECONDS)
            self.mirror()

    def mirror(self) -> None:
        gauges = _mirrored()
        for name, pool in self.pools():
            in_use, idle, waiters, most = pool_figures(pool)
            gauges["connections"].labels(name, "in_use").set(in_use)
            gauges["connections"].labels(name, "idle").set(idle)
            gauges["waiting"].labels(name).set(waiters)
            gauges["max"].labels(name).set(most)
        gauges["subscriptions"].set(self.subscriptions())

    def collect(self) -> Iterator[Metric]:
        if not self.mirrored:
            yield from self._this_process()
        yield from self._cluster()

    def _this_process(self) -> Iterator[Metric]:
        connections = GaugeMetricFamily(
            "evidence_db_pool_connections",
            POOL_HELP,
            labels=["pool", "state"],
        )
        waiting = GaugeMetricFamily(
            "evidence_db_pool_waiting",
            WAITING_HELP,
            labels=["pool"],
        )
        limit = GaugeMetricFamily("evidence_db_pool_max_connections", MAX_HELP, labels=["pool"])
        for name, pool in self.pools():
            in_use, idle, waiters, most = pool_figures(pool)
            connections.add_metric([name, "in_use"], in_use)
            connections.add_metric([name, "idle"], idle)
            waiting.add_metric([name], waiters)
            limit.add_metric([name], most)
        yield from (connections, waiting, limit)
        yield GaugeMetricFamily("evidence_subscriptions_open", SUBSCRIPTIONS_HELP, value=self.subscriptions())

    def _cluster(self) -> Iterator[Metric]:
        cluster = self.cluster
        yield GaugeMetricFamily(
            "evidence_metrics_database_read_ok",
            "1 when this scrape read the queue and webhook backlog from the database, else 0.",
            value=1 if cluster.ok else 0,
        )
        if not cluster.ok:
            return
        depth = GaugeMetricFamily(
            "evidence_respond_async_queue_depth",
            "Respond-async work accepted and not started by any node, by kind (calculation, pack).",
            labels=["kind"],
        )
        age = GaugeMetricFamily(
            "evidence_respond_async_queue_oldest_age_seconds",
            "Age of the oldest respond-async item waiting to start, by kind (0: none waiting).",
            labels=["kind"],
        )
        for kind in ("calculation", "pack"):
            count, oldest = cluster.rows.get(kind, (0, None))
            depth.add_metric([kind], count)
            age.add_metric([kind], _age(cluster.read_at, oldest) if count else 0.0)
        yield from (depth, age)
        owed, earliest = cluster.rows.get("webhook", (0, None))
        yield GaugeMetricFamily(
            "evidence_webhook_backlog_messages",
            "Webhook messages owed to enabled endpoints (pending: not delivered, not given up).",
            value=owed,
        )
        yield GaugeMetricFamily(
            "evidence_webhook_oldest_due_age_seconds",
            "How long the oldest owed webhook message has been due (0: none due).",
            value=_age(cluster.read_at, earliest) if owed else 0.0,
        )


def _age(now: datetime, then: datetime | None) -> float:
    return 0.0 if then is None else max(0.0, (now - then).total_seconds())
