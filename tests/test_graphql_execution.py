"""The executor's shortcuts for plain leaf fields (schema/execution.py) answer exactly what
graphql-core's own path answers: data, errors, their paths and locations."""

from __future__ import annotations

from typing import Any

import pytest
import strawberry
from strawberry.extensions import ParserCache
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from evidence_gateway.schema import schema
from evidence_gateway.schema.execution import PlainLeaves
from tests.conftest import Api, create_workspace, gql_answer

ROW = {"external_id": "S-1", "mode": "road", "distance_km": 420, "mass_tonnes": 12}

DOCUMENTS = [
    # A page of plain leaves, with an alias, __typename and an enum.
    """{ workspaces(perPage: 5) { items { id orgId name externalReference reportingPeriodStart
         reportingPeriodEnd status defaultMethodologyProfileId latestCalculationRunId latestReportPackId
         archivedAt createdAt updatedAt dataVersion label: name __typename } pagination { page perPage total } } }""",
    # Leaves beside relations and through fragments.
    """fragment W on Workspace { id status latestPack { id status version: versionNumber artifacts { artifactType } } }
       query { workspaces { items { ...W ... on Workspace { name latestCalculationRun { id status } }
         latestQualityAssessment { id } imports { id shipmentCount } } } }""",
    # A page's relations held for the page (prefetched), made only of leaves: answered by the executor.
    """{ workspaces { items { id latestCalculationRun { id status __typename } latestPack { id versionNumber }
         latestQualityAssessment { id } } } }""",
    # A lookup, a connection, and errors inside the selection (a bad argument on a nested field).
    """query($id: UUID!) { workspace(id: $id) { id name packsConnection(first: 2) { nodes { id } pageInfo {
         hasNextPage } } } missing: workspace(id: "00000000-0000-4000-8000-000000000000") { id } }""",
    """query($id: UUID!) { bad: workspace(id: $id) { id packsConnection(first: -1) { nodes { id } } }
         workspaces { items { id name } } }""",
]


async def _answers(api: Api, workspace_id: str) -> list[dict[str, Any]]:
    """Without what differs from call to call: the response extensions (the rate budget left)
    and each error's request id."""
    out = []
    for doc in DOCUMENTS:
        body = gql_answer(await api.gql(doc, {"id": workspace_id} if "$id" in doc else None))
        for error in body.get("errors", []):
            error["extensions"].pop("request_id")
        out.append(body)
    return out


