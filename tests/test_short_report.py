"""The ISO 14083 short report (chapter 13; CLECAT/UBA guide Tables 10-13) in the summary PDF and the
methodology statement, downloaded over HTTP and through the links GraphQL gives."""

from __future__ import annotations

import io
import re
from decimal import Decimal

from pypdf import PdfReader

from tests.conftest import Api
from tests.method_helpers import pack_files, run_rows

ROWS = [
    {"external_id": "S-1", "mode": "road", "distance_km": 120, "mass_tonnes": 2, "fuel_type": "diesel",
     "fuel_amount": 40, "vehicle_payload_tonnes": 20},
    {"external_id": "S-1", "mode": "sea", "distance_km": 9000, "mass_tonnes": 2, "distance_type": "sfd"},
    {"external_id": "S-2", "mode": "air", "distance_km": 800, "mass_tonnes": 0.25},
    {"external_id": "S-3", "mode": "road", "distance_km": 50, "mass_tonnes": 1, "carrier_intensity_g_per_tkm": 90,
     "carrier_intensity_basis": "wtw"},
    {"external_id": "S-4", "distance_km": 50, "mass_tonnes": 1},
]  # fmt: skip


def pdf_text(pdf: bytes) -> str:
    text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    return re.sub(r"\s+", " ", text)


def g_per_tkm(kg: float, tkm: float) -> str:
    return f"{float(Decimal(repr(kg)) * 1000 / Decimal(repr(tkm))):,.2f}"


async def test_pdf_and_statement_carry_every_element_of_the_short_report(api: Api) -> None:
    ws, calc = await run_rows(api, ROWS)
    run = calc["calculation_run"]
    files = await pack_files(api, ws["id"])
    pdf = pdf_text(files["summary_pdf"])
    md = files["methodology_statement"].decode()
    wtw = g_per_tkm(run["total_co2e_wtw_kg"], run["total_tonne_km"])
    ttw = g_per_tkm(run["total_co2e_ttw_kg"], run["total_tonne_km"])
    for text in (pdf, md):
        assert "calculated in accordance with ISO 14083:2023" in text
        assert "3 shipment(s) in 4 transport chain element(s) by air, road, sea" in text
        assert "chapter 13" in text and "clause 14" not in text
        # Overall intensities, from the run's totals (t·km as the run stores it).
        assert "g_T,TC (WTW)" in text and wtw in text
        assert "g_O,TC (TTW)" in text and ttw in text
        # Distance type per mode, hub omission declared with its reason, GWP set, infrastructure.
        assert "SFD (1)" in text and "GCD (1)" in text and "ACTUAL (2)" in text
        # The activity distance per mode (ISO 14083: SFD, air GCD) and the conversions the run used.
        assert "on the ISO 14083 activity basis only" in text and "GCD = actual - 95 km" in text
        assert "inland waterway 1.00, rail 1.00, road 1.05, sea 1.15" in text
        assert "divided by 1.08" not in text and "x 1.05 road, rail" not in text
        assert "Declared omission: the import held no hub rows" in text
        assert "AR5" in text and "100-year" in text
        assert "energy-provision infrastructure" in text and "not included" in text
        # Table 12 (secondary data) and Table 13 (fuels).
        assert "Vehicle class" in text and "Load factor" in text and "Empty trips" in text
        assert "HGV, all diesel" in text
        assert "LHV MJ/kg" in text and "TTW g/MJ" in text and "EN 16258" in text
        assert "radiative forcing" in text and "1 row(s) without mode" in text
    # Diesel: 2.57082 kg/l over 0.832 kg/l x 43.1 MJ/kg = 71.69 g/MJ TTW; 3.18183 -> 88.73 WTW.
    assert "| diesel | 1 | 43.1 | 0.832 | 71.69 | 88.73 |" in md
    # per mode: activity distance, then the distance types the rows gave (air, sea, road)
    assert "| GCD | GCD (1) |" in md and "| SFD | SFD (1) |" in md and "| SFD | ACTUAL (2) |" in md
    # One table of data categories (its header repeats on a page break): the contract tiers are no
    # longer printed beside them, and each category has one line.
    assert "Primary / secondary data" not in pdf
    assert "Total tonne-km (SFD, air GCD)" in pdf  # the summary's totals say their basis too
    assert pdf.count("Primary data (fuel or energy used, allocated)") == 1
    assert "Secondary data, modelled (carrier intensity)" in pdf


async def test_graphql_links_download_the_same_report(api: Api) -> None:
    ws, _ = await run_rows(api, ROWS[:1])
    pack = (await api.post(f"/api/v2/workspaces/{ws['id']}/packs", {})).json()["data"]
    body = await api.gql(
        "query($id: UUID!) { pack(id: $id) { artifacts { artifactType fileUrl } } }", {"id": pack["id"]}
    )
    urls = {a["artifactType"]: a["fileUrl"] for a in body["data"]["pack"]["artifacts"]}
    pdf = pdf_text((await api.get(urls["SUMMARY_PDF"])).content)
    md = (await api.get(urls["METHODOLOGY_STATEMENT"])).content.decode()
    for text in (pdf, md):
        assert "1 shipment(s) in 1 transport chain element(s) by road" in text
        assert "Hub activity: none reported" in text
    # Every report declares the omission of hubs with its reason.
    quality = (await api.get(urls["QUALITY_REPORT"])).content.decode()
    assert "Declared omission: the import held no hub rows" in quality
    ileap = (await api.get(pack["ileap_shipment_footprints_url"])).json()
    assert "Declared omission: the import held no hub rows" in ileap["hub_operations"] and ileap["hocs"] == []
