"""Plain leaf fields, and objects made only of them, resolved without graphql-core's per-field
machinery.

A page of 20 workspaces with 13 fields each is about 270 field executions. For each one,
graphql-core builds a resolve info, asks the middleware for a resolver, and Strawberry's default
resolver, the awaitable checks and ``complete_value`` each take a turn; that was most of a
GraphQL list's cost (bench/layers.py, docs/performance.md). For a field that has no resolver, no
arguments and a scalar or enum type, all of it comes down to reading one attribute and
serialising it with the type's own ``coerce_output_value``: that is what this executor does, field
by field, or for a whole object when every field it selects is such a leaf. Anything else
(a resolver, arguments, a middleware, a null in a non-null field, a value the scalar refuses)
takes graphql-core's path, so errors and their locations are exactly what they were.
"""

from __future__ import annotations

from typing import Any

from graphql import GraphQLField, GraphQLLeafType, GraphQLNonNull, GraphQLObjectType, is_leaf_type
from graphql.pyutils import Path, Undefined
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

# (python attribute name, leaf type, nullable), or None when the field is not a plain leaf.
_Plan = tuple[str, GraphQLLeafType, bool] | None
_MISSING = object()
_PLAN = "_evidence_leaf_plan"  # kept on the field definition itself: fields live as long as their schema


def _plan(field_def: GraphQLField) -> _Plan:
    held = field_def.__dict__.get(_PLAN, _MISSING)
    if held is not _MISSING:
        kept: _Plan = held
        return kept
    plan: _Plan = None
    strawberry_field = (field_def.extensions or {}).get(GraphQLCoreConverter.DEFINITION_BACKREF)
    plain = getattr(field_def.resolve, "_is_default", False) and strawberry_field is not None
    if plain and strawberry_field is not None and not field_def.args:
        nullable = not isinstance(field_def.type, GraphQLNonNull)
        leaf = field_def.type.of_type if isinstance(field_def.type, GraphQLNonNull) else field_def.type
        if is_leaf_type(leaf):
            plan = (strawberry_field.python_name, leaf, nullable)
    field_def.__dict__[_PLAN] = plan
    return plan


# (response name, attribute, type, nullable); no type: __typename.
_Row = tuple[tuple[str, str, GraphQLLeafType | None, bool], ...]


class PlainLeaves(StrawberryGraphQLCoreExecutionContext):
    _leaf_objects: dict[int, tuple[Any, _Row | None]]

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
            out: dict[str, Any] = {}
            for response_name, name, leaf, nullable in row:
                if leaf is None:
                    out[response_name] = parent_type.name  # __typename
                    continue
                value = getattr(source_value, name, _MISSING)
                if value is None and nullable:
                    out[response_name] = None
                    continue
                if value is None or value is _MISSING:
                    break
                try:
                    coerced = leaf.coerce_output_value(value)
                except Exception:  # noqa: BLE001 - graphql-core's path below reports it
                    break
                if coerced is None or coerced is Undefined:
                    break
                out[response_name] = coerced
            else:
                return out
        return super().execute_fields(parent_type, source_value, path, grouped_field_set, position_context)

    def _leaf_object(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> _Row | None:
        cache = self.__dict__.setdefault("_leaf_objects", {})
        held = cache.get(id(grouped_field_set))
        if held is not None and held[0] is grouped_field_set:
            kept: _Row | None = held[1]
            return kept
        row: _Row | None = None
        manager = self.middleware_manager
        if not (manager and manager.middlewares):
            plans: list[tuple[str, str, GraphQLLeafType | None, bool]] = []
            for response_name, field_details_list in grouped_field_set.items():
                node = field_details_list[0].node
                if node.name.value == "__typename":
                    plans.append((response_name, "", None, False))
                    continue
                field_def = self.schema.get_field(parent_type, node.name.value)
                plan = _plan(field_def) if field_def is not None and not node.arguments else None
                if plan is None:
                    break
                plans.append((response_name, *plan))
            else:
                row = tuple(plans)
        cache[id(grouped_field_set)] = (grouped_field_set, row)  # kept: its id cannot be reused
        return row

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
