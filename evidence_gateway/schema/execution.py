"""Plain leaf fields, and objects made only of them, resolved without graphql-core's per-field
machinery.

A page of 20 workspaces with 13 fields each is about 270 field executions. For each one,
graphql-core builds a resolve info, asks the middleware for a resolver, and Strawberry's default
resolver, the awaitable checks and ``complete_value`` each take a turn; that was most of a
GraphQL list's cost (bench/layers.py, docs/performance.md). For a field that has no resolver, no
arguments and a scalar or enum type, all of it comes down to reading one attribute and
serialising it with the type's own ``coerce_output_value``: that is what this executor does, field
by field, or for a whole object when every field it selects is such a leaf. A field without a
resolver whose value is an object or a list of objects made so (a page's ``items`` and
``pagination``) is walked the same way, so a page comes out of one walk. Anything else
(a resolver, arguments, a middleware, a null in a non-null field, a value the scalar refuses)
takes graphql-core's path, so errors and their locations are exactly what they were. A
selection's plan is kept across requests of one document (schema/document_rows.py).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TypeVar, cast

from graphql import (
    GraphQLField,
    GraphQLLeafType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLResolveInfo,
    is_leaf_type,
)
from graphql.pyutils import Path, Undefined
from strawberry.execution.is_awaitable import optimized_is_awaitable as _is_awaitable
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

from evidence_gateway.schema import document_rows
from evidence_gateway.schema.async_helpers import weak_helpers
from evidence_gateway.schema.context import NOT_HELD, RELATION, Relation

# (python attribute name, leaf type, nullable), or None when the field is not a plain leaf.
_Plan = tuple[str, GraphQLLeafType, bool] | None
_MISSING = object()
T = TypeVar("T")
# Strawberry's is_type_of reads only the object; a relation answered here has no resolve info.
_NO_INFO: Any = None
_PLAN = "_evidence_leaf_plan"  # kept on the field definition itself: fields live as long as their schema


def _kept(field_def: GraphQLField, key: str, build: Callable[[GraphQLField], T]) -> T:
    """``build(field_def)``, worked out once and kept on the field definition."""
    held = field_def.__dict__.get(key, _MISSING)
    if held is _MISSING:
        held = field_def.__dict__[key] = build(field_def)
    return cast(T, held)


def _unwrapped(field_def: GraphQLField) -> tuple[Any, bool]:
    """The field's type without its non-null wrapper, and whether it may be null."""
    if isinstance(field_def.type, GraphQLNonNull):
        return field_def.type.of_type, False
    return field_def.type, True


def _plan(field_def: GraphQLField) -> _Plan:
    return _kept(field_def, _PLAN, _leaf_plan)


