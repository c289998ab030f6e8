"""The plain-leaves executor's rows (schema/execution.py) kept across requests of one document.

Working out, per request, which of a selection's fields are plain leaves, plain objects or held
relations cost about a tenth of a page's execution (the field lookups, the plans, the nested
selections collected again). The parser cache hands every request of one document the same
parsed nodes, so a selection is known by its type's and its field nodes' identity; what its
row holds then depends on the request only through directives below its fields (``@include``
and ``@skip`` with a variable, ``@defer``, ``@stream``), and a selection with any is not kept.
The fields' own directives were applied already: they decide which nodes the selection has,
and so its key.
"""

from __future__ import annotations

from typing import Any

from graphql import FragmentSpreadNode, GraphQLObjectType

# key -> ((the type and the selection, kept alive so that no id in a key is reused), the row)
ROWS: dict[tuple[int, ...], tuple[Any, Any]] = {}
HELD = 4096  # selections; then it starts over


def key(parent_type: GraphQLObjectType, grouped_field_set: Any) -> tuple[int, ...] | None:
    """The selection's key: its type's and each field node's identity, in order (the response
    names follow from the nodes); None for one that is deferred or has fragment arguments."""
    out = [id(parent_type)]
    for field_details_list in grouped_field_set.values():
        for details in field_details_list:
            if details.defer_usage is not None or details.fragment_variable_values is not None:
                return None
            out.append(id(details.node))
        out.append(0)  # where one response name's nodes end
    return tuple(out)


def keep(
    held: tuple[int, ...], parent_type: GraphQLObjectType, grouped_field_set: Any, fragments: Any, row: Any
) -> None:
    """Keep ``row`` (a plan, or None for a selection graphql-core completes) for the next
    requests of the document, if it cannot depend on a request's variables."""
    if not fixed(grouped_field_set, fragments):
        return
    if len(ROWS) >= HELD:
        ROWS.clear()
    ROWS[held] = ((parent_type, grouped_field_set), row)


def fixed(grouped_field_set: Any, fragments: Any) -> bool:
    """Whether nothing below the selection's fields carries a directive, through fragments too."""
    pending = [details.node.selection_set for group in grouped_field_set.values() for details in group]
    seen: set[str] = set()
    while pending:
        selection_set = pending.pop()
        if selection_set is None:
            continue
        for selection in selection_set.selections:
            if selection.directives:
                return False
            if isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                details = fragments.get(name)
                if details is None or details.definition.directives:
                    return False
                if name not in seen:
                    seen.add(name)
                    pending.append(details.definition.selection_set)
            else:
                pending.append(selection.selection_set)
    return True
