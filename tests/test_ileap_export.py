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
from functools import cache
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
        "packagingOrTrEqType": {"enum": ["Box", "Pallet", "Container-TEU", "Container-FEU", "Container"]},
        "packagingOrTrEqAmount": DECIMAL,
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
        "comment": {"type": "string"},
        "secondaryEmissionFactorSources": {
            "type": "array",
            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"},
                      "version": {"type": ["string", "null"]}}, "additionalProperties": False},
        },
    },
    # Only the properties the specification defines for a TOC (that we fill).
    "additionalProperties": False,
}  # fmt: skip
HOC = {
    "type": "object",
    "required": ["hocId", "hubType", "energyCarriers", "co2eIntensityWTW", "co2eIntensityTTW", "hubActivityUnit"],
    "properties": {
        "hocId": {"type": "string"},
        "description": {"type": "string"},
        "comment": {"type": "string"},
        "hubType": {
            "enum": ["Transshipment", "StorageAndTransshipment", "Warehouse", "LiquidBulkTerminal",
                     "MaritimeContainerTerminal"]
        },
        "temperatureControl": {"enum": ["ambient", "refrigerated", "mixed"]},
        "energyCarriers": {"type": "array", "minItems": 1, "items": ENERGY_CARRIER},
        "co2eIntensityWTW": DECIMAL,
        "co2eIntensityTTW": DECIMAL,
        "hubActivityUnit": {"enum": ["TEU", "tonnes"]},
    },
    "additionalProperties": False,
}  # fmt: skip
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "q1-2026-import.json"
VENDORED = Path(__file__).resolve().parent / "schemas" / "ileap"  # sine-fdn/impact-protocols (README there)


@cache
def vendored(name: str) -> jsonschema.Draft7Validator:
    """The published iLEAP JSON Schema ``name``.json (ileap-data-model/schemas), byte for byte."""
    schema = json.loads((VENDORED / f"{name}.json").read_text(encoding="utf-8"))
    return jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())


def validate(doc: dict[str, Any]) -> None:
    for footprint in doc["shipmentFootprints"]:
        jsonschema.validate(footprint, SHIPMENT_FOOTPRINT)
        vendored("shipment-footprint").validate(footprint)
    for toc in doc["tocs"]:
        jsonschema.validate(toc, TOC)
        vendored("toc").validate(toc)
    for hoc in doc.get("hocs", []):
        jsonschema.validate(hoc, HOC)
        vendored("hoc").validate(hoc)
    tces = [tce for f in doc["shipmentFootprints"] for tce in f["tces"]]
    for tce in tces:
        # The MUST rule: transportActivity = distance x mass (t·km), exactly, on the ISO activity basis.
        ((kind, km),) = tce["distance"].items()
        assert kind in ("sfd", "gcd"), tce
        assert Decimal(tce["transportActivity"]) == Decimal(km) * Decimal(tce["mass"]) / 1000, tce
    ids = [tce["tceId"] for tce in tces]
    assert len(ids) == len(set(ids))
    for f in doc["shipmentFootprints"]:  # prevTceIds name the TCE just before, within the shipment
        own = [t["tceId"] for t in f["tces"]]
        assert all(t.get("prevTceIds") == [own[n - 1]] if n else "prevTceIds" not in t for n, t in enumerate(f["tces"]))
    assert {tce["tocId"] for tce in tces if "tocId" in tce} == {t["tocId"] for t in doc["tocs"]}
    assert {tce["hocId"] for tce in tces if "hocId" in tce} == {h["hocId"] for h in doc.get("hocs", [])}
    assert all(("tocId" in tce) != ("hocId" in tce) for tce in tces)  # exactly one of them


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
    tocs = {t["tocId"].rsplit("-", 1)[0]: t for t in doc["tocs"]}
    primary = tocs["eg-road-primary-diesel"]["energyCarriers"][0]
    assert (primary["energyConsumptionUnit"], primary["relativeShare"]) == ("l", "1")
    tkm = Decimal("285.714286") * 8
    assert Decimal(primary["energyConsumption"]) == (Decimal(90) * Decimal("0.333333") / tkm).quantize(Decimal("1e-9"))
    intensity = Decimal(tocs["eg-road-primary-diesel"]["co2eIntensityWTW"])
    implied = Decimal(primary["energyConsumption"]) * Decimal(primary["emissionFactorWTW"])
    assert abs(implied - intensity) < Decimal("1e-6")
    default = next(t for t in doc["tocs"] if "-default-" in t["tocId"])
    assert default["transportActivityUnit"] == "tkm" and "no TEU count" in default["comment"]
    # The fuel the published intensity assumes, with its unit: consumption derived from TTW, said so.
    carrier = default["energyCarriers"][0]
    assert (carrier["energyCarrier"], carrier["energyConsumptionUnit"]) == ("Diesel", "l")
    implied = Decimal(carrier["energyConsumption"]) * Decimal(carrier["emissionFactorTTW"])
    assert abs(implied - Decimal(default["co2eIntensityTTW"])) < Decimal("1e-6")
    assert "derived as co2eIntensityTTW / emissionFactorTTW" in default["comment"]
    assert default["secondaryEmissionFactorSources"][0]["name"].startswith("UK Government GHG Conversion")


