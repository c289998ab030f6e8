"""No surprise breaks: the live schema against the SDL as released (schema.released.graphql).

A breaking change passes only after its deprecation's notice; the policy's check is exercised on
small schemas too, so a check that lets everything through fails here.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
from graphql import GraphQLSchema, build_schema
from pydantic import ValidationError

from evidence_gateway.schema import schema
from evidence_gateway.schema.common import DEPRECATION_NOTICE_DAYS, deprecated_since, deprecation_day
from evidence_gateway.settings import Settings
from tests.conftest import Api
from tests.schema_policy import deprecated_elements, violations

ROOT = Path(__file__).resolve().parent.parent
RELEASED = ROOT / "schema.released.graphql"
TODAY = date.today()


def unreleased_changelog() -> str:
    text = (ROOT / "CHANGELOG.md").read_text()
    start = text.index("## [Unreleased]")
    end = text.find("\n## [", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_live_schema_breaks_nothing_released_without_notice() -> None:
    released = build_schema(RELEASED.read_text())
    found = violations(released, schema._schema, TODAY, unreleased_changelog())
    assert not found, "changes against schema.released.graphql (docs/graphql.md):\n" + "\n".join(map(str, found))


def test_the_released_sdl_is_a_release() -> None:
    """It is replaced at a release by that release's schema.graphql, never edited to let a change through."""
    text = RELEASED.read_text()
    assert "type Query" in text and "type Mutation" in text
    assert re.search(r"^## \[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.M)


def test_every_deprecation_reason_names_its_day() -> None:
    reasons = deprecated_elements(schema._schema)
    assert reasons, "the schema deprecates something (legacy reports at least)"
    wrong = {k: r for k, r in reasons.items() if (d := deprecation_day(r)) is None or d > TODAY}
    assert not wrong, f'reasons must read "Deprecated since YYYY-MM-DD; use ..." (not in the future): {wrong}'


def test_reason_format() -> None:
    assert deprecation_day("Deprecated since 2026-11-26; use totalsByMode.") == date(2026, 11, 26)
    for bad in ("Use totalsByMode.", "Deprecated since 26/11/2026; use x", "Deprecated since 2026-02-30; x", None):
        assert deprecation_day(bad) is None
    with pytest.raises(ValueError, match="not a deprecation reason"):
        deprecated_since("soon", "use x")


BASE = """
type Query { a: Int {a_dep} b(x: Int {x_dep}, y: Int): Kind c: Old {c_dep} }
type Old { v: Int }
enum Kind { ONE TWO {two_dep} }
input Filter { f: Int {f_dep} }
type Mutation { m(filter: Filter): Int }
"""


def sdl(template: str = BASE, **deps: str) -> GraphQLSchema:
    for slot in ("a_dep", "x_dep", "c_dep", "two_dep", "f_dep"):
        reason = deps.get(slot)
        template = template.replace("{" + slot + "}", f'@deprecated(reason: "{reason}")' if reason else "")
    return build_schema(template)


def notice(days_ago: int) -> str:
    return deprecated_since((TODAY - timedelta(days=days_ago)).isoformat(), "use something else")


OLD_ENOUGH = DEPRECATION_NOTICE_DAYS
TOO_RECENT = DEPRECATION_NOTICE_DAYS - 1


@pytest.mark.parametrize(
    ("slot", "change"),
    [
        ("a_dep", lambda s: s.replace("a: Int {a_dep}", "")),  # field removed
        ("a_dep", lambda s: s.replace("a: Int {a_dep}", "a: String {a_dep}")),  # field changed type
        ("x_dep", lambda s: s.replace("x: Int {x_dep}, ", "")),  # argument removed
        ("two_dep", lambda s: s.replace("TWO {two_dep}", "")),  # enum value removed
        ("c_dep", lambda s: s.replace("c: Old {c_dep}", "").replace("type Old { v: Int }", "")),  # field and its type
    ],
    ids=["field-removed", "field-type", "argument-removed", "enum-value-removed", "type-removed"],
)
def test_a_breaking_change_needs_a_dated_deprecation_90_days_old(slot: str, change: object) -> None:
    changed = change(BASE)  # type: ignore[operator]
    undated = "Use something else."
    for reason, allowed in ((None, False), (undated, False), (notice(TOO_RECENT), False), (notice(OLD_ENOUGH), True)):
        deps = {slot: reason} if reason else {}
        old, new = sdl(**deps), sdl(changed, **deps)
        found = violations(old, new, TODAY)
        assert (not found) is allowed, (slot, reason, found)


def test_breaks_no_deprecation_can_excuse() -> None:
    old = sdl(a_dep=notice(400))
    for changed in (
        BASE.replace("y: Int)", "y: Int, z: Int!)"),  # a required argument added
        BASE.replace("input Filter { f: Int {f_dep} }", "input Filter { f: Int {f_dep} g: Int! }"),  # required input
        BASE.replace("y: Int)", "y: Int!)"),  # an argument made non-null
        BASE.replace("type Old { v: Int }", "interface Old { v: Int }"),  # a type changed kind
    ):
        assert violations(old, sdl(changed, a_dep=notice(400)), TODAY), changed


def test_an_observable_addition_is_announced_in_the_changelog() -> None:
    old = sdl()
    new = sdl(BASE.replace("ONE TWO", "ONE TWO THREE"))
    assert [v.why for v in violations(old, new, TODAY, "")] == ["name `Kind.THREE` in CHANGELOG.md [Unreleased]"]
    assert violations(old, new, TODAY, "- `Kind.THREE`: a third kind.") == []
    # An optional argument or field is no surprise: nothing to announce.
    assert violations(old, sdl(BASE.replace("y: Int)", "y: Int, z: Int)")), TODAY) == []


# RFC 9745 §2.1: a structured-field Date (@ and seconds since the epoch); RFC 9110 §5.6.7 IMF-fixdate.
SF_DATE = re.compile(r"^@(-?\d{1,15})$")
IMF_FIXDATE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$")


@pytest.mark.parametrize(
    "configured_sunset", ["2027-06-30", "2027-06-30T12:00:00+02:00", "Wed, 30 Jun 2027 00:00:00 GMT"]
)
async def test_rest_deprecation_and_sunset_are_dates(api: Api, configured_sunset: str) -> None:
    api.http._transport.app.state.settings.legacy_sunset = configured_sunset  # type: ignore[attr-defined]
    for path in ("/api/v1/reports", f"/api/v1/reports/{uuid.uuid4()}"):
        resp = await api.get(path)
        match = SF_DATE.fullmatch(resp.headers["deprecation"])
        assert match, resp.headers["deprecation"]
        deprecated = datetime.fromtimestamp(int(match.group(1)), UTC)
        assert IMF_FIXDATE.fullmatch(resp.headers["sunset"]), resp.headers["sunset"]
        sunset = parsedate_to_datetime(resp.headers["sunset"])
        assert deprecated < sunset
    # GraphQL deprecates the same reports on the same day.
    body = await api.gql('{ __type(name: "Query") { fields(includeDeprecated: true) { name deprecationReason } } }')
    reasons = {f["name"]: f["deprecationReason"] for f in body["data"]["__type"]["fields"]}
    assert deprecation_day(reasons["legacyReports"]) == deprecated.date()
    assert deprecation_day(reasons["legacyReport"]) == deprecated.date()


@pytest.mark.parametrize("sunset", ["next year", "2027-13-01", "30/06/2027"])
def test_a_sunset_that_is_not_a_date_is_refused_at_start(settings: Settings, sunset: str) -> None:
    with pytest.raises(ValidationError, match="HTTP-date"):
        Settings(**{**settings.model_dump(), "legacy_sunset": sunset})
