"""The worked example (docs/methodology.md) recomputed independently: plain decimals from the rows of
examples/q1-2026-import.json and the published DESNZ rows in tests/fixtures/desnz_2025_rows.csv, by
the rules as the docs state them, not through the engine; compared with the API's answers."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from typing import Any

from tests.conftest import Api, create_workspace

ROOT = Path(__file__).resolve().parent.parent
Q6 = Decimal("0.000001")
DAF = {"road": Decimal("1.05"), "sea": Decimal("1.15"), "rail": Decimal(1), "inland_waterway": Decimal(1)}
# g per tonne-km (published kg per tonne.km x 1000): (TTW row, WTT row) per mode.
MODE_ROWS = {
    "road": ("27_304_3140_14_1", "28_907_3140_14_1"),
    "rail": ("27_315_3151_14_1", "28_911_3151_14_1"),
    "sea": ("27_320_3235_14_1", "28_916_3235_14_1"),
    "air": ("27_317_3159_14_1", "28_913_3159_14_1"),
    "inland_waterway": ("27_320_3224_14_1", "28_916_3224_14_1"),
}
DIESEL_ROWS = ("1_101_1011_8_1", "11_101_1011_8_1")  # kg per litre


def published() -> dict[str, Decimal]:
    text = (ROOT / "tests" / "fixtures" / "desnz_2025_rows.csv").read_text(encoding="utf-8")
    return {r["ID"]: Decimal(r["GHG Conversion Factor 2025 (kg CO2e)"]) for r in csv.DictReader(text.splitlines())}


def recompute(rows: list[dict[str, Any]]) -> dict[str, dict[str, Decimal]]:
    """Per mode and in total: activity tonne-km (SFD, air GCD), TTW and WTW kg."""
    pub = published()
    g = {m: (pub[t] * 1000, pub[w] * 1000) for m, (t, w) in MODE_ROWS.items()}
    diesel = (pub[DIESEL_ROWS[0]], pub[DIESEL_ROWS[1]])
    out: dict[str, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for r in rows:
        mode, d, m = r.get("mode"), r.get("distance_km"), r.get("mass_tonnes")
        if mode is None or d is None or m is None:
            continue
        d, m = Decimal(repr(d)), Decimal(repr(m))
        kind = r.get("distance_type") or (
            "gcd" if mode == "air" else "sfd" if r.get("distance_source") == "modelled" else "actual"
        )
        if mode == "air":
            activity = d - 95 if kind == "actual" else d
            actual = d if kind == "actual" else d + 95
        elif kind == "actual":
            activity, actual = (d / DAF[mode]).quantize(Q6), d
        else:
            activity, actual = d, (d * DAF[mode]).quantize(Q6)
        tkm = activity * m
        ttw_f, wtt_f = g[mode]
        share = None
        if r.get("fuel_type") == "diesel" and tkm > 0:
            if r.get("fuel_allocation_share") is not None:
                share = Decimal(repr(r["fuel_allocation_share"]))
            elif r.get("vehicle_payload_tonnes") is not None and Decimal(repr(r["vehicle_payload_tonnes"])) >= m:
                share = (m / Decimal(repr(r["vehicle_payload_tonnes"]))).quantize(Q6)
        if share is not None:
            litres = Decimal(repr(r["fuel_amount"])) * share
            ttw, wtt = (litres * diesel[0]).quantize(Q6), (litres * diesel[1]).quantize(Q6)
        elif r.get("carrier_intensity_g_per_tkm") is not None:
            ci = Decimal(repr(r["carrier_intensity_g_per_tkm"]))
            if r["carrier_intensity_basis"] == "wtw":
                ttw_g = (ci * ttw_f / (ttw_f + wtt_f)).quantize(Q6)
                wtt_g = ci - ttw_g
            else:
                ttw_g, wtt_g = ci, (ci * wtt_f / ttw_f).quantize(Q6)
            em_tkm = (actual if r.get("carrier_intensity_distance_basis") == "actual" else activity) * m
            ttw, wtt = (em_tkm * ttw_g / 1000).quantize(Q6), (em_tkm * wtt_g / 1000).quantize(Q6)
        else:
            em_tkm = (activity if mode == "air" else actual) * m
            ttw, wtt = (em_tkm * ttw_f / 1000).quantize(Q6), (em_tkm * wtt_f / 1000).quantize(Q6)
        for key in (mode, "all"):
            out[key]["tkm"] += tkm
            out[key]["ttw"] += ttw
            out[key]["wtw"] += ttw + wtt
    return out


async def test_worked_example_is_recomputed_independently(api: Api) -> None:
    body = json.loads((ROOT / "examples" / "q1-2026-import.json").read_text())  # noqa: ASYNC240 - small fixture
    expected = recompute(body["shipments"])
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    run = (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).json()["data"]["calculation_run"]
    total = expected["all"]
    assert Decimal(repr(run["total_tonne_km"])) == total["tkm"].quantize(Q6)
    assert Decimal(repr(run["total_co2e_wtw_kg"])) == total["wtw"]
    assert Decimal(repr(run["total_co2e_ttw_kg"])) == total["ttw"]
    for mode, got in run["totals_by_mode_json"].items():
        mine = expected[mode]
        assert Decimal(repr(got["tonne_km"])) == mine["tkm"].quantize(Q6), mode
        assert Decimal(repr(got["co2e_wtw_kg"])) == mine["wtw"], mode
        intensity = (mine["wtw"] * 1000 / mine["tkm"]).quantize(Q6)
        assert Decimal(repr(got["intensity_wtw_g_per_tkm"])) == intensity, mode
    # the figures docs/methodology.md prints: sea 21.83 and overall 38.83 g WTW per SFD/GCD tonne-km
    assert (expected["sea"]["wtw"] * 1000 / expected["sea"]["tkm"]).quantize(Decimal("0.01")) == Decimal("21.83")
    assert (total["wtw"] * 1000 / total["tkm"]).quantize(Decimal("0.01")) == Decimal("38.83")


def test_the_docs_print_the_recomputed_figures() -> None:
    """docs/methodology.md's worked example: its table adds up, and its totals and intensities are the
    independent recomputation's (a doc that drifts from the rows fails here, with no server)."""
    body = json.loads((ROOT / "examples" / "q1-2026-import.json").read_text())
    expected = recompute(body["shipments"])
    doc = (ROOT / "docs" / "methodology.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Worked example") : doc.index("## Performance")]
    flat = " ".join(section.split())
    table = [line for line in section.splitlines() if line.startswith("| ")]
    cells = [[c.strip().strip("*").replace(",", "") for c in line.strip("|").split("|")] for line in table]
    *groups, total = [c for c in cells if c[0].isdigit()]
    number = Decimal  # activity t·km, TTW kg, WTW kg are columns 2, 4, 5
    assert sum(int(g[0]) for g in groups) == int(total[0]) == 293
    for col, key in ((2, "tkm"), (4, "ttw"), (5, "wtw")):
        assert number(total[col]) == expected["all"][key], key
        # kg are exact on 6 decimals; a group's t·km is printed rounded to 6 decimals (the total exactly)
        slack = Decimal("0.0000005") * len(groups) if key == "tkm" else 0
        assert abs(sum(number(g[col]) for g in groups) - number(total[col])) <= slack, key
    g = Decimal("0.01")
    assert number(total[6]) == (expected["all"]["wtw"] * 1000 / expected["all"]["tkm"]).quantize(g)
    names = {"road": "road", "rail": "rail", "sea": "sea", "air": "air", "inland_waterway": "inland waterway"}
    for mode, name in names.items():
        intensity = (expected[mode]["wtw"] * 1000 / expected[mode]["tkm"]).quantize(g)
        assert f"{name} {intensity}" in flat, mode
    ttw = (expected["all"]["ttw"] * 1000 / expected["all"]["tkm"]).quantize(g)
    assert f"TTW overall {ttw}" in flat
    # the API's answers as the docs print them (totals on 6 decimals, as the run stores them)
    wtw, ttw_kg = expected["all"]["wtw"].normalize(), expected["all"]["ttw"].normalize()
    assert f"`total_co2e_wtw_kg` {wtw}" in flat and f"`total_co2e_ttw_kg` {ttw_kg}" in flat
    assert f"`total_tonne_km` {expected['all']['tkm'].quantize(Q6)}" in flat
