"""docs/ops: the sample alert rules and the Grafana dashboard parse, and every metric they query is
one the app exports (a renamed metric would leave an alert that never fires)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import Api

OPS = Path(__file__).resolve().parent.parent / "docs" / "ops"
# The series each metric type exposes besides its family name.
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_count", "_sum", "_created"), "gauge": ("",)}
METRIC = re.compile(r"\b(evidence_[a-z0-9_]+)\b")


def alert_expressions() -> list[str]:
    rules = yaml.safe_load((OPS / "prometheus-alerts.yaml").read_text())
    found = [rule for group in rules["groups"] for rule in group["rules"]]
    assert found and all({"alert", "expr", "labels", "annotations"} <= set(rule) for rule in found)
    assert len({rule["alert"] for rule in found}) == len(found), "alert names repeat"
    return [str(rule["expr"]) for rule in found]


def dashboard_expressions() -> list[str]:
    dashboard: dict[str, Any] = json.loads((OPS / "grafana-dashboard.json").read_text())
    panels = dashboard["panels"]
    assert dashboard["uid"] and panels and len({p["id"] for p in panels}) == len(panels)
    return [target["expr"] for panel in panels for target in panel["targets"]]


async def exported(api: Api) -> set[str]:
    text = (await api.get("/metrics", key=None)).text
    names = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


async def test_alerts_and_dashboard_query_only_exported_metrics(api: Api) -> None:
    expressions = alert_expressions() + dashboard_expressions()
    used = {name for expr in expressions for name in METRIC.findall(expr)}
    available = await exported(api)
    assert len(used) >= 12, used  # the saturation signals are all there
    assert sorted(used - available) == []
    for signal in (
        "evidence_db_pool_waiting",
        "evidence_respond_async_queue_oldest_age_seconds",
        "evidence_webhook_oldest_due_age_seconds",
        "evidence_webhook_delivery_duration_seconds_bucket",
        "evidence_subscriptions_open",
        "evidence_events_appended_total",
    ):
        assert signal in used, signal
