"""The gateway as a PACT / iLEAP host system, black-box over HTTP (docs/ileap.md).

An organisation shares packs with data recipients; a recipient authenticates with its client
credentials (PACT §6.3) and reads ProductFootprints (PACT v2 and v3) and iLEAP Transport Activity
Data. The cases follow the specifications' test-case texts: PACT conformance TC 1–8, 12–16, 18–20
(v2 and v3) and iLEAP TC001–TC008. The mapped numbers are the mapping's tests' business; these
check ids, paging, scoping, authentication and errors.
"""

from __future__ import annotations

import base64
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from tests.conftest import Api
from tests.method_helpers import run_rows

ROWS = [
    {
        "external_id": "SHP-1",
        "mode": "road",
        "distance_km": 120,
        "mass_tonnes": 2,
        "origin": "Leeds",
        "destination": "Hull",
        "shipment_date": "2026-02-03",
    },  # fmt: skip
    {"external_id": "SHP-1", "mode": "sea", "distance_km": 9000, "mass_tonnes": 2, "distance_type": "sfd"},
    {"external_id": "SHP-2", "mode": "air", "distance_km": 800, "mass_tonnes": 0.25},
    {"external_id": "SHP-3", "mode": "rail", "distance_km": 300, "mass_tonnes": 10},
]


@dataclass
class Client:
    """A data recipient's side: its credentials and the HTTP client it calls the host with."""

    http: httpx.AsyncClient
    client_id: str
    client_secret: str
    recipient_id: str

    async def token_response(self, secret: str | None = None) -> httpx.Response:
        basic = base64.b64encode(f"{self.client_id}:{secret or self.client_secret}".encode()).decode()
        return await self.http.post(
            "/auth/token",
            content="grant_type=client_credentials",
            headers={"Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"},
        )

    async def token(self) -> str:
        resp = await self.token_response()
        assert resp.status_code == 200, resp.text
        value: str = resp.json()["access_token"]
        return value

    async def get(self, path: str, token: str | None = None, **kw: Any) -> httpx.Response:
        bearer = token if token is not None else await self.token()
        return await self.http.get(path, headers={"Authorization": f"Bearer {bearer}"}, **kw)


