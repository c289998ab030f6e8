"""Every seeded factor is what the DESNZ 2025 rows it names publish (tests/fixtures/desnz_2025_rows.csv),
as printed in a pack's methodology statement; electricity carries its whole energy provision."""

from __future__ import annotations

import csv
import re
from decimal import Decimal
from pathlib import Path

from tests.conftest import Api, create_workspace, gql_code
from tests.method_helpers import pack_files, run_rows

PUBLISHED = {
    row["ID"]: row
    for row in csv.DictReader(
        (Path(__file__).parent / "fixtures" / "desnz_2025_rows.csv").read_text(encoding="utf-8").splitlines()
    )
}
ROW_ID = re.compile(r"\b\d+_\d+_\d+_\d+_\d+\b")


def _published_sum(ids: list[str], unit: str) -> Decimal:
    """Sum of the named rows, in the factor's unit (g per tkm; kg per litre, kg or kWh)."""
    total = Decimal(0)
    for row_id in ids:
        row = PUBLISHED[row_id]
        value = Decimal(row["GHG Conversion Factor 2025 (kg CO2e)"])
        total += {"tonne.km": value * 1000, "tonnes": value / 1000}.get(row["UOM"], value)
    return total


def _boundary_ids(source_rows: str) -> dict[str, list[str]]:
    """'TTW <ids> (...); WTT <ids> (...)' -> {'TTW': [...], 'WTT': [...]}."""
    found: dict[str, list[str]] = {"TTW": [], "WTT": []}
    for part in source_rows.split("; "):
        boundary = part[:3]
        assert boundary in found, f"source rows must be marked TTW or WTT: {part!r}"
        found[boundary] += ROW_ID.findall(part)
    return found


async def test_every_factor_is_the_sum_of_the_published_rows_it_names(api: Api) -> None:
    ws, _ = await run_rows(api, [{"mode": "road", "distance_km": 100, "mass_tonnes": 1}])
    statement = (await pack_files(api, ws["id"]))["methodology_statement"].decode()
    table = statement.split("## Emission factors", 1)[1]
    rows = [
        line.split(" | ")
        for line in table.splitlines()
        if line.startswith(("| desnz-2025-iso14083-v4:mode:", "| desnz-2025-iso14083-v4:fuel:"))
        or line.startswith("| desnz-2025-iso14083-v4:grid:GB ")
    ]
    assert len(rows) == 15  # 5 modes, 9 fuels, the UK grid
    for cells in rows:
        ref, unit, ttw, wtt, wtw, source_rows = cells[0][2:], cells[1], cells[2], cells[3], cells[4], cells[7]
        ids = _boundary_ids(source_rows)
        places = Decimal(ttw).as_tuple().exponent
        for boundary, printed in (("TTW", ttw), ("WTT", wtt)):
            expected = _published_sum(ids[boundary], unit).quantize(Decimal(1).scaleb(places))
            assert Decimal(printed) == expected, f"{ref} {boundary}: printed {printed}, published rows give {expected}"
        assert Decimal(wtw) == Decimal(ttw) + Decimal(wtt), ref
    assert all(row_id in statement for row_id in PUBLISHED), "every fixture row is named by some factor"


async def test_electricity_counts_generation_losses_and_their_upstream(api: Api) -> None:
    row = {
        "mode": "rail", "distance_km": 400, "mass_tonnes": 500, "fuel_type": "electricity", "fuel_amount": 8000,
        "electricity_country": "GB",
    }  # fmt: skip
    _, data = await run_rows(api, [{**row, "fuel_allocation_share": 0.25}])
    run = data["calculation_run"]
    assert run["total_co2e_ttw_kg"] == 0
    # 8,000 kWh x 0.25 x (0.177 + 0.01853 + 0.0459 + 0.00397) kg/kWh
    assert Decimal(repr(run["total_co2e_wtw_kg"])) == Decimal(2000) * Decimal("0.24540")


EMBER_G_PER_KWH = re.compile(r"WTT Ember ([A-Z]{3}) (\d{4}) \(.*, ([\d.]+)\)")


async def test_grid_rows_are_the_published_ember_intensities_for_eu27_uk_us_china(api: Api) -> None:
    ws, _ = await run_rows(api, [{"mode": "road", "distance_km": 100, "mass_tonnes": 1}])
    statement = (await pack_files(api, ws["id"]))["methodology_statement"].decode()
    grid = {
        cells[0][2:].split(":")[-1]: cells
        for cells in (line.split(" | ") for line in statement.splitlines())
        if cells[0].startswith("| desnz-2025-iso14083-v4:grid:")
    }
    eu27 = "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE".split()
    assert set(eu27) | {"GB", "US", "CN"} <= set(grid)
    for country, cells in grid.items():
        if country == "GB":
            continue
        found = EMBER_G_PER_KWH.search(cells[7])
        assert found, cells[7]
        assert Decimal(cells[2]) == 0 and Decimal(cells[3]) == (Decimal(found.group(3)) / 1000).quantize(
            Decimal("1e-5")
        )


async def test_electric_rows_use_their_country_grid_and_an_unknown_country_is_422(api: Api) -> None:
    row = {"mode": "rail", "distance_km": 400, "mass_tonnes": 500, "fuel_type": "electricity", "fuel_amount": 8000,
           "fuel_allocation_share": 0.25}  # fmt: skip
    _, data = await run_rows(api, [{**row, "electricity_country": "FR"}, {**row, "electricity_country": "CN"}])
    # 2,000 kWh each: France 56.04 g/kWh, China 585.82 g/kWh (Ember), lifecycle, all in WTT
    assert Decimal(repr(data["calculation_run"]["total_co2e_wtw_kg"])) == 2000 * (
        Decimal("0.05604") + Decimal("0.58582")
    )
    assert data["calculation_run"]["total_co2e_ttw_kg"] == 0

    ws = await create_workspace(api)
    for bad, why in (({}, "required with fuel_type electricity"), ({"electricity_country": "XX"}, "no location-based")):
        resp = await api.post(
            f"/api/v2/workspaces/{ws['id']}/imports", {"source_row_count": 1, "shipments": [{**row, **bad}]}
        )
        assert resp.status_code == 422, resp.text
        body = resp.json()
        assert body["error"] and why in body["details"]["fields"]["shipments[0].electricity_country"]
    gql_row = {"mode": "RAIL", "distanceKm": 400, "massTonnes": 500, "fuelType": "ELECTRICITY", "fuelAmount": 8000,
               "fuelAllocationShare": 0.25, "electricityCountry": "XX"}  # fmt: skip
    body = await api.gql(
        "mutation($id: UUID!, $in: RegisterImportInput!) { registerImport(workspaceId: $id, input: $in) { id } }",
        {"id": ws["id"], "in": {"sourceRowCount": 1, "shipments": [gql_row]}},
    )
    assert gql_code(body) == "BAD_USER_INPUT"


async def test_hvo_counts_its_published_combustion_ch4_and_n2o(api: Api) -> None:
    row = {"mode": "road", "distance_km": 100, "mass_tonnes": 10, "fuel_type": "hvo", "fuel_amount": 40,
           "fuel_allocation_share": 0.5}  # fmt: skip
    _, data = await run_rows(api, [row])
    # 20 l x 0.03558 (2_103_1036_8_1) TTW, + 0.56439 (12_900_1036_8_1) WTT
    assert Decimal(repr(data["calculation_run"]["total_co2e_ttw_kg"])) == Decimal("0.7116")
    assert Decimal(repr(data["calculation_run"]["total_co2e_wtw_kg"])) == 20 * (Decimal("0.03558") + Decimal("0.56439"))
