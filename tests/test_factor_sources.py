"""Every seeded factor is what the DESNZ 2025 rows it names publish (tests/fixtures/desnz_2025_rows.csv),
as printed in a pack's methodology statement; electricity carries its whole energy provision."""

from __future__ import annotations

import csv
import re
from decimal import Decimal
from pathlib import Path

from tests.conftest import Api
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
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| desnz-2025-iso14083-v3:")]
    assert len(rows) == 14  # 5 modes, 9 fuels
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
    row = {"mode": "rail", "distance_km": 400, "mass_tonnes": 500, "fuel_type": "electricity", "fuel_amount": 8000}
    _, data = await run_rows(api, [{**row, "fuel_allocation_share": 0.25}])
    run = data["calculation_run"]
    assert run["total_co2e_ttw_kg"] == 0
    # 8,000 kWh x 0.25 x (0.177 + 0.01853 + 0.0459 + 0.00397) kg/kWh
    assert Decimal(repr(run["total_co2e_wtw_kg"])) == Decimal(2000) * Decimal("0.24540")
