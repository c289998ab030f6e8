"""The GraphQL documents the parity tests read with, each selecting every scalar field of its
types as the schema declares them (``leaves``), and the two calls that read an answer."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api
from tests.parity_support import leaves

W, R, Q, P = leaves("Workspace"), leaves("CalculationRun"), leaves("DataQualityAssessment"), leaves("ReportPack")
A, AP, E, IB = leaves("PackArtifact"), leaves("ApprovalAction"), leaves("EvidenceItem"), leaves("ImportBatch")
WE, D, EV, L = leaves("WebhookEndpoint"), leaves("WebhookDelivery"), leaves("Event"), leaves("LegacyReport")
M, K = leaves("MethodologyProfile"), leaves("ApiKey")
PACK_TREE = f"{P} calculationRun {{ {R} }} qualityAssessment {{ {Q} }} artifacts {{ {A} }} approvals {{ {AP} }} evidenceItems {{ {E} }}"  # noqa: E501

WORKSPACE_TREE = f"""
query($ws: UUID!) {{
  workspace(id: $ws) {{
    {W}
    latestCalculationRun {{ {R} qualityAssessment {{ {Q} }} }}
    latestQualityAssessment {{ {Q} }}
    latestPack {{ {P} }}
    calculationRuns {{ {R} qualityAssessment {{ {Q} }} }}
    calculationRunsConnection(first: 100) {{ edges {{ node {{ {R} }} }} nodes {{ {R} }} }}
    packs {{ {PACK_TREE} }}
    packsConnection(first: 100) {{ edges {{ node {{ {P} }} }} nodes {{ {P} }} }}
    evidenceItems {{ {E} }}
    imports {{ {IB} }}
  }}
  qualityAssessment(workspaceId: $ws) {{ {Q} }}
}}"""


def _items(field: str, args: str, selection: str) -> str:
    return f"{{ {field}({args}) {{ items {{ {selection} }} }} }}"


def _connection(field: str, args: str, selection: str) -> str:
    return f"{{ {field}({args}) {{ edges {{ node {{ {selection} }} }} nodes {{ {selection} }} }} }}"


# One document per list: together they would pass the document cost limit (schema/limits.py).
LISTS = {
    "workspaces": _items("workspaces", "perPage: 20", W),
    "workspacesConnection": _connection("workspacesConnection", "first: 20", W),
    "evidenceItems": _items("evidenceItems", "perPage: 20", E),
    "evidenceItemsConnection": _connection("evidenceItemsConnection", "first: 20", E),
    "webhookEndpoints": _items("webhookEndpoints", "perPage: 5", f"{WE} deliveries(perPage: 5) {{ items {{ {D} }} }}"),
    "webhookDeliveries": _items("webhookDeliveries", "perPage: 20", D),
    "events": _items("events", "first: 50", EV),
    "eventsConnection": _connection("eventsConnection", "first: 50", EV),
    "legacyReports": _items("legacyReports", "perPage: 20", L),
    "methodologyProfiles": f"{{ methodologyProfiles {{ {M} }} }}",
    "apiKeys": f"{{ apiKeys {{ {K} }} }}",
}

# node(id) per kind: one document with every fragment would be refused (``status`` has a type per kind).
NODE = {
    kind: f"query($id: UUID!) {{ node(id: $id) {{ __typename ... on {kind} {{ {leaves(kind)} }} }} }}"
    for kind in ("Workspace", "CalculationRun", "ReportPack", "EvidenceItem", "Event")
}

BY_ID = f"""
query($pack: UUID!, $item: UUID!, $endpoint: UUID!, $legacy: UUID!) {{
  pack(id: $pack) {{ {PACK_TREE} }}
  evidenceItem(id: $item) {{ {E} }}
  webhookEndpoint(id: $endpoint) {{ {WE} deliveries(perPage: 100) {{ items {{ {D} }} }} }}
  legacyReport(id: $legacy) {{ {L} }}
}}"""


async def get_json(api: Api, path: str, **params: Any) -> Any:
    # (httpx would replace a query already in the path with an empty ``params``.)
    resp = await api.get(path, params=params) if params else await api.get(path)
    assert resp.status_code == 200, f"{path}: {resp.text}"
    return resp.json()


async def gql_data(api: Api, document: str, variables: dict[str, Any] | None = None) -> Any:
    body = await api.gql(document, variables)
    assert not body.get("errors"), body
    return body["data"]
