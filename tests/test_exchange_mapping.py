"""A pack's iLEAP file as PACT ProductFootprints (v2 and v3) and iLEAP TAD, checked against the
published schemas (vendored under tests/schemas/, README there names source and commit) and
against the pack's own figures.

Packs are built through the public API and their files downloaded over HTTP, as a host would
read them; the PackSource is made from the pack's detail and those files only.
"""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from evidence_gateway.exchange import (
    PackSource,
    product_footprints,
    row_facts_from_shipment_csv,
    transport_activity_data,
)
from evidence_gateway.exchange.footprints import V2_EXEMPTED_LIMIT, product_urn, stable_id
from tests.conftest import Api, create_workspace

SCHEMAS = Path(__file__).parent / "schemas"
SINE_PCF = {"ShipmentFootprint": "pcf-shipment-footprint", "TOC": "pcf-toc", "HOC": "pcf-hoc"}
SINE_DATA = {"ShipmentFootprint": "shipment-footprint", "TOC": "toc", "HOC": "hoc"}
PACT_V2 = ("pact-v2.3.3-openapi.yaml", "pact-openapi-2.3.0.yaml")
PACT_V3 = "pact-v3.0.3-openapi.yaml"

# 20 calculated shipment rows, 2 calculated hub rows and 1 row without a mode: 1 of 23 rows is
# exempted, under PACT 2.x's 5 % cap.
LEGS = [
    # S-1: a measured road leg (primary TOC), then a container sea leg (TEU-km TOC), then a hub.
    {"external_id": "S-1", "mode": "road", "distance_km": 120, "mass_tonnes": 8, "fuel_type": "diesel",
     "fuel_amount": 40, "vehicle_payload_tonnes": 24,
     "origin": "Lyon plant", "destination": "=Antwerp port", "shipment_date": "2026-01-12"},
    {"external_id": "S-1", "mode": "sea", "distance_km": 8000, "mass_tonnes": 8, "teu": 1,
     "origin": "Antwerp port", "destination": "Shanghai", "shipment_date": "2026-01-14"},
]  # fmt: skip
DEFAULTS = [
    {"external_id": f"R-{n}", "mode": "road" if n % 2 else "rail", "distance_km": 50 + n, "mass_tonnes": 1 + n / 4,
     "origin": "Rotterdam DC", "destination": f"Client {n}"}
    for n in range(18)
]  # fmt: skip
ROWS_A = [*LEGS, *DEFAULTS, {"external_id": "X-1", "distance_km": 10, "mass_tonnes": 1}]
HUBS_A = [
    {"external_id": "S-1", "name": "Port B", "hub_type": "maritime_container_terminal", "throughput_tonnes": 8,
     "electricity_kwh": 1000, "hub_total_throughput_tonnes": 100, "electricity_country": "GB"},
    {"name": "Cross-dock A", "hub_type": "transshipment", "throughput_tonnes": 10},
]  # fmt: skip


