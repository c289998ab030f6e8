"""The ninth artifact: iLEAP ShipmentFootprints with TCEs and the TOCs they reference.

The JSON Schemas below restate the required fields and types of the iLEAP Technical
Specifications Version 1.0.0 (sine-fdn/ileap-extension, ``specs/index.bs`` data model) and of
its published JSON Schemas (sine-fdn/impact-protocols, ``ileap-data-model/schemas/toc.json`` and
``shipment-footprint.json``): Decimal is a string ``^-?\\d+(\\.\\d+)?$``, a GLEC distance has
one of actual / gcd / sfd, mass in kg, co2eWTW and co2eTTW in kg per TCE; a TOC names its
``transportActivityUnit`` and each energy carrier its ``relativeShare``.
"""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import jsonschema

from tests.conftest import Api, create_workspace
from tests.method_helpers import pack_files, run_rows

DECIMAL = {"type": "string", "pattern": r"^-?\d+(\.\d+)?$"}
GLEC_DISTANCE = {
    "oneOf": [
        {"type": "object", "required": [k], "properties": {k: DECIMAL}, "additionalProperties": False}
        for k in ("actual", "gcd", "sfd")
    ]
}
TCE = {
    "type": "object",
    "required": ["tceId", "shipmentId", "mass", "distance", "transportActivity", "co2eWTW", "co2eTTW"],
    "properties": {
        "tceId": {"type": "string"},
        "tocId": {"type": ["string", "null"]},
        "hocId": {"type": ["string", "null"]},
        "shipmentId": {"type": "string"},
        "mass": DECIMAL,
        "distance": GLEC_DISTANCE,
        "transportActivity": DECIMAL,
        "co2eWTW": DECIMAL,
        "co2eTTW": DECIMAL,
        "prevTceIds": {"type": ["array", "null"], "items": {"type": "string"}},
        "departureAt": {"type": ["string", "null"], "format": "date-time"},
    },
    # The specification: either tocId or hocId MUST be defined.
    "anyOf": [{"required": ["tocId"]}, {"required": ["hocId"]}],
}
SHIPMENT_FOOTPRINT = {
    "type": "object",
    "required": ["mass", "shipmentId", "tces"],
    "properties": {
        "mass": {"type": "string"},
        "shipmentId": {"type": "string"},
        "tces": {"type": "array", "items": TCE, "minItems": 1},
    },
}
ENERGY_CARRIER = {
    "type": "object",
    "required": ["energyCarrier", "relativeShare", "emissionFactorWTW", "emissionFactorTTW"],
    "properties": {
        "energyCarrier": {
            "enum": [
                "Diesel",
                "HVO",
                "Petrol",
                "CNG",
                "LNG",
                "LPG",
                "HFO",
                "MGO",
                "Aviation fuel",
                "Hydrogen",
                "Methanol",
                "Electric",
            ]
        },
        "relativeShare": DECIMAL,
        "energyConsumption": DECIMAL,
        "energyConsumptionUnit": {"enum": ["l", "kg", "kWh", "MJ"]},
        "emissionFactorWTW": DECIMAL,
        "emissionFactorTTW": DECIMAL,
    },
    # Version 1.0.0: the unit MUST be defined when the consumption is, and only then.
    "dependentRequired": {
        "energyConsumption": ["energyConsumptionUnit"],
        "energyConsumptionUnit": ["energyConsumption"],
    },
    "additionalProperties": False,
}
TOC = {
    "type": "object",
    "required": ["tocId", "mode", "energyCarriers", "co2eIntensityWTW", "co2eIntensityTTW", "transportActivityUnit"],
    "properties": {
        "tocId": {"type": "string"},
        "certifications": {"type": "array", "items": {"type": "string"}},
        "description": {"type": "string"},
        "mode": {"enum": ["Road", "Rail", "Air", "Sea", "InlandWaterway"]},
        "energyCarriers": {"type": "array", "minItems": 1, "items": ENERGY_CARRIER},
        "co2eIntensityWTW": DECIMAL,
        "co2eIntensityTTW": DECIMAL,
        "transportActivityUnit": {"enum": ["TEUkm", "tkm"]},
    },
    # Only the properties Version 1.0.0 defines for a TOC (that we fill).
    "additionalProperties": False,
}  # fmt: skip
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "q1-2026-import.json"


def validate(doc: dict[str, Any]) -> None:
    for footprint in doc["shipmentFootprints"]:
        jsonschema.validate(footprint, SHIPMENT_FOOTPRINT)
    for toc in doc["tocs"]:
        jsonschema.validate(toc, TOC)
    toc_ids = {t["tocId"] for t in doc["tocs"]}
    assert {tce["tocId"] for f in doc["shipmentFootprints"] for tce in f["tces"]} == toc_ids