async def toc_ids(api: Api, rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    ws, _ = await run_rows(api, rows)
    doc = json.loads((await pack_files(api, ws["id"]))["ileap_shipment_footprints"])
    validate(doc)
    return {t["tocId"]: t for t in doc["tocs"]}


async def test_toc_ids_name_the_intensity_and_are_never_reused_for_another(api: Api) -> None:
    fuel = {"mode": "road", "distance_km": 300, "mass_tonnes": 8, "fuel_type": "diesel", "vehicle_payload_tonnes": 24}
    default = {"mode": "road", "distance_km": 100, "mass_tonnes": 5}
    first = await toc_ids(api, [{**fuel, "fuel_amount": 90}, default])
    same = await toc_ids(api, [{**fuel, "fuel_amount": 90}, {**default, "mass_tonnes": 7}])
    other = await toc_ids(api, [{**fuel, "fuel_amount": 120}, default])
    assert set(first) == set(same)  # same intensities (the default's does not depend on the rows)
    primary = {i for i in first if "-primary-" in i}
    assert len(primary) == 1 and not primary & set(other)  # another fuel intensity: another id
    assert {i for i in first if "-default-" in i} == {i for i in other if "-default-" in i}
    for toc_id, toc in other.items():
        assert toc_id not in first or first[toc_id]["co2eIntensityWTW"] == toc["co2eIntensityWTW"]


async def test_teu_rows_give_teukm_tocs_and_carrier_derivations_are_marked(api: Api) -> None:
    rows = [
        {"external_id": "C-1", "mode": "sea", "distance_km": 10000, "mass_tonnes": 20, "teu": 2},
        {"external_id": "C-2", "mode": "sea", "distance_km": 5000, "mass_tonnes": 8, "teu": 1},
        {"external_id": "B-1", "mode": "sea", "distance_km": 5000, "mass_tonnes": 8},
        {"mode": "road", "distance_km": 100, "mass_tonnes": 2, "carrier_intensity_g_per_tkm": 80,
         "carrier_intensity_basis": "wtw"},
    ]  # fmt: skip
    ws, _ = await run_rows(api, rows)
    files = await pack_files(api, ws["id"])
    doc = json.loads(files["ileap_shipment_footprints"])
    validate(doc)
    lines = {r["external_id"]: r for r in csv.DictReader(io.StringIO(files["shipment_csv"].decode()))}
    teu = next(t for t in doc["tocs"] if t["transportActivityUnit"] == "TEUkm")
    teukm = 2 * Decimal(lines["C-1"]["activity_distance_km"]) + Decimal(lines["C-2"]["activity_distance_km"])
    wtw = Decimal(lines["C-1"]["co2e_wtw_kg"]) + Decimal(lines["C-2"]["co2e_wtw_kg"])
    assert Decimal(teu["co2eIntensityWTW"]) == (wtw / teukm).quantize(Decimal("1e-9"))
    assert teu["mode"] == "Sea" and "no TEU count" not in teu.get("comment", "")
    tce = doc["shipmentFootprints"][0]["tces"][0]
    assert (tce["packagingOrTrEqType"], tce["packagingOrTrEqAmount"], tce["tocId"]) == (
        "Container-TEU",
        "2",
        teu["tocId"],
    )
    sea_tkm = [t for t in doc["tocs"] if t["mode"] == "Sea" and t["transportActivityUnit"] == "tkm"]
    assert len(sea_tkm) == 1 and sea_tkm[0]["tocId"] != teu["tocId"]
    carrier = next(t for t in doc["tocs"] if "-carrier-" in t["tocId"])
    assert "co2eIntensityTTW is derived" in carrier["comment"] and "DERIVED" in carrier["description"]
    statement = files["methodology_statement"].decode()
    assert "per tonne-km (`tkm`) otherwise: a row without a TEU count carries only a mass" in statement
    csv_teu = [r["teu"] for r in lines.values()]
    assert csv_teu == ["2.0", "1.0", "", ""] or csv_teu == ["2", "1", "", ""]


async def test_teu_is_an_import_field_on_both_transports(api: Api) -> None:
    ws = await create_workspace(api)
    bad = await api.post(f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [{"teu": 0}]})
    assert bad.status_code == 422 and "teu" in bad.text
    body = await api.gql(
        "mutation($id: UUID!, $input: RegisterImportInput!) { registerImport(workspaceId: $id, input: $input) { id } }",
        {"id": ws["id"], "input": {"sourceRowCount": 1, "shipments": [{"mode": "SEA", "distanceKm": 100,
                                                                       "massTonnes": 3, "teu": 1}]}},
    )  # fmt: skip
    assert "errors" not in body, body
    await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})
    doc = json.loads((await pack_files(api, ws["id"]))["ileap_shipment_footprints"])
    assert [t["transportActivityUnit"] for t in doc["tocs"]] == ["TEUkm"]
