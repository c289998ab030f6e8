"""Distance types, the ISO 14083 activity basis and the GLEC distance adjustment; dates outside the
reporting period are flagged."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

from tests.conftest import Api, create_workspace
from tests.method_helpers import pack_files, run_rows

Q6 = Decimal("0.000001")


ISO_ROWS = [
    {"external_id": "road-sfd", "mode": "road", "distance_km": 100, "mass_tonnes": 10, "distance_type": "sfd"},
    {"external_id": "road-act", "mode": "road", "distance_km": 210, "mass_tonnes": 1},  # actual: SFD 200
    {"external_id": "sea-sfd", "mode": "sea", "distance_km": 1000, "mass_tonnes": 1, "distance_type": "sfd"},
    {"external_id": "air-act", "mode": "air", "distance_km": 1080, "mass_tonnes": 1, "distance_type": "actual"},
    {"external_id": "air-gcd", "mode": "air", "distance_km": 500, "mass_tonnes": 1},  # default gcd
    {"external_id": "rail-gcd", "mode": "rail", "distance_km": 100, "mass_tonnes": 1, "distance_type": "gcd"},
    {"external_id": "rail-act", "mode": "rail", "distance_km": 200, "mass_tonnes": 1},
    {"external_id": "iww-sfd", "mode": "inland_waterway", "distance_km": 300, "mass_tonnes": 1, "distance_type": "sfd"},
    # carrier intensities: per SFD tonne-km (the default) and per actual tonne-km
    {"external_id": "road-ci-sfd", "mode": "road", "distance_km": 105, "mass_tonnes": 1,
     "carrier_intensity_g_per_tkm": 100, "carrier_intensity_basis": "wtw"},
    {"external_id": "road-ci-act", "mode": "road", "distance_km": 105, "mass_tonnes": 1,
     "carrier_intensity_g_per_tkm": 100, "carrier_intensity_basis": "wtw",
     "carrier_intensity_distance_basis": "actual"},
]  # fmt: skip


async def test_activity_is_on_the_iso_basis_and_emissions_on_the_intensity_basis(api: Api) -> None:
    """ISO 14083: t·km on SFD (air GCD) only; DESNZ intensities on actual km (air GCD); DAF road 1.05,
    sea 1.15, rail and inland waterway 1.00; air GCD = actual - 95 km."""
    ws, data = await run_rows(api, ISO_ROWS)
    run = data["calculation_run"]
    modes = run["totals_by_mode_json"]
    # road: 100 x 10 + 200 + 100 + 100 (the carrier rows' SFD = 105 / 1.05)
    assert modes["road"]["tonne_km"] == 1400.0 and modes["sea"]["tonne_km"] == 1000.0
    assert modes["air"]["tonne_km"] == 985.0 + 500.0 and modes["rail"]["tonne_km"] == 300.0
    assert modes["inland_waterway"]["tonne_km"] == 300.0
    assert run["total_tonne_km"] == 1400 + 1000 + 1485 + 300 + 300
    # emissions: the road SFD row on 1,050 actual tkm; the carrier rows 100 g x 100 and x 105 tkm
    road_wtw = (Decimal(1050) + 210) * Decimal("125.22") / 1000 + Decimal(10) + Decimal("10.5")
    assert Decimal(repr(modes["road"]["co2e_wtw_kg"])) == road_wtw
    assert Decimal(repr(modes["sea"]["co2e_wtw_kg"])) == Decimal(1150) * Decimal("19.77") / 1000
    assert Decimal(repr(modes["air"]["co2e_wtw_kg"])) == Decimal(1485) * Decimal("666.46") / 1000
    assert Decimal(repr(modes["rail"]["co2e_wtw_kg"])) == Decimal(300) * Decimal("34.70") / 1000
    # intensities on the ISO basis: emissions / SFD tonne-km
    assert Decimal(repr(modes["road"]["intensity_wtw_g_per_tkm"])) == (road_wtw * 1000 / 1400).quantize(Q6)
    iso = run["iso14083_json"]
    assert iso["activity_distance_basis"]["air"] == "gcd" and iso["activity_distance_basis"]["sea"] == "sfd"
    dafs = {"inland_waterway": "1.00", "rail": "1.00", "road": "1.05", "sea": "1.15"}
    assert iso["distance_adjustment_factors"] == dafs
    assert {k: v["rows"] for k, v in iso["distance_types"].items()} == {"actual": 5, "gcd": 2, "sfd": 3}
    rules = {r["id"]: r["count"] for r in data["quality_assessment"]["rules_triggered_json"]}
    # road-sfd, road-act, sea-sfd, air-act and both road carrier rows (actual given, SFD activity)
    assert rules["distance_adjusted"] == 6 and rules["gcd_surface_mode"] == 1

    files = await pack_files(api, ws["id"])
    rows = {r["external_id"]: r for r in csv.DictReader(io.StringIO(files["shipment_csv"].decode()))}
    sfd = rows["road-sfd"]
    assert (sfd["activity_distance_km"], sfd["tonne_km"]) == ("100.000000", "1000.000000")
    assert (sfd["emission_distance_km"], sfd["emission_tonne_km"]) == ("105.000000", "1050.000000")
    assert sfd["actual_distance_km"] == "" and sfd["distance_adjustment_factor"] == "1.05"
    act = rows["air-act"]
    assert (act["actual_distance_km"], act["activity_distance_km"], act["emission_distance_km"]) == (
        "1080.000000", "985.000000", "985.000000",
    )  # fmt: skip
    assert rows["road-ci-sfd"]["emission_tonne_km"] == "100.000000"
    assert rows["road-ci-act"]["emission_tonne_km"] == "105.000000"
    assert rows["road-ci-sfd"]["carrier_intensity_distance_basis"] == "sfd"

    body = await api.gql(
        "query($id: UUID!) { workspace(id: $id) { latestCalculationRun { totalTonneKm totalsByModeJson } } }",
        {"id": ws["id"]},
    )
    latest = body["data"]["workspace"]["latestCalculationRun"]
    assert latest["totalTonneKm"] == run["total_tonne_km"] and latest["totalsByModeJson"] == modes


async def test_carrier_distance_basis_over_graphql_and_its_validation(api: Api) -> None:
    ws = await create_workspace(api)
    mutation = "mutation($id: UUID!, $in: RegisterImportInput!) { registerImport(workspaceId: $id, input: $in) { id } }"
    row = {"mode": "ROAD", "distanceKm": 105, "massTonnes": 1, "carrierIntensityGPerTkm": 100,
           "carrierIntensityBasis": "WTW", "carrierIntensityDistanceBasis": "ACTUAL"}  # fmt: skip
    body = await api.gql(mutation, {"id": ws["id"], "in": {"sourceRowCount": 1, "shipments": [row]}})
    assert "errors" not in body, body
    calc = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).json()["data"]
    assert calc["calculation_run"]["total_co2e_kg"] == 10.5  # 100 g x 105 actual tkm
    assert calc["calculation_run"]["total_tonne_km"] == 100.0
    bad = {"mode": "road", "distance_km": 1, "mass_tonnes": 1, "carrier_intensity_distance_basis": "actual"}
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [bad]})
    assert resp.status_code == 422
    assert "only allowed with" in resp.json()["details"]["fields"]["shipments[0].carrier_intensity_distance_basis"]


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


async def test_an_air_actual_distance_of_95_km_or_less_is_flagged_and_kept(api: Api) -> None:
    rows = [{"mode": "air", "distance_km": 80, "mass_tonnes": 1, "distance_type": "actual"}]
    _, data = await run_rows(api, rows)
    run, qa = data["calculation_run"], data["quality_assessment"]
    assert run["total_tonne_km"] == 80.0 and qa["flagged_shipments_count"] == 1
    assert {r["id"] for r in qa["rules_triggered_json"]} >= {"air_actual_too_short"}