async def test_worked_example_exports_valid_footprints_matching_the_csv(api: Api) -> None:
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    body = json.loads(EXAMPLE.read_text())  # noqa: ASYNC240 - a small fixture file
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    run = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).json()["data"]["calculation_run"]
    files = await pack_files(api, ws["id"])
    doc = json.loads(files["ileap_shipment_footprints"])
    validate(doc)
    tces = [tce for f in doc["shipmentFootprints"] for tce in f["tces"]]
    assert len(tces) == run["shipment_count"] == 293 and doc["excluded_shipment_rows"] == 3
    wtw = sum(Decimal(t["co2eWTW"]) for t in tces)
    ttw = sum(Decimal(t["co2eTTW"]) for t in tces)
    assert wtw == Decimal(repr(run["total_co2e_wtw_kg"])) and ttw == Decimal(repr(run["total_co2e_ttw_kg"]))
    lines = {r["shipment_id"]: r for r in csv.DictReader(io.StringIO(files["shipment_csv"].decode()))}
    for tce in tces:
        line = lines[tce["tceId"]]
        assert Decimal(tce["co2eWTW"]) == Decimal(line["co2e_wtw_kg"])
        assert abs(Decimal(tce["transportActivity"]) - Decimal(line["tonne_km"])) <= Decimal("0.0000005")
        assert Decimal(tce["mass"]) == Decimal(line["mass_tonnes"]) * 1000
        # the MUST rule transportActivity = distance x mass, on the ISO basis (SFD, air GCD)
        km = line["activity_distance_km"]
        assert tce["distance"] == {"gcd" if line["mode"] == "air" else "sfd": km.rstrip("0").rstrip(".")}
        assert Decimal(tce["transportActivity"]) == Decimal(km) * Decimal(line["mass_tonnes"])


async def test_legs_sharing_an_external_id_form_one_shipment(api: Api) -> None:
    rows = [
        {"external_id": "SHP-1", "mode": "road", "distance_km": 120, "mass_tonnes": 2, "shipment_date": "2026-02-01"},
        {"external_id": "SHP-1", "mode": "sea", "distance_km": 9000, "mass_tonnes": 2, "distance_type": "sfd"},
        {"external_id": "SHP-2", "mode": "air", "distance_km": 800, "mass_tonnes": 0.25},
    ]  # fmt: skip
    ws, _ = await run_rows(api, rows)
    doc = json.loads((await pack_files(api, ws["id"]))["ileap_shipment_footprints"])
    validate(doc)
    first, second = doc["shipmentFootprints"]
    assert (first["shipmentId"], first["mass"], len(first["tces"])) == ("SHP-1", "2000", 2)
    assert first["tces"][1]["prevTceIds"] == [first["tces"][0]["tceId"]]
    assert first["tces"][0]["departureAt"] == "2026-02-01T00:00:00Z"
    # ISO 14083 activity basis: SFD x mass (the road leg's actual 120 km is an SFD of 114.285714 km)
    assert first["tces"][1]["distance"] == {"sfd": "9000"} and first["tces"][1]["transportActivity"] == "18000"
    road = first["tces"][0]
    assert road["distance"] == {"sfd": "114.285714"} and road["transportActivity"] == "228.571428"
    assert second["tces"][0]["distance"] == {"gcd": "800"} and second["mass"] == "250"
    for tce in (*first["tces"], *second["tces"]):
        (km,) = tce["distance"].values()
        assert Decimal(tce["transportActivity"]) == Decimal(km) * Decimal(tce["mass"]) / 1000


async def test_pack_links_the_export_on_both_transports(api: Api) -> None:
    ws, _ = await run_rows(api, [{"mode": "road", "distance_km": 10, "mass_tonnes": 1}])
    pack = (await api.post(f"/api/v2/workspaces/{ws['id']}/packs", {})).json()["data"]
    assert pack["ileap_shipment_footprints_url"]
    body = await api.gql(
        "query($id: UUID!) { pack(id: $id) { ileapShipmentFootprintsUrl artifacts { artifactType } } }",
        {"id": pack["id"]},
    )
    got = body["data"]["pack"]
    assert got["ileapShipmentFootprintsUrl"] == pack["ileap_shipment_footprints_url"]
    assert [a["artifactType"] for a in got["artifacts"]][-1] == "ILEAP_SHIPMENT_FOOTPRINTS"
    assert len(got["artifacts"]) == 9


async def test_measured_fuel_is_stated_per_tkm_and_defaults_state_none(api: Api) -> None:
    rows = [
        {"mode": "road", "distance_km": 300, "mass_tonnes": 8, "fuel_type": "diesel", "fuel_amount": 90,
         "vehicle_payload_tonnes": 24},  # 30 l allocated over 8 t x 285.714286 SFD km
        {"mode": "road", "distance_km": 100, "mass_tonnes": 5},
    ]  # fmt: skip
    ws, _ = await run_rows(api, rows)
    doc = json.loads((await pack_files(api, ws["id"]))["ileap_shipment_footprints"])
    validate(doc)
    tocs = {t["tocId"]: t for t in doc["tocs"]}
    primary = tocs["eg-road-primary-diesel"]["energyCarriers"][0]
    assert (primary["energyConsumptionUnit"], primary["relativeShare"]) == ("l", "1")
    tkm = Decimal("285.714286") * 8
    assert Decimal(primary["energyConsumption"]) == (Decimal(90) * Decimal("0.333333") / tkm).quantize(Decimal("1e-9"))
    intensity = Decimal(tocs["eg-road-primary-diesel"]["co2eIntensityWTW"])
    implied = Decimal(primary["energyConsumption"]) * Decimal(primary["emissionFactorWTW"])
    assert abs(implied - intensity) < Decimal("1e-6")
    default = next(t for t in doc["tocs"] if "-default-" in t["tocId"])
    assert "energyConsumption" not in default["energyCarriers"][0] and default["transportActivityUnit"] == "tkm"
