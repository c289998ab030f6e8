"""The pure engine and quality rules, without a database: exact numbers, rounding, determinism."""

from __future__ import annotations

import pytest

from evidence_gateway.calculation import (
    Factor,
    FactorSet,
    ShipmentInput,
    calculate,
    canonical_json,
    largest_remainder_percentages,
    rerun_hash,
)
from evidence_gateway.calculation import factors as seeded
from evidence_gateway.calculation.quality import assess_rows, coverage
from evidence_gateway.models import FuelType, TransportMode

WTW = FactorSet(
    "WTW",
    {r.key: Factor(r.ttw, r.wtt) for r in seeded.MODE_FACTORS},
    {r.key: Factor(r.ttw, r.wtt) for r in seeded.FUEL_FACTORS},
)


def row(
    i: int, mode: str | None = "road", d: float | None = 100.0, m: float | None = 10.0, **kw: object
) -> ShipmentInput:
    values = {
        "fuel_type": None,
        "fuel_amount": None,
        "carrier_intensity_g_per_tkm": None,
        "distance_source": "measured",
    }
    values.update(kw)
    return ShipmentInput(i, i, mode, d, m, **values)  # type: ignore[arg-type]


def test_every_mode_and_fuel_has_a_seeded_factor() -> None:
    assert {r.key for r in seeded.MODE_FACTORS} == {m.value for m in TransportMode}
    assert {r.key for r in seeded.FUEL_FACTORS} == {f.value for f in FuelType}
    for r in seeded.ALL_FACTORS:
        assert r.wtw >= r.ttw >= 0 and r.source


def test_tiers_and_totals() -> None:
    result = calculate(
        [
            row(0),  # default: 1000 tkm * 125.22 g
            row(1, carrier_intensity_g_per_tkm=90.0),  # secondary: 1000 tkm * 90 g
            row(2, distance_source="modelled"),  # modelled
            # primary: 100 l * 3.18183 kg (issue 12: fuel is primary only with allocation data)
            row(3, fuel_type="diesel", fuel_amount=100.0, fuel_allocation_share=1.0),
            row(4, d=None),  # missing
        ],
        WTW,
    )
    assert result.tier_counts == {"primary": 1, "secondary": 1, "default": 1, "modelled": 1}
    assert result.missing_count == 1 and result.usable_count == 4 and result.flagged_count == 0
    # the modelled row is an SFD: emissions on 1,050 actual tkm (x 1.05, issue 12), activity on
    # 1,000 SFD tkm; each actual 100 km is an SFD of 95.238095 km (ISO 14083 activity, issue 26)
    assert result.total_co2e_kg == pytest.approx(125.22 + 90.0 + 131.481 + 318.183)
    assert result.total_tonne_km == 3 * 952.38095 + 1000
    assert result.rows[4][2] is False and result.rows[4][3] is None
    assert result.rows[3][6] == pytest.approx(318.183 * 1000 / 952.38095)


def test_implausible_rows_are_flagged() -> None:
    result = calculate(
        [
            row(0, d=0.0),
            row(1, m=0.0),
            row(2, carrier_intensity_g_per_tkm=1253.0),
            row(3, carrier_intensity_g_per_tkm=12.0),
        ],
        WTW,
    )
    # 1253 g is just over 10x the road default (125.22), 12.0 g just under a tenth of it (12.522).
    assert result.flagged_count == 4
    assert result.flag_counts == {"zero_distance": 1, "zero_mass": 1, "carrier_intensity_out_of_range": 2}
    assert [r[3] for r in result.rows] == ["default", "default", "default", "default"]


@pytest.mark.parametrize(
    "counts", [[1, 1, 1, 0], [1, 2, 3, 4], [7, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1], [3, 3, 3, 2], [0, 0, 0, 0]]
)
def test_percentages_add_to_exactly_100(counts: list[int]) -> None:
    pct = largest_remainder_percentages(counts)
    if sum(counts):
        assert round(sum(pct), 10) == 100.0
        assert all(abs(round(p, 2) - p) < 1e-9 for p in pct)
    else:
        assert pct == [0.0] * len(counts)


def test_coverage_is_clamped() -> None:
    assert coverage(5, 10) == 50.0
    assert coverage(12, 10) == 100.0
    assert coverage(0, 0) == 0.0
    assert coverage(3, 0) == 100.0


def test_metadata_only_rule() -> None:
    result = calculate([], WTW)
    a = assess_rows(result, declared_rows=40, imports_without_rows=1, rows_not_loaded=40, boundary="WTW")
    assert a.coverage_score == 0.0
    assert {r["id"] for r in a.rules_triggered_json} >= {"rows_not_loaded", "low_coverage"}


def test_hash_is_canonical() -> None:
    assert canonical_json({"b": 1, "a": [1.5, None]}) == b'{"a":[1.5,null],"b":1}'
    assert rerun_hash({"a": 1, "b": 2}) == rerun_hash({"b": 2, "a": 1})
    assert rerun_hash({"a": 1}) != rerun_hash({"a": 1.0001})
