"""PLACEHOLDER (replaced at merge): iLEAP Transport Activity Data from a pack's TCEs."""

from __future__ import annotations

from typing import Any

from evidence_gateway.exchange.footprints import PackSource


def transport_activity_data(source: PackSource) -> list[dict[str, Any]]:
    modes = {t["tocId"]: t.get("mode") for t in source.ileap.get("tocs", [])}
    out: list[dict[str, Any]] = []
    for shipment in source.ileap.get("shipmentFootprints", []):
        for tce in shipment["tces"]:
            row: dict[str, Any] = {
                "activityId": f"{source.pack_id}:{tce['tceId']}",
                "consignmentIds": [shipment["shipmentId"]],
            }
            if tce.get("tocId") in modes:
                row["mode"] = modes[tce["tocId"]]
            out.append(row)
    return out