@cache
def _openapi(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((SCHEMAS / "pact" / name).read_text())
    return loaded


@cache
def _sine(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((SCHEMAS / "ileap" / f"{name}.json").read_text())
    # The published pcf-toc.json and pcf-hoc.json point their extension data at "#/definitions/Toc"
    # and "#/definitions/Hoc" while defining "TOC" and "HOC": resolve the names they mean.
    definitions = loaded.get("definitions", {})
    for meant, defined in (("Toc", "TOC"), ("Hoc", "HOC")):
        if defined in definitions and meant not in definitions:
            definitions[meant] = definitions[defined]
    return loaded


def check_openapi(name: str, obj: dict[str, Any]) -> None:
    """Validate against ``components/schemas/ProductFootprint`` of a vendored OpenAPI 3.1 file."""
    schema = {**_openapi(name), "$ref": "#/components/schemas/ProductFootprint"}
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(obj)


def check_sine(name: str, obj: dict[str, Any]) -> None:
    jsonschema.Draft7Validator(_sine(name), format_checker=jsonschema.FormatChecker()).validate(obj)


def check_footprint(fp: Any, v2_capped: bool = True) -> None:
    """v2 against both PACT 2.x files and SINE's; ``v2_capped=False`` leaves out the two that cap
    exemptedEmissionsPercent at 5 (pact-openapi 2.3.0 and SINE's), for a share above it."""
    check_openapi(PACT_V2[0], fp.v2)
    if v2_capped:
        check_openapi(PACT_V2[1], fp.v2)
        check_sine(SINE_PCF[fp.kind], fp.v2)
    check_openapi(PACT_V3, fp.v3)
    for doc in (fp.v2, fp.v3):
        (ext,) = doc["extensions"]
        check_sine(SINE_DATA[fp.kind], ext["data"])


def _aware(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)


async def build_pack(
    api: Api, rows: list[dict[str, Any]], hubs: list[dict[str, Any]], org: str
) -> tuple[PackSource, dict[str, bytes], dict[str, Any]]:
    """A workspace with these rows, calculated and packed; the pack's PackSource, files and detail."""
    ws = await create_workspace(api, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    body: dict[str, Any] = {"source_row_count": len(rows), "shipments": rows}
    if hubs:
        body["hubs"] = hubs
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/imports", body)).status_code == 201
    assert (await api.post(f"/api/v2/workspaces/{ws['id']}/calculate", {})).status_code == 200
    return await pack_source(api, ws, org)


async def pack_source(api: Api, ws: dict[str, Any], org: str) -> tuple[PackSource, dict[str, bytes], dict[str, Any]]:
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/packs", {})
    assert resp.status_code == 201, resp.text
    pack = (await api.get(f"/api/v2/packs/{resp.json()['data']['id']}")).json()["data"]
    files = {
        "ileap": (await api.get(pack["ileap_shipment_footprints_url"])).content,
        "csv": (await api.get(pack["shipment_csv_url"])).content,
    }
    end = date.fromisoformat(ws["reporting_period_end"]) + timedelta(days=1)  # PACT's end is exclusive
    source = PackSource(
        pack_id=uuid.UUID(pack["id"]),
        pack_version=pack["version_number"],
        pack_hash=pack["pack_hash"],
        organization_id=uuid.UUID(pack["org_id"]),
        organization_name=org,
        created=_aware(pack["created_at"]),
        period_start=datetime.combine(date.fromisoformat(ws["reporting_period_start"]), time(), UTC),
        period_end=datetime.combine(end, time(), UTC),
        ileap=json.loads(files["ileap"]),
        rows=row_facts_from_shipment_csv(files["csv"]),
    )
    return source, files, pack


def _csv_rows(data: bytes) -> dict[str, dict[str, str]]:
    return {r["shipment_id"]: r for r in csv.DictReader(io.StringIO(data.decode("utf-8")))}


async def test_every_object_validates_and_carries_the_packs_figures(api: Api) -> None:
    source, files, pack = await build_pack(api, ROWS_A, HUBS_A, "Carrier A")
    doc = source.ileap
    footprints = product_footprints(source)
    for fp in footprints:
        check_footprint(fp)
        assert fp.created == source.created and fp.v2["id"] == fp.v3["id"] == str(fp.id)
        for v in (fp.v2, fp.v3):
            assert v["status"] == "Active" and v["companyIds"] == [f"urn:uuid:{pack['org_id']}"]
            assert v["companyName"] == "Carrier A" and "precedingPfIds" not in v
            assert v["pcf"]["referencePeriodStart"] == "2026-01-01T00:00:00Z"
            assert v["pcf"]["referencePeriodEnd"] == "2026-04-01T00:00:00Z"
            assert pack["pack_hash"] in v["comment"]
        assert (fp.v2["specVersion"], fp.v2["version"], fp.v3["specVersion"]) == ("2.3.0", 1, "3.0.0")
        assert fp.v2["productCategoryCpc"] == "83117"
        assert fp.v3["productClassifications"] == ["urn:pact:productclassification:un-cpc:83117"]
        assert fp.v2["pcf"]["crossSectoralStandards"] == fp.v3["pcf"]["crossSectoralStandards"] == ["ISO14083"]
        assert fp.v2["pcf"]["ipccCharacterizationFactorsSources"] == ["AR5"]

    by_kind: dict[str, list[Any]] = {}
    for fp in footprints:
        by_kind.setdefault(fp.kind, []).append(fp)
    shipments = {fp.v2["extensions"][0]["data"]["shipmentId"]: fp for fp in by_kind["ShipmentFootprint"]}
    # Every shipment with t·km is a footprint; the hub-only shipment (no t·km) is not.
    with_tkm = {
        sf["shipmentId"] for sf in doc["shipmentFootprints"] if any(Decimal(t["transportActivity"]) for t in sf["tces"])
    }
    assert set(shipments) == with_tkm and len(with_tkm) == 19
    assert len(doc["shipmentFootprints"]) == 20  # the hub of its own, left out above
    assert {fp.v2["extensions"][0]["data"]["tocId"] for fp in by_kind["TOC"]} == {t["tocId"] for t in doc["tocs"]}
    assert {fp.v2["extensions"][0]["data"]["hocId"] for fp in by_kind["HOC"]} == {h["hocId"] for h in doc["hocs"]}

    # Exempted: 1 shipment row without a mode, 0 hub rows excluded, of 20 + 2 calculated rows + 1.
    assert (doc["excluded_shipment_rows"], doc["excluded_hub_rows"]) == (1, 0)
    exempted = (Decimal(100) / 23).quantize(Decimal("0.000001"), rounding="ROUND_CEILING")
    assert exempted <= V2_EXEMPTED_LIMIT

    rows = _csv_rows(files["csv"])
    for sf in doc["shipmentFootprints"]:
        if sf["shipmentId"] not in shipments:
            continue
        fp = shipments[sf["shipmentId"]]
        tkm = sum((Decimal(t["transportActivity"]) for t in sf["tces"]), Decimal(0))
        wtw = sum((Decimal(t["co2eWTW"]) for t in sf["tces"]), Decimal(0))
        assert fp.v2["productIds"] == [f"urn:pathfinder:product:customcode:vendor-assigned:shipment:{sf['shipmentId']}"]
        assert fp.v2["productIds"] == fp.v3["productIds"]
        assert fp.v2["pcf"]["declaredUnit"] == fp.v3["pcf"]["declaredUnitOfMeasurement"] == "ton kilometer"
        assert Decimal(fp.v2["pcf"]["unitaryProductAmount"]) == Decimal(fp.v3["pcf"]["declaredUnitAmount"]) == tkm
        assert Decimal(fp.v2["pcf"]["pCfExcludingBiogenic"]) == wtw
        assert Decimal(fp.v3["pcf"]["pcfExcludingBiogenicUptake"]) == wtw
        assert Decimal(fp.v2["pcf"]["productMassPerDeclaredUnit"]) == Decimal(sf["mass"])
        assert Decimal(fp.v3["pcf"]["exemptedEmissionsPercent"]) == exempted
        assert Decimal(str(fp.v2["pcf"]["exemptedEmissionsPercent"])) == exempted
        # The row sums agree with the shipment CSV (tonne-km on the ISO basis, WTW kg).
        for t in sf["tces"]:
            if t.get("tocId"):
                assert Decimal(t["co2eWTW"]) == Decimal(rows[t["tceId"]]["co2e_wtw_kg"])
    s1 = shipments["S-1"]
    # S-1: road (measured fuel: primary) + sea + a measured hub: every TCE's emissions are primary
    # except the sea leg's.
    s1_tces = s1.v2["extensions"][0]["data"]["tces"]
    assert [("hocId" in t) for t in s1_tces] == [False, False, True]
    sea = Decimal(s1_tces[1]["co2eWTW"])
    total = sum((Decimal(t["co2eWTW"]) for t in s1_tces), Decimal(0))
    share = ((total - sea) * 100 / total).quantize(Decimal("0.000001"))
    assert Decimal(s1.v3["pcf"]["primaryDataShare"]) == share
    assert s1.v2["pcf"]["declaredUnit"] == "ton kilometer" and "S-1" in s1.v2["productNameCompany"]

    tocs = {t["tocId"]: t for t in doc["tocs"]}
    for fp in by_kind["TOC"]:
        toc = fp.v2["extensions"][0]["data"]
        assert fp.v2["productIds"] == [f"urn:pathfinder:product:customcode:vendor-assigned:toc:{toc['tocId']}"]
        assert (fp.v2["pcf"]["unitaryProductAmount"], fp.v3["pcf"]["declaredUnitAmount"]) == ("1", "1")
        assert fp.v2["extensions"][0]["dataSchema"] == "https://api.ileap.sine.dev/toc.json"
        assert fp.v2["extensions"][0]["specVersion"] == "2.0.0"
        assert toc == tocs[toc["tocId"]]
        if toc["transportActivityUnit"] == "tkm":
            assert Decimal(fp.v2["pcf"]["pCfExcludingBiogenic"]) == Decimal(toc["co2eIntensityWTW"])
        else:  # TEU-km: stated per t·km from its TCEs
            tces = [t for sf in doc["shipmentFootprints"] for t in sf["tces"] if t.get("tocId") == toc["tocId"]]
            per_tkm = sum(Decimal(t["co2eWTW"]) for t in tces) / sum(Decimal(t["transportActivity"]) for t in tces)
            assert Decimal(fp.v2["pcf"]["pCfExcludingBiogenic"]) == per_tkm.quantize(Decimal("0.000000001"))
            assert "TEU-km" in fp.v2["comment"]
        assert fp.v3["pcf"]["exemptedEmissionsPercent"] == "0"
    assert any(t["transportActivityUnit"] == "TEUkm" for t in tocs.values())
    for fp in by_kind["HOC"]:
        hoc = fp.v2["extensions"][0]["data"]
        assert fp.v2["pcf"]["declaredUnit"] == fp.v3["pcf"]["declaredUnitOfMeasurement"] == "kilogram"
        assert (fp.v2["pcf"]["unitaryProductAmount"], fp.v2["pcf"]["productMassPerDeclaredUnit"]) == ("1000", "1000")
        assert Decimal(fp.v3["pcf"]["pcfExcludingBiogenicUptake"]) == Decimal(hoc["co2eIntensityWTW"])
        assert fp.v2["extensions"][0]["dataSchema"] == "https://api.ileap.sine.dev/hoc.json"
    assert len(by_kind["HOC"]) == 2


async def test_tad_rows_are_the_imported_rows(api: Api) -> None:
    source, files, _ = await build_pack(api, ROWS_A, HUBS_A, "Carrier A")
    tads = transport_activity_data(source)
    rows = _csv_rows(files["csv"])
    included = {k: r for k, r in rows.items() if r["included"] == "true"}
    assert len(tads) == len(included) == 20
    tce_of = {t["tceId"]: (sf, t) for sf in source.ileap["shipmentFootprints"] for t in sf["tces"]}
    modes = {"road": "Road", "rail": "Rail", "sea": "Sea"}
    row_of = {str(stable_id(source.pack_id, "TAD", k)): k for k in included}
    seen_rows = set()
    for tad in tads:
        check_sine("tad", tad)
        row_id = row_of[tad["activityId"]]  # the row behind the activity (its id names it)
        seen_rows.add(row_id)
        row, (sf, tce) = included[row_id], tce_of[row_id]
        assert tad["mode"] == modes[row["mode"]]
        assert Decimal(tad["mass"]) == Decimal(row["mass_tonnes"]) * 1000
        assert tad["distance"] == tce["distance"] and tad["consignmentIds"] == [sf["shipmentId"]]
        assert tad["origin"] == {"city": row["origin"].removeprefix("'"), "country": "ZZ"}
        assert tad["destination"]["city"] == row["destination"].removeprefix("'")
        if row["shipment_date"]:
            assert tad["departureAt"] == tad["arrivalAt"] == f"{row['shipment_date']}T00:00:00Z"
        else:
            assert (tad["departureAt"], tad["arrivalAt"]) == ("2026-01-01T00:00:00Z", "2026-04-01T00:00:00Z")
    assert seen_rows == set(included)
    # The neutralised CSV cell comes back as imported; the TEU count is carried.
    first, second = (t for t in tads if t["consignmentIds"] == ["S-1"])
    assert first["destination"]["city"] == "=Antwerp port"
    assert (second["packagingOrTrEqType"], second["packagingOrTrEqAmount"]) == ("Container-TEU", 1)
    # Without the row facts a TAD is still valid: places unknown, the row's date from the file.
    bare = transport_activity_data(PackSource(**{**source.__dict__, "rows": {}}))
    for tad in bare:
        check_sine("tad", tad)
    assert bare[0]["origin"] == {"city": "unknown", "country": "ZZ"}
    assert bare[0]["departureAt"] == "2026-01-12T00:00:00Z"


async def test_ids_are_stable_per_pack_and_distinct_across_packs(api: Api, api_b: Api) -> None:
    rows = [*LEGS, *DEFAULTS[:3]]
    first, _, pack = await build_pack(api, rows, [], "Carrier A")
    again = product_footprints(first)
    assert [(f.id, f.v2, f.v3) for f in again] == [(f.id, f.v2, f.v3) for f in product_footprints(first)]
    assert len({f.id for f in again}) == len(again)
    assert transport_activity_data(first) == transport_activity_data(first)
    # The next pack of the same workspace: the same file, other ids.
    ws = (await api.get(f"/api/v2/workspaces/{pack['workspace_id']}")).json()["data"]
    second, files, _ = await pack_source(api, ws, "Carrier A")
    assert second.ileap == first.ileap and second.pack_id != first.pack_id
    later = product_footprints(second)
    assert [f.kind for f in later] == [f.kind for f in again]
    assert not {f.id for f in later} & {f.id for f in again}
    assert [f.v2["pcf"] for f in later] == [f.v2["pcf"] for f in again]
    first_tad = {t["activityId"] for t in transport_activity_data(first)}
    assert not first_tad & {t["activityId"] for t in transport_activity_data(second)}
    # Another organisation's pack of the same rows: its own company id, its own footprint ids.
    other, _, other_pack = await build_pack(api_b, rows, [], "Shipper B")
    theirs = product_footprints(other)
    assert other_pack["org_id"] != pack["org_id"]
    assert {f.v2["companyIds"][0] for f in theirs} == {f"urn:uuid:{other_pack['org_id']}"}
    assert not {f.id for f in theirs} & {f.id for f in again}
    for fp in theirs:
        check_footprint(fp)


async def test_exempted_share_above_pact2_cap_is_stated_as_it_is(api: Api) -> None:
    rows = [
        {"external_id": "A", "mode": "road", "distance_km": 100, "mass_tonnes": 2},
        {"external_id": "B", "mode": "rail", "distance_km": 300, "mass_tonnes": 5},
        {"external_id": "C", "mode": "road", "distance_km": 40, "mass_tonnes": 1},
        {"external_id": "D", "distance_km": 40, "mass_tonnes": 1},
    ]
    source, _, _ = await build_pack(api, rows, [], "Carrier A")
    footprints = product_footprints(source)
    shipments = [fp for fp in footprints if fp.kind == "ShipmentFootprint"]
    assert len(shipments) == 3
    for fp in shipments:
        # PACT 3.0 has no cap: valid. PACT 2.3.3's schema allows it too; its text, pact-openapi
        # 2.3.0 and SINE's 2.x schema cap it at 5: the value is stated as it is, not made to fit.
        check_footprint(fp, v2_capped=False)
        assert fp.v3["pcf"]["exemptedEmissionsPercent"] == "25"
        assert fp.v2["pcf"]["exemptedEmissionsPercent"] == 25.0 > V2_EXEMPTED_LIMIT
        assert "1 of the run's 4 rows" in fp.v2["pcf"]["exemptedEmissionsDescription"]
        with pytest.raises(jsonschema.ValidationError, match="greater than the maximum of 5"):
            check_sine(SINE_PCF[fp.kind], fp.v2)


def test_product_ids_are_urns_whatever_the_id() -> None:
    assert product_urn("ShipmentFootprint", "PO 12/7#a") == (
        "urn:pathfinder:product:customcode:vendor-assigned:shipment:PO%2012%2F7%23a"
    )
    assert product_urn("TOC", "eg-road-default-2506e6d52979c6c3").endswith(":toc:eg-road-default-2506e6d52979c6c3")
    assert product_urn("HOC", "Zürich:1").endswith(":hoc:Z%C3%BCrich:1")


def test_times_must_be_aware() -> None:
    source = PackSource(
        pack_id=uuid.uuid4(), pack_version=1, pack_hash="0" * 64, organization_id=uuid.uuid4(),
        organization_name="Carrier A", created=datetime(2026, 1, 1), period_start=datetime(2026, 1, 1, tzinfo=UTC),
        period_end=datetime(2026, 2, 1, tzinfo=UTC),
        ileap={"shipmentFootprints": [{"shipmentId": "S", "mass": "1000", "tces": [
            {"tceId": "t", "tocId": "x", "shipmentId": "S", "mass": "1000", "distance": {"actual": "1"},
             "transportActivity": "1", "co2eWTW": "1", "co2eTTW": "1"}]}], "tocs": [], "hocs": []},
    )  # fmt: skip
    with pytest.raises(ValueError, match="timezone-aware"):
        product_footprints(source)
