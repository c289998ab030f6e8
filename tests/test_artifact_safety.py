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
    # 1,000 actual tkm of emissions; the activity is on the SFD: 100 / 1.05 = 95.238095 km x 10 t
    assert line["co2e_kg"] == "125.220000" and line["tonne_km"] == "952.380950"
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


async def test_xlsx_rows_keep_every_value_whatever_the_text(api: Api) -> None:
    """Plain rows and rows whose text needs escaping or whitespace kept are rendered by two paths
    (artifacts/shipments_xlsx.py); either way every cell reads back as what was imported."""
    origins = ["Rotterdam", " leading space", "Tom & Jerry <Ltd>", "Duisburg", "trailing ",
               "line\nbreak", 'say "hi"', "Ünïcødé ✓", "Basel"]  # fmt: skip
    rows = [{"external_id": f"S-{i}", "origin": o, "mode": "road", "distance_km": 100 + i, "mass_tonnes": 1.5 * (i + 1)}
            for i, o in enumerate(origins)]  # fmt: skip
    ws, _ = await run_rows(api, rows)
    from tests.method_helpers import pack_files

    files = await pack_files(api, ws["id"])
    csv_rows = list(csv.DictReader(io.StringIO(files["shipment_csv"].decode(), newline="")))
    sheet = openpyxl.load_workbook(io.BytesIO(files["shipment_xlsx"]))["Shipments"]
    header = [c.value for c in sheet[1]]
    got = [dict(zip(header, (c.value for c in row), strict=True)) for row in sheet.iter_rows(min_row=2)]
    assert [g["origin"] for g in got] == origins
    assert [g["external_id"] for g in got] == [r["external_id"] for r in rows]
    assert [g["distance_km"] for g in got] == [r["distance_km"] for r in rows]
    assert [g["mass_tonnes"] for g in got] == [r["mass_tonnes"] for r in rows]
    assert [g["included"] for g in got] == [True] * len(rows)
    # Computed figures agree with the CSV's exact decimals, row by row.
    assert [round(g["co2e_kg"], 6) for g in got] == [float(r["co2e_kg"]) for r in csv_rows]
    assert sheet.max_row == len(rows) + 1 and sheet.max_column == len(header)
