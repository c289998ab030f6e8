"""Distance types and the GLEC distance adjustment; dates outside the reporting period are flagged."""

from __future__ import annotations

from decimal import Decimal

from tests.conftest import Api, create_workspace
from tests.method_helpers import run_rows


async def test_sfd_is_adjusted_and_air_actual_loses_the_built_in_uplift(api: Api) -> None:
    rows = [
        {"mode": "road", "distance_km": 100, "mass_tonnes": 10, "distance_type": "sfd"},  # x 1.05 -> 1,050 tkm
        {"mode": "sea", "distance_km": 1000, "mass_tonnes": 1, "distance_type": "sfd"},  # x 1.15 -> 1,150 tkm
        {"mode": "air", "distance_km": 1080, "mass_tonnes": 1, "distance_type": "actual"},  # / 1.08 -> 1,000 tkm
        {"mode": "air", "distance_km": 500, "mass_tonnes": 1},  # default gcd: as given
        {"mode": "rail", "distance_km": 100, "mass_tonnes": 1, "distance_type": "gcd"},  # surface gcd: x 1.05, warned
    ]
    _, data = await run_rows(api, rows)
    modes = data["calculation_run"]["totals_by_mode_json"]
    assert modes["road"]["tonne_km"] == 1050.0 and modes["sea"]["tonne_km"] == 1150.0
    assert modes["air"]["tonne_km"] == 1500.0 and modes["rail"]["tonne_km"] == 105.0
    assert Decimal(repr(modes["road"]["co2e_wtw_kg"])) == Decimal(1050) * Decimal("125.22") / 1000
    types = data["calculation_run"]["iso14083_json"]["distance_types"]
    assert {k: v["rows"] for k, v in types.items()} == {"actual": 1, "gcd": 2, "sfd": 2}
    rules = {r["id"]: r["count"] for r in data["quality_assessment"]["rules_triggered_json"]}
    assert rules["distance_adjusted"] == 4 and rules["gcd_surface_mode"] == 1


async def test_dates_outside_the_period_are_flagged_not_dropped(api: Api) -> None:
    rows = [
        {"mode": "road", "distance_km": 100, "mass_tonnes": 1, "shipment_date": "2026-01-15"},
        {"mode": "road", "distance_km": 100, "mass_tonnes": 1, "shipment_date": "2025-12-31"},
        {"mode": "road", "distance_km": 100, "mass_tonnes": 1},
    ]
    _, data = await run_rows(api, rows, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    qa = data["quality_assessment"]
    assert data["calculation_run"]["shipment_count"] == 3 and qa["flagged_shipments_count"] == 1
    assert {r["id"]: r["count"] for r in qa["rules_triggered_json"]}["outside_reporting_period"] == 1


async def test_bad_distance_type_and_date_are_422(api: Api) -> None:
    ws = await create_workspace(api)
    row = {"mode": "road", "distance_km": 1, "mass_tonnes": 1, "distance_type": "crow", "shipment_date": "2026-02-30"}
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [row]})
    fields = resp.json()["details"]["fields"]
    assert resp.status_code == 422 and {"shipments[0].distance_type", "shipments[0].shipment_date"} <= set(fields)