async def published_pack(api: Api, rows: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    ws, _ = await run_rows(api, rows or ROWS, reporting_period_start="2026-01-01", reporting_period_end="2026-03-31")
    resp = await api.post(f"/api/v2/workspaces/{ws['id']}/packs", {})
    assert resp.status_code == 201, resp.text
    pack: dict[str, Any] = resp.json()["data"]
    return pack


async def recipient(api: Api, name: str = "Customer GmbH") -> Client:
    resp = await api.post("/api/sharing/recipients", {"name": name})
    assert resp.status_code == 201, resp.text
    body = resp.json()["data"]
    return Client(api.http, body["client_id"], body["client_secret"], body["id"])


async def publish(api: Api, client: Client, pack: dict[str, Any]) -> dict[str, Any]:
    resp = await api.post("/api/sharing/publications", {"recipient_id": client.recipient_id, "pack_id": pack["id"]})
    assert resp.status_code == 201, resp.text
    data: dict[str, Any] = resp.json()["data"]
    return data


def shift_clock(app: Starlette, seconds: float) -> None:
    """The host's token clock moved on (a token expires without the test waiting for it)."""
    app.state.exchange_keys.clock = lambda: time.time() + seconds


@pytest.fixture
async def shared(api: Api) -> tuple[Client, dict[str, Any]]:
    """Organisation A's pack published to one recipient."""
    pack = await published_pack(api)
    client = await recipient(api)
    await publish(api, client, pack)
    return client, pack


def pact_error(resp: httpx.Response, status: int, code: str) -> None:
    """Exactly the specifications' error body: ``{"code", "message"}``, JSON, the given status."""
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert set(body) == {"code", "message"} and body["code"] == code and body["message"]


async def all_pages(client: Client, token: str, url: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    while url:
        resp = await client.get(url, token)
        assert resp.status_code == 200, resp.text
        items += resp.json()["data"]
        link = resp.links.get("next")
        url = link["url"] if link else ""
    return items


# ---- PACT §6.3 authentication (PACT TC 1, 2, 18, 19) -------------------------------------------


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_tc1_a_token_for_valid_credentials_is_a_jwt_the_published_keys_verify(
    shared: tuple[Client, dict[str, Any]],
) -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    client, _ = shared
    resp = await client.token_response()
    assert resp.status_code == 200 and resp.headers["cache-control"] == "no-store"
    body = resp.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    head, payload, signature = body["access_token"].split(".")
    header = httpx.Response(200, content=_unb64(head)).json()
    claims = httpx.Response(200, content=_unb64(payload)).json()
    assert header["alg"] == "RS256" and claims["exp"] - claims["iat"] == 3600 and claims["sub"] == client.client_id
    jwks = (await client.http.get("/.well-known/jwks.json")).json()
    (jwk,) = [k for k in jwks["keys"] if k["kid"] == header["kid"]]
    numbers = rsa.RSAPublicNumbers(int.from_bytes(_unb64(jwk["e"])), int.from_bytes(_unb64(jwk["n"])))
    numbers.public_key().verify(
        _unb64(signature), f"{head}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256()
    )  # raises if the token was not signed by the published key


async def test_tc18_openid_discovery_names_the_token_endpoint_and_keys(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    config = (await client.http.get("/.well-known/openid-configuration")).json()
    assert config["token_endpoint"] == "http://testserver/auth/token"
    assert config["jwks_uri"] == "http://testserver/.well-known/jwks.json"
    assert "client_credentials" in config["grant_types_supported"]
    assert (await client.http.get(config["jwks_uri"])).json()["keys"][0]["kty"] == "RSA"


@pytest.mark.parametrize("case", ["wrong secret", "unknown client", "malformed secret", "no credentials", "not basic"])
async def test_tc2_tc19_invalid_credentials_get_no_token(shared: tuple[Client, dict[str, Any]], case: str) -> None:
    client, _ = shared
    user, secret = client.client_id, client.client_secret
    if case == "wrong secret":
        secret = "evcs_" + "0" * 48
    elif case == "unknown client":
        user = "evci_" + "0" * 24
    elif case == "malformed secret":
        secret = "hunter2"
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if case == "not basic":
        headers["Authorization"] = f"Bearer {secret}"
    elif case != "no credentials":
        headers["Authorization"] = "Basic " + base64.b64encode(f"{user}:{secret}".encode()).decode()
    resp = await client.http.post("/auth/token", content="grant_type=client_credentials", headers=headers)
    assert resp.status_code == 401 and resp.headers["www-authenticate"].startswith("Basic")
    assert resp.json()["error"] == "invalid_client" and "access_token" not in resp.json()


async def test_token_requests_follow_rfc6749(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    basic = "Basic " + base64.b64encode(f"{client.client_id}:{client.client_secret}".encode()).decode()
    form = {"Authorization": basic, "Content-Type": "application/x-www-form-urlencoded"}
    wrong_grant = await client.http.post("/auth/token", content="grant_type=password", headers=form)
    assert (wrong_grant.status_code, wrong_grant.json()["error"]) == (400, "unsupported_grant_type")
    no_grant = await client.http.post("/auth/token", content="", headers=form)
    assert (no_grant.status_code, no_grant.json()["error"]) == (400, "invalid_request")
    as_json = await client.http.post(
        "/auth/token", json={"grant_type": "client_credentials"}, headers={"Authorization": basic}
    )
    assert (as_json.status_code, as_json.json()["error"]) == (400, "invalid_request")
    # RFC 6749 §2.3.1 also lets a client post its credentials in the form.
    posted = await client.http.post(
        "/auth/token",
        data={"grant_type": "client_credentials", "client_id": client.client_id, "client_secret": client.client_secret},
    )
    assert posted.status_code == 200 and posted.json()["access_token"]


# ---- PACT ListFootprints / GetFootprint (TC 3–8, 20) --------------------------------------------


async def test_tc4_tc3_list_and_get_every_footprint_on_both_majors(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    token = await client.token()
    for major in ("2", "3"):
        resp = await client.get(f"/{major}/footprints", token)
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("application/json")
        listed = resp.json()["data"]
        assert listed and "link" not in resp.headers
        ids = [f["id"] for f in listed]
        assert len(set(ids)) == len(ids) and all(uuid.UUID(i) for i in ids)
        assert all(f["productIds"] for f in listed)
        for footprint in listed:
            got = await client.get(f"/{major}/footprints/{footprint['id']}", token)
            assert got.status_code == 200 and got.json() == {"data": footprint}
    v2 = (await client.get("/2/footprints", token)).json()["data"]
    v3 = (await client.get("/3/footprints", token)).json()["data"]
    assert [f["id"] for f in v2] == [f["id"] for f in v3]  # the same records on both majors


@pytest.mark.parametrize("major", ["2", "3"])
async def test_tc5_pagination_links_are_absolute_on_the_request_host_and_repeatable(
    shared: tuple[Client, dict[str, Any]], major: str
) -> None:
    client, _ = shared
    token = await client.token()
    everything = (await client.get(f"/{major}/footprints", token)).json()["data"]
    first = await client.get(f"/{major}/footprints?limit=1", token)
    assert len(first.json()["data"]) == 1
    link = first.links["next"]
    assert link["rel"] == "next" and link["url"].startswith("http://testserver/")
    again = await client.get(link["url"], token)
    assert again.json() == (await client.get(link["url"], token)).json()  # a link may be called twice
    assert await all_pages(client, token, f"/{major}/footprints?limit=2") == everything
    assert len((await client.get(f"/{major}/footprints?limit=2", token)).json()["data"]) == 2


@pytest.mark.parametrize("limit", ["0", "-1", "two", "1.5"])
async def test_a_limit_that_is_not_a_positive_integer_is_a_bad_request(
    shared: tuple[Client, dict[str, Any]], limit: str
) -> None:
    client, _ = shared
    token = await client.token()
    for path in ("/2/footprints", "/3/footprints", "/2/ileap/tad"):
        pact_error(await client.get(f"{path}?limit={limit}", token), 400, "BadRequest")


@pytest.mark.parametrize("path", ["/2/footprints", "/3/footprints", "/2/footprints/{id}", "/3/footprints/{id}"])
async def test_tc6_tc7_an_invalid_token_is_a_bad_request(shared: tuple[Client, dict[str, Any]], path: str) -> None:
    client, _ = shared
    path = path.format(id=uuid.uuid4())
    pact_error(await client.get(path, "invalid-access-token"), 400, "BadRequest")
    forged = (await client.token())[:-4] + "AAAA"
    pact_error(await client.get(path, forged), 400, "BadRequest")
    pact_error(await client.http.get(path), 400, "BadRequest")  # no Authorization at all


async def test_tc8_an_unknown_footprint_is_not_found_in_each_major_s_words(
    shared: tuple[Client, dict[str, Any]],
) -> None:
    client, _ = shared
    token = await client.token()
    for ref in (str(uuid.uuid4()), "non-existent-id"):
        pact_error(await client.get(f"/2/footprints/{ref}", token), 404, "NoSuchFootprint")
        pact_error(await client.get(f"/3/footprints/{ref}", token), 404, "NotFound")


async def test_an_expired_token_is_refused_with_401(app: Starlette, shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    token = await client.token()
    shift_clock(app, 3601)
    for path in ("/2/footprints", "/3/footprints", f"/2/footprints/{uuid.uuid4()}"):
        pact_error(await client.get(path, token), 401, "TokenExpired")
    resp = await client.http.post("/2/events", json=PUBLISHED_V2, headers={"Authorization": f"Bearer {token}"})
    pact_error(resp, 401, "TokenExpired")
    shift_clock(app, 0)
    assert (await client.get("/2/footprints", await client.token())).status_code == 200  # a new token works


async def test_tc20_filter_as_pact_v2_defines_it(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    token = await client.token()
    everything = (await client.get("/2/footprints", token)).json()["data"]
    one = everything[0]
    product = one["productIds"][0]
    chosen = await client.get("/2/footprints", token, params={"$filter": f"productIds/any(p:(p eq '{product}'))"})
    assert chosen.status_code == 200 and [f["id"] for f in chosen.json()["data"]] == [
        f["id"] for f in everything if product in f["productIds"]
    ]
    created = one["created"]
    since = await client.get("/2/footprints", token, params={"$filter": f"created ge '{created}'"})
    assert len(since.json()["data"]) == len(everything)
    later = await client.get("/2/footprints", token, params={"$filter": "(created gt '2999-01-01T00:00:00Z')"})
    assert later.json()["data"] == []
    both = f"created le '{created}' and productIds/any(p:(p eq '{product}'))"
    assert (await client.get("/2/footprints", token, params={"$filter": both})).json()["data"] == chosen.json()["data"]
    pact_error(
        await client.get(
            "/2/footprints", token, params={"$filter": f"created ge '{created}' or created lt '{created}'"}
        ),
        400,
        "NotImplemented",
    )  # noqa: E501
    pact_error(
        await client.get("/2/footprints", token, params={"$filter": "productNameCompany eq 'x'"}), 400, "NotImplemented"
    )  # noqa: E501
    pact_error(await client.get("/2/footprints", token, params={"$filter": "created ge"}), 400, "BadRequest")


async def test_v3_criteria_filter_and_v2_filter_syntax_is_not_v3_s(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    token = await client.token()
    everything = (await client.get("/3/footprints", token)).json()["data"]
    product = everything[-1]["productIds"][0]
    chosen = (await client.get("/3/footprints", token, params={"productId": product})).json()["data"]
    assert chosen and all(product in f["productIds"] for f in chosen)
    none = (await client.get("/3/footprints", token, params={"productId": "urn:null"})).json()["data"]
    assert none == []
    pact_error(await client.get("/3/footprints", token, params={"$filter": "created ge 'x'"}), 400, "NotImplemented")


async def test_v3_criteria_as_the_v3_conformance_cases_read_them(shared: tuple[Client, dict[str, Any]]) -> None:
    """v3 conformance TC 22, 25, 26, 34 and 37: an empty criterion is none; a footprint without a
    validity period is valid for three years from its reference period's end (PACT v3); a status
    no footprint has matches nothing (200, an empty list)."""
    client, _ = shared
    token = await client.token()
    everything = (await client.get("/3/footprints", token, params={"limit": 100})).json()["data"]
    first = everything[0]
    assert "validityPeriodStart" not in first  # the default applies
    end = datetime.fromisoformat(first["pcf"]["referencePeriodEnd"].replace("Z", "+00:00"))

    async def listed(**params: str) -> list[dict[str, Any]]:
        resp = await client.get("/3/footprints", token, params={"limit": "100", **params})
        assert resp.status_code == 200, resp.text
        found: list[dict[str, Any]] = resp.json()["data"]
        return found

    assert len(await listed(geography="")) == len(everything)  # TC 22 with no geography on the footprints
    day = timedelta(days=1)
    stamp = lambda t: t.isoformat().replace("+00:00", "Z")  # noqa: E731
    assert first in await listed(validOn=stamp(end))  # TC 24
    assert first in await listed(validAfter=stamp(end - day))  # TC 25
    assert first in await listed(validBefore=stamp(end.replace(year=end.year + 3) + day))  # TC 26
    assert first not in await listed(validBefore=stamp(end.replace(year=end.year + 3) - day))
    assert await listed(validOn="1900-01-01T00:00:00Z") == []  # TC 34
    assert await listed(status="BogusStatus") == []  # TC 37
    assert len(await listed(status="Active")) == len(everything)


# ---- Action Events (PACT v2 TC 12–16 and 21, v3 TC 12–16) -------------------------------------

PUBLISHED_V2 = {
    "type": "org.wbcsd.pathfinder.ProductFootprint.Published.v1",
    "specversion": "1.0",
    "id": "123e4567-e89b-12d3-a456-426614174000",
    "source": "https://webhook.example.com",
    "time": "2023-05-19T11:30:00Z",
    "data": {"pfIds": ["3a6c14a7-4deb-498a-b5ea-16ce2535b576"]},  # TC 15
}
V2_EVENTS = [
    PUBLISHED_V2,
    {**PUBLISHED_V2, "type": "org.wbcsd.pathfinder.ProductFootprintRequest.Created.v1", "id": "test-run-id-12345",
     "data": {"pf": {"productIds": ["urn:gtin:1234567890123"]}, "comment": "Please send PCF data for this year."}},
    {**PUBLISHED_V2, "type": "org.wbcsd.pathfinder.ProductFootprintRequest.Fulfilled.v1",
     "data": {"requestEventId": "test-run-id-12345", "pfs": []}},
    {**PUBLISHED_V2, "type": "org.wbcsd.pathfinder.ProductFootprintRequest.Rejected.v1",
     "data": {"requestEventId": "test-run-id-12345", "error": {"code": "NotFound", "message": "not found"}}},
]  # fmt: skip
V3_EVENTS = [
    {**PUBLISHED_V2, "type": "org.wbcsd.pact.ProductFootprint.PublishedEvent.3"},
    {**PUBLISHED_V2, "type": "org.wbcsd.pact.ProductFootprint.RequestCreatedEvent.3", "id": "test-run-id-12345",
     "data": {"productId": ["urn:gtin:1234567890123"], "comment": "Please send PCF data for this year."}},
    {**PUBLISHED_V2, "type": "org.wbcsd.pact.ProductFootprint.RequestFulfilledEvent.3",
     "data": {"requestEventId": "test-run-id-12345", "pfs": []}},
    {**PUBLISHED_V2, "type": "org.wbcsd.pact.ProductFootprint.RequestRejectedEvent.3",
     "data": {"requestEventId": "test-run-id-12345", "error": {"code": "ExpiredToken", "message": "expired"}}},
]  # fmt: skip
CLOUDEVENTS = "application/cloudevents+json; charset=UTF-8"


async def post_event(client: Client, major: str, event: Any, token: str) -> httpx.Response:
    return await client.http.post(
        f"/{major}/events",
        content=httpx.Request("POST", "/", json=event).content,
        headers={"Authorization": f"Bearer {token}", "Content-Type": CLOUDEVENTS},
    )


@pytest.mark.parametrize(("major", "events"), [("2", V2_EVENTS), ("3", V3_EVENTS)])
async def test_events_the_spec_defines_are_accepted_with_an_empty_200(
    shared: tuple[Client, dict[str, Any]], major: str, events: list[dict[str, Any]]
) -> None:
    client, _ = shared
    token = await client.token()
    for event in events:
        resp = await post_event(client, major, event, token)
        assert (resp.status_code, resp.content) == (200, b""), (event["type"], resp.text)


@pytest.mark.parametrize("major", ["2", "3"])
async def test_events_refused_as_the_spec_says(shared: tuple[Client, dict[str, Any]], major: str) -> None:
    client, _ = shared
    token = await client.token()
    event = V2_EVENTS[0] if major == "2" else V3_EVENTS[0]
    pact_error(await post_event(client, major, event, "invalid-access-token"), 400, "BadRequest")  # TC16
    for broken in (
        {k: v for k, v in event.items() if k != "specversion"},
        {**event, "data": {"pfIds": []}},
        {**event, "data": {"pfIds": ["urn:gtin:4712345060507"]}},  # TC 21: pfIds are UUIDs
        {**event, "id": ""},
        [event],
    ):
        pact_error(await post_event(client, major, broken, token), 400, "BadRequest")
    other = V3_EVENTS[0] if major == "2" else V2_EVENTS[0]
    pact_error(await post_event(client, major, other, token), 400, "NotImplemented")
    as_text = await client.http.post(
        f"/{major}/events", content=b"{}", headers={"Authorization": f"Bearer {token}", "Content-Type": "text/plain"}
    )
    pact_error(as_text, 400, "BadRequest")


# ---- iLEAP TC001–TC008 -------------------------------------------------------------------------

URN = "urn:pathfinder:product:customcode:"


async def test_ileap_tc001_to_tc003_footprints_carry_shipments_and_the_tocs_and_hocs_they_use(
    shared: tuple[Client, dict[str, Any]],
) -> None:
    client, _ = shared
    resp = await client.get("/2/footprints")
    assert resp.status_code == 200
    listed = resp.json()["data"]
    products = [p for f in listed for p in f["productIds"]]
    assert products and all(p.startswith(URN) for p in products)
    assert len(listed) >= 3  # three shipments at least, and the operation categories they name


async def test_ileap_tc004_all_transport_activity_data(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    resp = await client.get("/2/ileap/tad")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("application/json")
    rows = resp.json()["data"]
    assert rows and len({r["activityId"] for r in rows}) == len(rows)
    # Places and date come from the pack's own rows (its shipment CSV), not placeholders.
    road = next(r for r in rows if r["mode"] == "Road")
    assert (road["origin"]["city"], road["destination"]["city"]) == ("Leeds", "Hull")
    assert road["departureAt"].startswith("2026-02-03")


async def test_ileap_tc005_filtered_transport_activity_data(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    token = await client.token()
    everything = (await client.get("/2/ileap/tad", token)).json()["data"]
    seen = 0
    for mode in ("Road", "Rail", "Air", "Sea", "InlandWaterway"):
        resp = await client.get(f"/2/ileap/tad?mode={mode}", token)
        assert resp.status_code == 200
        rows = resp.json()["data"]
        assert all(r["mode"] == mode for r in rows) and all(r in everything for r in rows)
        seen += len(rows)
    assert seen == len(everything)  # mode is mandatory: each row has one
    lower = (await client.get("/2/ileap/tad?mode=road", token)).json()["data"]
    assert lower == (await client.get("/2/ileap/tad?mode=Road", token)).json()["data"] != []  # values ignore case
    both = await client.get("/2/ileap/tad?mode=Road&mode=Air", token)
    assert both.json()["data"] == []  # concatenated pairs must all hold


async def test_ileap_tc006_a_limited_list_pages_with_next_links(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    token = await client.token()
    everything = (await client.get("/2/ileap/tad", token)).json()["data"]
    first = await client.get("/2/ileap/tad?limit=1", token)
    assert first.status_code == 200 and len(first.json()["data"]) == 1
    link = first.links["next"]["url"]
    assert link.startswith("http://testserver/2/ileap/tad?")
    following = await client.get(link, token)
    assert following.status_code == 200 and len(following.json()["data"]) == 1
    assert await all_pages(client, token, "/2/ileap/tad?limit=1") == everything
    filtered = await all_pages(client, token, "/2/ileap/tad?mode=Road&limit=1")  # the filter stays in the link
    assert filtered == [r for r in everything if r["mode"] == "Road"]


async def test_ileap_tc007_an_invalid_token_is_access_denied(shared: tuple[Client, dict[str, Any]]) -> None:
    client, _ = shared
    pact_error(await client.get("/2/ileap/tad", "invalid-access-token"), 403, "AccessDenied")
    pact_error(await client.get("/2/ileap/tad", (await client.token())[:-4] + "AAAA"), 403, "AccessDenied")
    pact_error(await client.http.get("/2/ileap/tad"), 400, "BadRequest")  # no Authorization header


async def test_ileap_tc008_an_expired_token_is_expired_token(
    app: Starlette, shared: tuple[Client, dict[str, Any]]
) -> None:
    client, _ = shared
    token = await client.token()
    shift_clock(app, 7200)
    pact_error(await client.get("/2/ileap/tad", token), 401, "ExpiredToken")
