"""User text stays text in every file; computed figures are decimal-exact."""

from __future__ import annotations

import csv
import io
import json

import openpyxl

from tests.conftest import Api
from tests.method_helpers import run_rows

NAME = '=HYPERLINK("https://evil.example","x")'


async def test_formulas_are_neutralised_and_numbers_exact(api: Api) -> None:
    rows = [{"external_id": "=1+2", "origin": "+SUM(A1)", "destination": "@cmd", "mode": "road",
             "distance_km": 100, "mass_tonnes": 10}]  # fmt: skip
    ws, _ = await run_rows(api, rows, name=NAME)
    from tests.method_helpers import pack_files

    files = await pack_files(api, ws["id"])
    line = next(csv.DictReader(io.StringIO(files["shipment_csv"].decode())))
    assert (line["external_id"], line["origin"], line["destination"]) == ("'=1+2", "'+SUM(A1)", "'@cmd")
    assert line["co2e_kg"] == "125.220000" and line["tonne_km"] == "1000.000000"
    book = openpyxl.load_workbook(io.BytesIO(files["shipment_xlsx"]))
    summary = book["Summary"]
    assert summary["B1"].value == NAME and summary["B1"].data_type == "s"
    sheet = book["Shipments"]
    assert sheet["D2"].value == "=1+2" and sheet["D2"].data_type == "s"
    doc = json.loads(files["machine_json"])
    assert doc["format_version"] == 2
    assert doc["shipments"][0]["co2e_wtw_kg"] == "125.220000"
    assert doc["calculation_run"]["total_co2e_kg"] == "125.220000"
    assert b"125.22000000000001" not in files["machine_json"] + files["shipment_csv"]