async def test_shortcuts_answer_what_graphql_core_answers(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = await create_workspace(api, name="full", external_reference="EXT-1")
    base = f"/api/v2/workspaces/{ws['id']}"
    assert (await api.post(f"{base}/imports", {"source_row_count": 1, "shipments": [ROW]})).status_code == 201
    assert (await api.post(f"{base}/calculate", {})).status_code == 200
    assert (await api.post(f"{base}/packs", {})).status_code == 201
    await create_workspace(api, name="bare")

    ours = await _answers(api, ws["id"])
    monkeypatch.setattr(schema, "execution_context_class", StrawberryGraphQLCoreExecutionContext)
    theirs = await _answers(api, ws["id"])

    assert ours == theirs
    # The documents exercise what they should: leaves, relations, and a field error.
    assert ours[0]["data"]["workspaces"]["items"][1]["label"] == "full"
    assert ours[1]["data"]["workspaces"]["items"][1]["latestPack"]["artifacts"]
    assert ours[2]["data"]["workspaces"]["items"][1]["latestPack"]["versionNumber"] == 1
    assert ours[2]["data"]["workspaces"]["items"][0]["latestPack"] is None
    assert ours[4]["errors"][0]["path"] == ["bad", "packsConnection"] and ours[4]["data"]["bad"] is None
    assert ours[4]["data"]["workspaces"]["items"]


@strawberry.interface
class Named:
    name: str


@strawberry.type
class Item(Named):  # an interface gives the type an is_type_of check, as Node does ours
    size: int | None


@strawberry.type
class Other:
    name: str


@strawberry.type
class ListQuery:
    """Lists of leaf objects, fine and not: values a resolver of ours would never hand back."""

    @strawberry.field
    def fine(self) -> list[Item]:
        return [Item(name="a", size=1), Item(name="c", size=None)]

    @strawberry.field
    def broken(self) -> list[Item]:
        return [Item(name="a", size=1), Item(name=None, size=2), Item(name="c", size=None)]  # type: ignore[arg-type]

    @strawberry.field
    def refused(self) -> list[Item]:
        return [Item(name="a", size=1), Item(name="b", size="many")]  # type: ignore[arg-type]

    @strawberry.field
    def wrong(self) -> list[Item]:
        return [Item(name="a", size=1), Other(name="b")]  # type: ignore[list-item]


@strawberry.type
class Meta:
    total: int


@strawberry.type
class Page:
    """A page as ours are: plain fields holding a list of objects and objects."""

    items: list[Item]
    meta: Meta
    extra: Meta | None
    more: list[Item] | None


@strawberry.type
class PageQuery(ListQuery):
    @strawberry.field
    def page(self) -> Page:
        return Page(
            items=[Item(name="a", size=1), Item(name="b", size=None)], meta=Meta(total=2), extra=None, more=None
        )

    @strawberry.field
    def full_page(self) -> Page:
        return Page(items=[], meta=Meta(total=0), extra=Meta(total=1), more=[Item(name="m", size=3)])

    @strawberry.field
    def broken_page(self) -> Page:
        items = [Item(name="a", size=1), Item(name=None, size=2)]  # type: ignore[arg-type]
        return Page(items=items, meta=Meta(total="x"), extra=Meta(total=None), more=None)  # type: ignore[arg-type]

    @strawberry.field
    def odd_page(self) -> Page:
        return Page(items=(Item(name="t", size=1),), meta=None, extra=Other(name="o"), more=5)  # type: ignore[arg-type]


PAGE_DOCUMENTS = [
    "{ page { items { name size __typename } meta { total } extra { total } more { name } __typename } }",
    "{ fullPage { items { name } meta { total } extra { total } more { name size } } }",
    "{ brokenPage { items { name } } page { meta { total } } }",
    "{ brokenPage { meta { total } } }",
    "{ brokenPage { extra { total } items { size } } }",
    "{ oddPage { items { name } } }",
    "{ oddPage { meta { total } } }",
    "{ oddPage { extra { total } } }",
    "{ oddPage { more { name } } }",
    "query($x: Boolean!) { page { items { name size @include(if: $x) } meta { total @skip(if: $x) } } }",
    "query($x: Boolean!) { page { items { ... on Item @include(if: $x) { size } name } meta { ...M } } }"
    " fragment M on Meta { total @include(if: $x) }",
    "query($x: Boolean!) { page { items @include(if: $x) { name } meta { total } } }",
]


def test_a_page_of_plain_fields_answers_as_graphql_core_does() -> None:
    """A page object whose fields are plain (a list of leaf objects, objects of leaves) is
    completed in one walk, its selection's plan kept across requests of one parsed document;
    anything that needs an error, and selections whose directives depend on the variables,
    answer exactly what graphql-core answers, whatever the variables of the request before."""
    ours = strawberry.Schema(PageQuery, execution_context_class=PlainLeaves, extensions=[ParserCache])
    theirs = strawberry.Schema(PageQuery)
    for doc in PAGE_DOCUMENTS:
        for x in (True, False, True, False):
            variables = {"x": x} if "$x" in doc else None
            mine, core = ours.execute_sync(doc, variables), theirs.execute_sync(doc, variables)
            assert mine.data == core.data, (doc, x)
            assert [e.formatted for e in mine.errors or []] == [e.formatted for e in core.errors or []], (doc, x)
    assert ours.execute_sync(PAGE_DOCUMENTS[0]).data == {
        "page": {
            "items": [
                {"name": "a", "size": 1, "__typename": "Item"},
                {"name": "b", "size": None, "__typename": "Item"},
            ],
            "meta": {"total": 2},
            "extra": None,
            "more": None,
            "__typename": "Page",
        }
    }
    assert ours.execute_sync(PAGE_DOCUMENTS[-3], {"x": False}).data == {
        "page": {"items": [{"name": "a"}, {"name": "b"}], "meta": {"total": 2}}
    }


def test_a_list_item_that_needs_an_error_answers_as_graphql_core_does() -> None:
    """A page of leaf objects is completed in one loop; an item that needs an error (a null in a
    non-null field, a value its scalar refuses, an item of the wrong type) sends the list back to
    graphql-core's path, so the error, its path and the nulls around it are graphql-core's."""
    ours = strawberry.Schema(ListQuery, execution_context_class=PlainLeaves)
    theirs = strawberry.Schema(ListQuery)
    for doc in (
        "{ fine { name size __typename } }",
        "{ broken { name size } fine { name } }",
        "{ broken { size } }",
        "{ refused { name size } }",
        "{ wrong { name } }",
    ):
        mine, core = ours.execute_sync(doc), theirs.execute_sync(doc)
        assert mine.data == core.data, doc
        assert [e.formatted for e in mine.errors or []] == [e.formatted for e in core.errors or []], doc
    assert ours.execute_sync("{ fine { name size __typename } }").data == {
        "fine": [{"name": "a", "size": 1, "__typename": "Item"}, {"name": "c", "size": None, "__typename": "Item"}]
    }
    assert ours.execute_sync("{ broken { name } }").errors
