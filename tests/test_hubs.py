"""Hub rows (ISO 14083 hub operations): imported over both transports, calculated into the run's
``hubs_json``, shown in the short report and exported as iLEAP hub TCEs and HOCs."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from typing import Any

from pypdf import PdfReader

from tests.conftest import Api, create_workspace
from tests.method_helpers import pack_files, run_rows
from tests.test_ileap_export import validate

ROWS = [
    {"external_id": "S-1", "mode": "road", "distance_km": 100, "mass_tonnes": 10},
    {"external_id": "S-1", "mode": "sea", "distance_km": 8000, "mass_tonnes": 10, "distance_type": "sfd"},
]
HUBS = [
    # GLEC default: 10 t x 0.6 kg/t = 6 kg WTW (TTW reported at the WTW value).
    {"name": "Cross-dock A", "hub_type": "transshipment", "throughput_tonnes": 10},
    # Measured: 1,000 kWh for a hub handling 100 t, 10 t of it ours: 100 kWh x 0.2454 = 24.54 kg WTW, TTW 0.
    {"external_id": "S-1", "name": "Port B", "hub_type": "maritime_container_terminal", "throughput_tonnes": 10,
     "electricity_kwh": 1000, "hub_total_throughput_tonnes": 100, "electricity_country": "GB"},
    # No default for airports and no energy: not calculated, reported.
    {"name": "Airport C", "hub_type": "airport_terminal", "throughput_tonnes": 2},
]  # fmt: skip


async def import_and_calculate(api: Api, hubs: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    ws = await create_workspace(api)
    body = {"source_row_count": len(ROWS), "shipments": ROWS, "hubs": hubs}
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)
    assert resp.status_code == 201, resp.text
    calc = await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})
    assert calc.status_code == 200, calc.text
    return ws, calc.json()["data"]["calculation_run"]


async def test_hub_rows_are_calculated_into_the_run(api: Api) -> None:
    _, run = await import_and_calculate(api, HUBS)
    hubs = run["hubs_json"]
    assert (hubs["rows"], hubs["included_rows"], hubs["throughput_tonnes"]) == (3, 2, 20.0)
    default, measured, airport = hubs["items"]
    assert (default["basis"], default["co2e_wtw_kg"], default["co2e_ttw_kg"]) == ("default", 6.0, 6.0)
    assert default["flags"] == ["ttw_not_published"] and "GLEC Framework v3" in hubs["default_source"]
    assert (measured["basis"], measured["allocation_share"], measured["energy"]) == (
        "measured", 0.1, [{"fuel": "electricity", "amount": 100.0}]
    )  # fmt: skip
    assert (measured["co2e_wtw_kg"], measured["co2e_ttw_kg"]) == (24.54, 0.0)
    assert (airport["included"], airport["flags"]) == (False, ["no_default_intensity"])
    assert (hubs["co2e_wtw_kg"], hubs["co2e_ttw_kg"]) == (30.54, 6.0)
    # Transport totals are unchanged by hubs (an additive field).
    _, plain = await run_rows(api, ROWS)
    plain_run = plain["calculation_run"]
    assert plain_run["total_co2e_wtw_kg"] == run["total_co2e_wtw_kg"] and plain_run["hubs_json"] is None
    assert plain_run["rerun_hash"] != run["rerun_hash"]


async def test_bad_hub_rows_are_refused_naming_the_field(api: Api) -> None:
    ws = await create_workspace(api)
    for hub, field in (
        ({"hub_type": "port", "throughput_tonnes": 1}, "hub_type"),
        ({"hub_type": "warehouse"}, "throughput_tonnes"),
        ({"hub_type": "warehouse", "throughput_tonnes": 1, "fuel_type": "diesel"}, "fuel_amount"),
        ({"hub_type": "warehouse", "throughput_tonnes": 5, "electricity_kwh": 9, "hub_total_throughput_tonnes": 4,
          "electricity_country": "GB"}, "hub_total_throughput_tonnes"),
        # Electricity is never taken as the UK grid by default: the grid's country is required.
        ({"hub_type": "warehouse", "throughput_tonnes": 5, "electricity_kwh": 9}, "electricity_country"),
        ({"hub_type": "warehouse", "throughput_tonnes": 5, "electricity_kwh": 9, "electricity_country": "XX"},
         "electricity_country"),
        ({"hub_type": "warehouse", "throughput_tonnes": 5, "electricity_country": "DE"}, "electricity_country"),
    ):  # fmt: skip
        resp = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 0, "hubs": [hub]})
        assert resp.status_code == 422, resp.text
        assert field in resp.text


async def test_short_report_and_ileap_carry_the_hubs(api: Api) -> None:
    ws, run = await import_and_calculate(api, HUBS)
    files = await pack_files(api, ws["id"])
    md = files["methodology_statement"].decode()
    pdf = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(files["summary_pdf"])).pages)
    for text in (md, pdf):
        assert "Hub activity: 20.000 t handled in 2 hub operation(s), 30.540 kg CO2e WTW, 6.000 kg TTW" in text
        assert "Declared omission" not in text and "hub operations: included" in text
        assert "1 hub row(s) without measured energy and without a published default: excluded" in text
        # The chain intensity counts the hubs: (transport WTW + 30.54 kg) per t·km.
        wtw = Decimal(repr(run["total_co2e_wtw_kg"])) + Decimal("30.54")
        assert f"{float(wtw * 1000 / Decimal(repr(run['total_tonne_km']))):,.2f}" in text
    doc = json.loads(files["ileap_shipment_footprints"])
    validate(doc)
    assert doc["excluded_hub_rows"] == 1
    assert doc["hub_operations"] == "Hub operations: 2 hub operation(s) included, 20.000 t handled, 30.540 kg CO2e WTW."
    assert doc["hub_operations"] in files["quality_report"].decode()
    hocs = {h["hocId"]: h for h in doc["hocs"]}
    assert {h["hubType"] for h in hocs.values()} == {"Transshipment", "MaritimeContainerTerminal"}
    chain = next(f for f in doc["shipmentFootprints"] if f["shipmentId"] == "S-1")["tces"]
    port = chain[-1]
    assert port["prevTceIds"] == [chain[-2]["tceId"]] and port["distance"] == {"sfd": "0"}
    assert (port["co2eWTW"], port["co2eTTW"], port["mass"], port["transportActivity"]) == ("24.54", "0", "10000", "0")
    hoc = hocs[port["hocId"]]
    assert (hoc["co2eIntensityWTW"], hoc["hubActivityUnit"]) == ("2.454", "tonnes")
    carrier = hoc["energyCarriers"][0]
    assert (carrier["energyCarrier"], carrier["energyConsumption"], carrier["energyConsumptionUnit"]) == (
        "Electric", "10", "kWh"
    )  # fmt: skip
    alone = [f for f in doc["shipmentFootprints"] if f["shipmentId"].startswith("hub-")]
    assert len(alone) == 1 and hocs[alone[0]["tces"][0]["hocId"]]["co2eIntensityWTW"] == "0.6"


async def test_hub_tces_sit_between_the_legs_whose_places_name_them(api: Api) -> None:
    rows = [
        {"external_id": "C-1", "mode": "road", "distance_km": 105, "mass_tonnes": 10, "origin": "Lyon DC",
         "destination": "Antwerp Port"},
        {"external_id": "C-1", "mode": "sea", "distance_km": 8000, "mass_tonnes": 10, "distance_type": "sfd",
         "origin": "Antwerp Port", "destination": "Shanghai"},
        {"external_id": "C-1", "mode": "road", "distance_km": 42, "mass_tonnes": 10, "origin": "Shanghai",
         "destination": "Client"},
    ]  # fmt: skip
    hubs = [
        # the quay between the road leg and the sea leg (the name compared without case and extra spaces)
        {"external_id": "C-1", "name": " antwerp  port", "hub_type": "maritime_container_terminal",
         "throughput_tonnes": 10, "electricity_kwh": 50, "electricity_country": "BE"},
        # the warehouse the first leg leaves from: first in the chain
        {"external_id": "C-1", "name": "Lyon DC", "hub_type": "warehouse", "throughput_tonnes": 10},
        # a cross-dock no leg names: after the last leg
        {"external_id": "C-1", "name": "Somewhere", "hub_type": "transshipment", "throughput_tonnes": 10},
        # Shanghai named as destination and origin: placed once, after the sea leg
        {"external_id": "C-1", "name": "Shanghai", "hub_type": "transshipment", "throughput_tonnes": 10},
    ]  # fmt: skip
    ws = await create_workspace(api)
    body = {"source_row_count": len(rows), "shipments": rows, "hubs": hubs}
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    run = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).json()["data"]["calculation_run"]
    doc = json.loads((await pack_files(api, ws["id"]))["ileap_shipment_footprints"])
    validate(doc)  # the vendored iLEAP schemas, distance x mass and prevTceIds = the TCE before
    (chain,) = [f["tces"] for f in doc["shipmentFootprints"]]
    kinds = [("hub", t["co2eWTW"]) if "hocId" in t else ("leg", t["distance"]) for t in chain]
    assert kinds == [
        ("hub", "175"),  # 10 t x 17.5 kg/t
        ("leg", {"sfd": "100"}),  # 105 km actual / 1.05
        ("hub", "6.9055"),  # 50 kWh x 0.13811 (Ember BEL 2023)
        ("leg", {"sfd": "8000"}),
        ("hub", "6"),  # Shanghai, 10 t x 0.6 kg/t
        ("leg", {"sfd": "40"}),
        ("hub", "6"),  # Somewhere
    ]
    assert "prevTceIds" not in chain[0] and chain[1]["prevTceIds"] == [chain[0]["tceId"]]
    assert chain[3]["prevTceIds"] == [chain[2]["tceId"]] and chain[2]["prevTceIds"] == [chain[1]["tceId"]]
    # Placement moves no figure: the chain's hub emissions are the run's.
    hub_wtw = sum(Decimal(t["co2eWTW"]) for t in chain if "hocId" in t)
    assert hub_wtw == Decimal(repr(run["hubs_json"]["co2e_wtw_kg"])) == Decimal("193.9055")


async def test_graphql_imports_hubs_and_reads_them_on_the_run(api: Api) -> None:
    ws = await create_workspace(api)
    body = await api.gql(
        "mutation($id: UUID!, $input: RegisterImportInput!) { registerImport(workspaceId: $id, input: $input) { id } }",
        {"id": ws["id"], "input": {
            "sourceRowCount": 1, "shipments": [{"mode": "ROAD", "distanceKm": 50, "massTonnes": 4}],
            "hubs": [{"hubType": "WAREHOUSE", "temperatureControl": "MIXED", "throughputTonnes": 4}],
        }},
    )  # fmt: skip
    assert "errors" not in body, body
    calc = await api.gql(
        "mutation($id: UUID!) { calculateWorkspace(workspaceId: $id) { calculationRun { id hubsJson"
        " hubs { coE: co2eWtwKg items { hubType temperatureControl basis co2eWtwKg } } } } }",
        {"id": ws["id"]},
    )
    assert "errors" not in calc, calc
    hubs = calc["data"]["calculateWorkspace"]["calculationRun"]["hubsJson"]
    assert hubs["co2e_wtw_kg"] == 132.0  # 4 t x 33.0 kg/t (warehouse, mixed)
    typed = calc["data"]["calculateWorkspace"]["calculationRun"]["hubs"]
    assert typed == {
        "coE": 132.0,
        "items": [{"hubType": "WAREHOUSE", "temperatureControl": "MIXED", "basis": "default", "co2eWtwKg": 132.0}],
    }


async def test_hub_electricity_takes_the_grid_of_its_country(api: Api) -> None:
    hub = {"hub_type": "warehouse", "throughput_tonnes": 5, "electricity_kwh": 100, "electricity_country": "DE"}
    _, run = await import_and_calculate(api, [hub])
    (item,) = run["hubs_json"]["items"]
    # Ember DE 2023: 380.95 g/kWh -> 0.38095 kg/kWh, all upstream (WTT): 100 kWh x 0.38095 = 38.095 kg.
    assert (item["co2e_wtw_kg"], item["co2e_ttw_kg"], item["co2e_wtt_kg"]) == (38.095, 0.0, 38.095)
