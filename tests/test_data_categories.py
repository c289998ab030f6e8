"""ISO 14083 data categories: a carrier intensity declared measured is primary data, reported (the
default) is secondary; shares by emissions and every artifact use the same categories."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from typing import Any

import orjson

from tests.conftest import Api, create_workspace, gql_code
from tests.method_helpers import pack_files, run_rows

RAIL = {"mode": "rail", "distance_km": 500, "mass_tonnes": 20, "carrier_intensity_g_per_tkm": 20,
        "carrier_intensity_basis": "wtw"}  # fmt: skip
ROWS: list[dict[str, Any]] = [
    {**RAIL, "external_id": "measured", "carrier_intensity_category": "measured"},  # 10,000 tkm x 20 g = 200 kg
    {**RAIL, "external_id": "reported"},  # the default category: 200 kg
    {"external_id": "default", "mode": "rail", "distance_km": 1000, "mass_tonnes": 10},  # 10,000 x 34.70 g = 347 kg
]


async def test_measured_carrier_intensity_is_primary_and_shares_follow(api: Api) -> None:
    ws, data = await run_rows(api, ROWS)
    run, qa = data["calculation_run"], data["quality_assessment"]
    categories = run["iso14083_json"]["data_categories"]
    assert (categories["primary"]["rows"], categories["secondary_modelled"]["rows"]) == (1, 1)
    assert categories["primary"]["co2e_wtw_kg"] == 200.0 and categories["secondary_default"]["co2e_wtw_kg"] == 347.0
    share = (Decimal(200) * 100 / Decimal(747)).quantize(Decimal("0.01"))
    assert Decimal(repr(qa["primary_data_share_percent"])) == share  # 26.77 % of WTW emissions
    assert qa["primary_data_rows_percent"] == 33.33
    assert [qa[f"{t}_data_percent"] for t in ("primary", "secondary", "default")] == [33.34, 33.33, 33.33]
    files = await pack_files(api, ws["id"])
    rows = {r["external_id"]: r for r in csv.DictReader(io.StringIO(files["shipment_csv"].decode()))}
    assert (rows["measured"]["data_category"], rows["measured"]["data_tier"]) == ("primary", "primary")
    assert rows["reported"]["data_category"] == "secondary_modelled"
    assert rows["reported"]["carrier_intensity_category"] == "reported"
    # The iLEAP file: the measured row's TOC is a primary one, the reported row's a carrier one.
    ileap = orjson.loads(files["ileap_shipment_footprints"])
    toc_of = {sf["shipmentId"]: sf["tces"][0]["tocId"] for sf in ileap["shipmentFootprints"]}
    tocs = {t["tocId"]: t for t in ileap["tocs"]}
    measured, reported = tocs[toc_of["measured"]], tocs[toc_of["reported"]]
    assert toc_of["measured"].startswith("eg-rail-primary-") and "primary data, measured" in measured["description"]
    assert toc_of["reported"].startswith("eg-rail-carrier-") and "secondaryEmissionFactorSources" in reported
    assert "secondaryEmissionFactorSources" not in measured

    body = await api.gql(
        "query($id: UUID!) { workspace(id: $id) { latestCalculationRun { iso14083Json "
        "qualityAssessment { primaryDataSharePercent } } } }",
        {"id": ws["id"]},
    )
    latest = body["data"]["workspace"]["latestCalculationRun"]
    assert latest["iso14083Json"]["data_categories"] == categories
    assert latest["qualityAssessment"]["primaryDataSharePercent"] == qa["primary_data_share_percent"]


async def test_category_over_graphql_and_only_with_an_intensity(api: Api) -> None:
    ws = await create_workspace(api)
    mutation = "mutation($id: UUID!, $in: RegisterImportInput!) { registerImport(workspaceId: $id, input: $in) { id } }"
    row = {"mode": "RAIL", "distanceKm": 500, "massTonnes": 20, "carrierIntensityGPerTkm": 20,
           "carrierIntensityBasis": "WTW", "carrierIntensityCategory": "MEASURED"}  # fmt: skip
    body = await api.gql(mutation, {"id": ws["id"], "in": {"sourceRowCount": 1, "shipments": [row]}})
    assert "errors" not in body, body
    qa = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).json()["data"]["quality_assessment"]
    assert qa["primary_data_share_percent"] == 100.0

    bad = {"mode": "rail", "distance_km": 1, "mass_tonnes": 1, "carrier_intensity_category": "measured"}
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [bad]})
    assert resp.status_code == 422
    assert "only allowed with" in resp.json()["details"]["fields"]["shipments[0].carrier_intensity_category"]
    odd = {
        **bad,
        "carrier_intensity_g_per_tkm": 20,
        "carrier_intensity_basis": "wtw",
        "carrier_intensity_category": "x",
    }
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [odd]})
    assert resp.status_code == 422 and "shipments[0].carrier_intensity_category" in resp.json()["details"]["fields"]
    gql_bad = {"mode": "RAIL", "distanceKm": 1, "massTonnes": 1, "carrierIntensityCategory": "MEASURED"}
    body = await api.gql(mutation, {"id": ws["id"], "in": {"sourceRowCount": 1, "shipments": [gql_bad]}})
    assert gql_code(body) == "BAD_USER_INPUT"
