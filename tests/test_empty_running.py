"""Empty running: a primary fuel row's trip includes its empty km, and the fuel is allocated by
tonne-km share (ISO 14083: a TOC covers round trips; empty km carry no tonne-km)."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import Api, create_workspace, gql_code
from tests.method_helpers import pack_files, run_rows

DIESEL_TTW, DIESEL_WTT = Decimal("2.57082"), Decimal("0.61101")
Q6 = Decimal("0.000001")
FUEL = {"mode": "road", "distance_km": 300, "mass_tonnes": 8, "fuel_type": "diesel", "vehicle_payload_tonnes": 24}
ROWS: list[dict[str, Any]] = [
    # 90 l for the 300 loaded km, 100 km empty: trip fuel 90 x 400 / 300 = 120 l; share 8 / 24
    {**FUEL, "external_id": "km", "fuel_amount": 90, "empty_distance_km": 100},
    # 180 l for a 600 km loaded run the shipment rode 300 km of, 25 % of all km empty:
    # trip fuel 180 / 0.75 = 240 l; share 8 x 300 / (24 x 600) = 0.166667
    {**FUEL, "external_id": "share", "fuel_amount": 180, "loaded_distance_km": 600, "empty_running_share": 0.25},
    {**FUEL, "external_id": "none", "fuel_amount": 90},  # loaded km only, as before: warned
]


def kg(litres: Decimal) -> tuple[Decimal, Decimal]:
    return (litres * DIESEL_TTW).quantize(Q6), (litres * DIESEL_WTT).quantize(Q6)


async def test_empty_km_are_added_and_the_fuel_allocated_by_tonne_km(api: Api) -> None:
    ws, data = await run_rows(api, ROWS)
    run, qa = data["calculation_run"], data["quality_assessment"]
    expected = [kg(Decimal(120) * Decimal("0.333333")), kg(Decimal(240) * Decimal("0.166667")),
                kg(Decimal(90) * Decimal("0.333333"))]  # fmt: skip
    assert Decimal(repr(run["total_co2e_ttw_kg"])) == sum(t for t, _ in expected)
    assert Decimal(repr(run["total_co2e_wtw_kg"])) == sum(t + w for t, w in expected)
    rules = {r["id"]: (r["severity"], r["count"]) for r in qa["rules_triggered_json"]}
    assert rules["empty_running_added"] == ("info", 2) and rules["empty_running_not_declared"] == ("warning", 1)

    csv_rows = (await pack_files(api, ws["id"]))["shipment_csv"].decode()
    rows = {r["external_id"]: r for r in csv.DictReader(io.StringIO(csv_rows))}
    assert (rows["km"]["trip_fuel_amount"], rows["km"]["allocation_share"]) == ("120.000000", "0.333333")
    assert (rows["share"]["trip_fuel_amount"], rows["share"]["allocation_share"]) == ("240.000000", "0.166667")
    assert rows["none"]["trip_fuel_amount"] == "90.000000" and rows["km"]["empty_distance_km"] == "100.0"
    assert all(r["data_category"] == "primary" for r in rows.values())


async def test_empty_running_over_graphql(api: Api) -> None:
    ws = await create_workspace(api)
    row = {"mode": "ROAD", "distanceKm": 300, "massTonnes": 8, "fuelType": "DIESEL", "fuelAmount": 90,
           "vehiclePayloadTonnes": 24, "emptyDistanceKm": 100}  # fmt: skip
    body = await api.gql(
        "mutation($id: UUID!, $in: RegisterImportInput!) { registerImport(workspaceId: $id, input: $in) { id } }",
        {"id": ws["id"], "in": {"sourceRowCount": 1, "shipments": [row]}},
    )
    assert "errors" not in body, body
    run = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).json()["data"]["calculation_run"]
    assert Decimal(repr(run["total_co2e_ttw_kg"])) == kg(Decimal(120) * Decimal("0.333333"))[0]


@pytest.mark.parametrize(
    ("row", "field", "why"),
    [
        ({"mode": "road", "distance_km": 1, "mass_tonnes": 1, "empty_distance_km": 5}, "empty_distance_km",
         "only allowed with fuel_type and fuel_amount"),
        ({**FUEL, "fuel_amount": 9, "empty_distance_km": 5, "empty_running_share": 0.1}, "empty_running_share",
         "not both"),
        ({**FUEL, "fuel_amount": 9, "empty_running_share": 1}, "empty_running_share", ""),
        ({**FUEL, "fuel_amount": 9, "loaded_distance_km": 0}, "loaded_distance_km", ""),
    ],
)  # fmt: skip
async def test_trip_fields_are_validated(api: Api, row: dict[str, Any], field: str, why: str) -> None:
    ws = await create_workspace(api)
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [row]})
    assert resp.status_code == 422, resp.text
    assert why in resp.json()["details"]["fields"][f"shipments[0].{field}"]
    if field == "empty_distance_km":
        gql_row = {"mode": "ROAD", "distanceKm": 1, "massTonnes": 1, "emptyDistanceKm": 5}
        body = await api.gql(
            "mutation($id: UUID!, $in: RegisterImportInput!) { registerImport(workspaceId: $id, input: $in) { id } }",
            {"id": ws["id"], "in": {"sourceRowCount": 1, "shipments": [gql_row]}},
        )
        assert gql_code(body) == "BAD_USER_INPUT"


async def test_the_run_says_whether_default_intensities_include_empty_running(api: Api) -> None:
    _, data = await run_rows(api, [ROWS[0], {"mode": "sea", "distance_km": 100, "mass_tonnes": 1}])
    empty = data["calculation_run"]["iso14083_json"]["empty_running"]
    assert (empty["fuel_rows_with_empty_running"], empty["fuel_rows_without_empty_running"]) == (1, 0)
    assert set(empty["default_intensities"]) == {"road", "rail", "sea", "air", "inland_waterway"}
    assert all(v.startswith("included") for v in empty["default_intensities"].values())
