"""Fuel rows are allocated to the shipment (ISO 14083 tonne-km on one trip, or the carrier's share);
without allocation data they fall back to the default intensity; excluded rows are estimated."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import pytest

from tests.conftest import Api, create_workspace, gql_code
from tests.method_helpers import pack_files, run_rows

DIESEL_TTW, DIESEL_WTT = Decimal("2.57082"), Decimal("0.61101")
FUEL = {"mode": "road", "distance_km": 300, "fuel_type": "diesel", "fuel_amount": 90}


def _kg(value: float) -> Decimal:
    return Decimal(repr(value))


async def test_payload_share_and_carrier_share(api: Api) -> None:
    rows = [
        {**FUEL, "external_id": "P", "mass_tonnes": 8, "vehicle_payload_tonnes": 24},  # share 0.333333
        {**FUEL, "external_id": "S", "mass_tonnes": 8, "fuel_allocation_share": 0.5},
    ]
    ws, data = await run_rows(api, rows)
    run = data["calculation_run"]
    litres_p = Decimal(90) * Decimal("0.333333")
    expected_ttw = (litres_p * DIESEL_TTW).quantize(Decimal("0.000001")) + Decimal(45) * DIESEL_TTW
    assert _kg(run["total_co2e_ttw_kg"]) == expected_ttw
    assert data["quality_assessment"]["primary_data_share_percent"] == 100.0
    files = await pack_files(api, ws["id"])
    lines = {r["external_id"]: r for r in csv.DictReader(io.StringIO(files["shipment_csv"].decode()))}
    assert lines["P"]["allocation_share"] == "0.333333" and lines["S"]["allocation_share"] == "0.500000"
    assert lines["S"]["co2e_wtt_kg"] == f"{Decimal(45) * DIESEL_WTT:.6f}"
    assert lines["P"]["data_category"] == "primary" and lines["P"]["factor_ref"].endswith(":fuel:diesel")


async def test_fuel_without_allocation_uses_the_default_intensity(api: Api) -> None:
    rows = [
        {**FUEL, "mass_tonnes": 10},  # 3,000 tkm x road default
        {**FUEL, "distance_km": 0, "mass_tonnes": 18.5, "vehicle_payload_tonnes": 24},  # 0 tkm: nothing allocatable
    ]
    _, data = await run_rows(api, rows)
    run, qa = data["calculation_run"], data["quality_assessment"]
    assert _kg(run["total_co2e_wtw_kg"]) == Decimal(3000) * Decimal("125.22") / 1000
    rules = {r["id"]: r for r in qa["rules_triggered_json"]}
    assert rules["fuel_not_allocated"]["count"] == 2
    assert rules["zero_distance"]["count"] == 1
    assert qa["primary_data_share_percent"] == 0.0 and qa["primary_data_percent"] == 0.0


async def test_excluded_rows_are_estimated_and_reported(api: Api) -> None:
    rows = [
        {"mode": "road", "distance_km": 100, "mass_tonnes": 10},
        {"mode": "road", "distance_km": 300, "mass_tonnes": 20},
        {"mode": "road", "distance_km": 200},  # mass: mean of road rows, 15 t -> 3,000 tkm
    ]
    ws, data = await run_rows(api, rows)
    run, qa = data["calculation_run"], data["quality_assessment"]
    assert run["excluded_co2e_kg"] == qa["excluded_co2e_kg"] == 375.66  # 3,000 tkm x 125.22 g
    assert run["iso14083_json"]["excluded"]["co2e_ttw_kg"] == 304.89
    assert _kg(run["total_co2e_wtw_kg"]) == Decimal(7000) * Decimal("125.22") / 1000  # estimate not in totals
    assert qa["coverage_tonne_km_percent"] == 70.0  # 7,000 of 10,000 tkm
    files = await pack_files(api, ws["id"])
    excluded = list(csv.DictReader(io.StringIO(files["shipment_csv"].decode())))[2]
    assert excluded["included"] == "false" and excluded["estimated_co2e_wtw_kg"] == "375.660000"
    assert "375.66" in files["quality_report"].decode()


async def test_an_excluded_rows_estimate_reads_its_own_distance_type(api: Api) -> None:
    rows = [
        {"mode": "sea", "distance_km": 1000, "mass_tonnes": 10, "distance_type": "sfd"},
        # no mass (mean 10 t): its 1,000 km are an SFD, so DESNZ's per-sailed-km factor applies to
        # 1,000 x 1.15 x 10 = 11,500 t·km; read as actual it would be 10,000 (197.70 kg)
        {"mode": "sea", "distance_km": 1000, "distance_type": "sfd"},
    ]
    _, data = await run_rows(api, rows)
    run = data["calculation_run"]
    assert run["excluded_co2e_kg"] == 227.355  # 11,500 x 19.77 g
    excluded = run["iso14083_json"]["excluded"]
    assert (excluded["co2e_ttw_kg"], excluded["tonne_km"]) == (185.38, 10000.0)  # 11,500 x 16.12 g; SFD t·km


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"fuel_allocation_share": 1.5}, "fuel_allocation_share"),
        ({"fuel_allocation_share": 0}, "fuel_allocation_share"),
        ({"vehicle_payload_tonnes": 24, "fuel_allocation_share": 0.5}, "fuel_allocation_share"),
        ({"vehicle_payload_tonnes": -1}, "vehicle_payload_tonnes"),
    ],
)
async def test_allocation_fields_are_validated(api: Api, extra: dict[str, Any], field: str) -> None:
    ws = await create_workspace(api)
    row = {**FUEL, "mass_tonnes": 8, **extra}
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [row]})
    assert resp.status_code == 422 and f"shipments[0].{field}" in resp.json()["details"]["fields"]


async def test_allocation_needs_fuel(api: Api) -> None:
    ws = await create_workspace(api)
    row = {"mode": "road", "distance_km": 10, "mass_tonnes": 1, "vehicle_payload_tonnes": 24}
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [row]})
    assert resp.status_code == 422
    assert "only allowed with fuel_type" in resp.json()["details"]["fields"]["shipments[0].vehicle_payload_tonnes"]


GQL_IMPORT = "mutation($id: UUID!, $in: RegisterImportInput!) { registerImport(workspaceId: $id, input: $in) { id } }"
GQL_FUEL = {"mode": "ROAD", "distanceKm": 300, "fuelType": "DIESEL", "fuelAmount": 90, "massTonnes": 8}


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"fuelAllocationShare": 1.5}, "input.shipments[0].fuelAllocationShare"),
        ({"vehiclePayloadTonnes": 24, "fuelAllocationShare": 0.5}, "input.shipments[0].fuelAllocationShare"),
        ({"vehiclePayloadTonnes": -1}, "input.shipments[0].vehiclePayloadTonnes"),
    ],
)
async def test_graphql_checks_the_allocation_fields_as_rest_does(api: Api, extra: dict[str, Any], field: str) -> None:
    ws = await create_workspace(api)
    body = await api.gql(
        GQL_IMPORT, {"id": ws["id"], "in": {"sourceRowCount": 1, "shipments": [{**GQL_FUEL, **extra}]}}
    )
    assert gql_code(body) == "BAD_USER_INPUT"
    assert field in body["errors"][0]["extensions"]["fields"]
    assert (await api.get(f"/api/v2/workspaces/{ws['id']}")).json()["data"]["status"] == "draft"  # nothing stored


async def test_graphql_import_carries_allocation_distance_type_and_date(api: Api) -> None:
    """The same rows through GraphQL and REST give the same run."""
    gql_rows = [
        {
            **GQL_FUEL,
            "externalId": "P",
            "vehiclePayloadTonnes": 24,
            "distanceType": "ACTUAL",
            "shipmentDate": "2026-02-01",
        },
        {**GQL_FUEL, "externalId": "S", "fuelAllocationShare": 0.5, "shipmentDate": "2026-02-02"},
    ]
    rest_rows = [
        {**FUEL, "external_id": "P", "mass_tonnes": 8, "vehicle_payload_tonnes": 24, "distance_type": "actual",
         "shipment_date": "2026-02-01"},
        {**FUEL, "external_id": "S", "mass_tonnes": 8, "fuel_allocation_share": 0.5, "shipment_date": "2026-02-02"},
    ]  # fmt: skip
    _ws, rest = await run_rows(api, rest_rows)
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    body = await api.gql(GQL_IMPORT, {"id": ws["id"], "in": {"sourceRowCount": 2, "shipments": gql_rows}})
    assert "errors" not in body, body
    calc = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate")
    assert calc.status_code == 200, calc.text
    run = calc.json()["data"]["calculation_run"]
    assert run["total_co2e_ttw_kg"] == rest["calculation_run"]["total_co2e_ttw_kg"]
    assert run["total_co2e_wtw_kg"] == rest["calculation_run"]["total_co2e_wtw_kg"]