def _leaf_plan(field_def: GraphQLField) -> _Plan:
    strawberry_field = (field_def.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if strawberry_field is None or not getattr(field_def.resolve, "_is_default", False) or field_def.args:
        return None
    leaf, nullable = _unwrapped(field_def)
    return (strawberry_field.python_name, leaf, nullable) if is_leaf_type(leaf) else None


# A to-one relation declared with schema.context.relation: (declaration, object type, nullable).
_RelationPlan = tuple[Relation, GraphQLObjectType, bool] | None
_RELATION_PLAN = "_evidence_relation_plan"


def _relation_plan(field_def: GraphQLField) -> _RelationPlan:
    return _kept(field_def, _RELATION_PLAN, _held_relation_plan)


def _held_relation_plan(field_def: GraphQLField) -> _RelationPlan:
    strawberry_field = (field_def.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    resolver = getattr(strawberry_field, "base_resolver", None)
    declared = getattr(getattr(resolver, "wrapped_func", None), RELATION, None)
    plain = strawberry_field is not None and not strawberry_field.extensions and not strawberry_field.permission_classes
    if not isinstance(declared, Relation) or not plain or field_def.args:
        return None
    target, nullable = _unwrapped(field_def)
    return (declared, target, nullable) if isinstance(target, GraphQLObjectType) else None


# A field without a resolver or arguments whose value is an object, or a list of non-null
# objects (a page's items and pagination): (_OBJECT or _LIST, python attribute, object type, nullable).
_OBJECT, _LIST = "object", "list"
_NestedPlan = tuple[str, str, GraphQLObjectType, bool] | None
_NESTED_PLAN = "_evidence_nested_plan"


def _nested_plan(field_def: GraphQLField) -> _NestedPlan:
    return _kept(field_def, _NESTED_PLAN, _held_nested_plan)


def _held_nested_plan(field_def: GraphQLField) -> _NestedPlan:
    strawberry_field = (field_def.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if strawberry_field is None or not getattr(field_def.resolve, "_is_default", False) or field_def.args:
        return None
    if strawberry_field.base_resolver is not None or strawberry_field.extensions:
        return None
    target, nullable = _unwrapped(field_def)
    if isinstance(target, GraphQLObjectType):
        return (_OBJECT, strawberry_field.python_name, target, nullable)
    if isinstance(target, GraphQLList) and isinstance(target.of_type, GraphQLNonNull):
        item = target.of_type.of_type
        if isinstance(item, GraphQLObjectType):
            return (_LIST, strawberry_field.python_name, item, nullable)
    return None


# (response name, attribute, type, nullable, None) for a leaf, no type for __typename;
# (response name, "", None, nullable, (relation, its object type, the object's own row)) for a
# relation whose record the request already holds; (response name, attribute, None, nullable,
# (_OBJECT or _LIST, its object type, the object's own row)) for a plain object or list of them.
_Entry = tuple[str, str, GraphQLLeafType | None, bool, tuple[Relation | str, GraphQLObjectType, Any] | None]
# A selection's row: per entry (response name, the leaf type's coercion or None, nullable, what
# is nested or None), and one call that reads every entry's attribute from an object (a
# placeholder every object has where an entry reads none), in the selection's order.
_Compiled = tuple[str, Callable[[Any], Any] | None, bool, tuple[Relation | str, GraphQLObjectType, Any] | None]
_Row = tuple[tuple[_Compiled, ...], Callable[[Any], tuple[Any, ...]]]
_NO_ATTRIBUTE = "__class__"


def _compiled(entries: Sequence[_Entry]) -> _Row:
    names = tuple(name or _NO_ATTRIBUTE for _, name, _, _, _ in entries)
    read: Callable[[Any], tuple[Any, ...]]
    if len(names) > 1:
        read = operator.attrgetter(*names)
    else:  # attrgetter answers a bare value for one name
        read = partial(_read_each, names)
    compiled = tuple(
        (response_name, None if leaf is None else leaf.coerce_output_value, nullable, nested)
        for response_name, _, leaf, nullable, nested in entries
    )
    return compiled, read


def _read_each(names: tuple[str, ...], source: Any) -> tuple[Any, ...]:
    return tuple(getattr(source, name) for name in names)


def _leaf_dict(row: _Row, parent_type: GraphQLObjectType, source: Any, context: Any) -> dict[str, Any] | None:
    """``source``'s result for a selection of plain leaves and held relations, or None where
    graphql-core must speak (a null in a non-null field, a value the scalar refuses, a record
    not read yet, an attribute the object lacks)."""
    entries, read = row
    try:
        values = read(source)
    except AttributeError:
        return None
    out: dict[str, Any] = {}
    for (response_name, coerce, nullable, nested), value in zip(entries, values, strict=True):
        if coerce is not None:
            if value is None:
                if not nullable:
                    return None
                out[response_name] = None
                continue
            try:
                coerced = coerce(value)
            except Exception:  # noqa: BLE001 - graphql-core's path reports it
                return None
            if coerced is None or coerced is Undefined:
                return None
            out[response_name] = coerced
        elif nested is None:
            out[response_name] = parent_type.name  # __typename
        else:
            kind = nested[0]
            if kind is _LIST or kind is _OBJECT:
                completed = _plain_value(kind, nested[1], nested[2], nullable, value, context)
            else:
                completed = _relation_dict(nested, nullable, source, context)  # type: ignore[arg-type]
            if completed is _MISSING:
                return None
            out[response_name] = completed
    return out


def _relation_dict(nested: tuple[Relation, GraphQLObjectType, Any], nullable: bool, source: Any, context: Any) -> Any:
    """What the relation's resolver would answer, completed; ``_MISSING`` where it cannot be
    answered here. Same steps as ``schema.context.relation``'s resolver."""
    declared, object_type, inner = nested
    key = getattr(source, declared.key, None)
    value = None
    if key is not None:
        found = context.held(declared.batch, key)
        if found is NOT_HELD:
            return _MISSING
        value = declared.convert(found)
    if value is None:
        return None if nullable else _MISSING
    if object_type.is_type_of is not None and object_type.is_type_of(value, _NO_INFO) is not True:
        return _MISSING
    completed = _leaf_dict(inner, object_type, value, context)
    return _MISSING if completed is None else completed


def _plain_value(kind: str, object_type: GraphQLObjectType, row: _Row, nullable: bool, value: Any, context: Any) -> Any:
    """A plain object field's or list field's result, completed; ``_MISSING`` where graphql-core
    must speak (a null where none may be, a value of another type, anything but a list or tuple)."""
    if value is None:
        return None if nullable else _MISSING
    if kind is _LIST:
        if not isinstance(value, list | tuple):
            return _MISSING
        items = _leaf_list(row, object_type, value, _NO_INFO, context, _is_awaitable)
        return _MISSING if items is None else items
    if value is _MISSING or (
        object_type.is_type_of is not None and object_type.is_type_of(value, _NO_INFO) is not True
    ):
        return _MISSING
    completed = _leaf_dict(row, object_type, value, context)
    return _MISSING if completed is None else completed


def _leaf_list(
    row: _Row,
    object_type: GraphQLObjectType,
    items: Sequence[Any],
    info: Any,  # the list's resolve info, or None inside a walk (is_type_of reads only the object)
    context: Any,
    is_awaitable: Any,
) -> list[dict[str, Any]] | None:
    is_type_of = object_type.is_type_of
    out = []
    for item in items:
        if item is None or is_awaitable(item):
            return None
        if is_type_of is not None and is_type_of(item, info) is not True:
            return None
        completed = _leaf_dict(row, object_type, item, context)
        if completed is None:
            return None
        out.append(completed)
    return out


class PlainLeaves(StrawberryGraphQLCoreExecutionContext):
    _leaf_objects: dict[int, tuple[Any, _Row | None]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.async_helpers = weak_helpers(self)  # no reference cycle per request (async_helpers.py)

    def __copy__(self) -> PlainLeaves:
        """graphql-core's sub-executors (deferred parts, subscription events) are shallow copies;
        each gets helpers of its own, so none depends on its parent outliving it."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone.async_helpers = weak_helpers(clone)
        return clone

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: Any,
        position_context: Any,
    ) -> Any:
        """An object whose selection is plain leaves only (a list's items, typically) becomes its
        result dict in one loop; graphql-core hands every item of a list the same field set."""
        row = self._leaf_object(parent_type, grouped_field_set)
        if row is not None:
            out = _leaf_dict(row, parent_type, source_value, self.context_value)
            if out is not None:
                return out
        return super().execute_fields(parent_type, source_value, path, grouped_field_set, position_context)

    def complete_iterable_value(
        self,
        item_type: Any,
        field_details_list: Any,
        info: GraphQLResolveInfo[Any],
        path: Path,
        items: Any,
        position_context: Any,
    ) -> Any:
        """A list of non-null objects whose selection is plain leaves only (a page's items): every
        item's result dict in one loop, without graphql-core's five calls per item to get there.
        Any item that does not fit (null, awaitable, of another type, a value that needs an
        error) sends the whole list back to graphql-core's path, which reports it exactly."""
        if isinstance(items, list | tuple) and isinstance(item_type, GraphQLNonNull):
            object_type = item_type.of_type
            if isinstance(object_type, GraphQLObjectType) and self.get_stream_usage(field_details_list, path) is None:
                grouped_field_set, defers, _forbidden = self.collect_subfields(object_type, field_details_list)
                row = None if defers else self._leaf_object(object_type, grouped_field_set)
                if row is not None:
                    out = _leaf_list(row, object_type, items, info, info.context, self.is_awaitable)
                    if out is not None:
                        return out
        return super().complete_iterable_value(item_type, field_details_list, info, path, items, position_context)

    def _leaf_object(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> _Row | None:
        cache = self.__dict__.setdefault("_leaf_objects", {})
        held = cache.get(id(grouped_field_set))
        if held is not None and held[0] is grouped_field_set:
            kept: _Row | None = held[1]
            return kept
        row: _Row | None = None
        manager = self.middleware_manager
        if not (manager and manager.middlewares):
            key = document_rows.key(parent_type, grouped_field_set)
            found = document_rows.ROWS.get(key) if key is not None else None
            if found is not None:
                row = found[1]
            else:
                row = self._row(parent_type, grouped_field_set)
                if key is not None:
                    document_rows.keep(key, parent_type, grouped_field_set, self.fragments, row)
        cache[id(grouped_field_set)] = (grouped_field_set, row)  # kept: its id cannot be reused
        return row

    def _row(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> _Row | None:
        plans: list[_Entry] = []
        for response_name, field_details_list in grouped_field_set.items():
            entry = self._entry(parent_type, response_name, field_details_list)
            if entry is None:
                return None
            plans.append(entry)
        return _compiled(plans)

    def _entry(self, parent_type: GraphQLObjectType, response_name: str, field_details_list: Any) -> _Entry | None:
        node = field_details_list[0].node
        if node.name.value == "__typename":
            return (response_name, "", None, False, None)
        field_def = self.schema.get_field(parent_type, node.name.value)
        if field_def is None or node.arguments:
            return None
        plan = _plan(field_def)
        if plan is not None:
            return (response_name, *plan, None)
        nested = _nested_plan(field_def)
        if nested is not None:
            if any(details.node.directives for details in field_details_list):
                return None  # @stream (or any directive on the field): graphql-core's path
            kind, name, object_type, nullable = nested
            grouped_field_set, defers, _forbidden = self.collect_subfields(object_type, field_details_list)
            inner = None if defers else self._leaf_object(object_type, grouped_field_set)
            return None if inner is None else (response_name, name, None, nullable, (kind, object_type, inner))
        related = _relation_plan(field_def)
        if related is None:
            return None
        declared, object_type, nullable = related
        grouped_field_set, defers, _forbidden = self.collect_subfields(object_type, field_details_list)
        inner = None if defers else self._leaf_object(object_type, grouped_field_set)
        return None if inner is None else (response_name, "", None, nullable, (declared, object_type, inner))

    def execute_field(
        self,
        parent_type: GraphQLObjectType,
        source: Any,
        field_details_list: Any,
        path: Path,
        position_context: Any,
    ) -> Any:
        node = field_details_list[0].node
        field_def = self.schema.get_field(parent_type, node.name.value)
        manager = self.middleware_manager
        if field_def is not None and not node.arguments and not (manager and manager.middlewares):
            plan = _plan(field_def)
            if plan is not None:
                name, leaf, nullable = plan
                value = getattr(source, name, _MISSING)
                if value is None and nullable:
                    return None
                if value is not None and value is not _MISSING:
                    try:
                        coerced = leaf.coerce_output_value(value)
                    except Exception:  # noqa: BLE001 - graphql-core's path below reports it
                        coerced = Undefined
                    if coerced is not Undefined and coerced is not None:
                        return coerced
        return super().execute_field(parent_type, source, field_details_list, path, position_context)
