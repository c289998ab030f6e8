"""The import graph of evidence_gateway/, read from the source (nothing is imported).

`python -m tests.import_graph` prints the rooms (top-level modules and subpackages), the
arrows between rooms, every import circle between modules and every function-level import;
tests/test_layering.py asserts on the same graph so that a new circle or a new deferred
import fails the suite.

An edge is a module-level import that runs when the importer is loaded. Imports inside
functions and under `if TYPE_CHECKING:` are kept apart (`deferred_edges`): they do not run at
load, but a circle through them is still one a reader has to walk. Importing `a.b.c` also runs the `__init__`
of each package on the way that the importer does not already sit in, so those count too.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

PACKAGE = "evidence_gateway"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE


@dataclass(frozen=True)
class DeferredImport:
    """An import statement inside a function body: it runs on the first call, not at load."""

    importer: str
    imported: str
    line: int


@dataclass
class ImportGraph:
    modules: set[str] = field(default_factory=set)
    edges: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    deferred: list[DeferredImport] = field(default_factory=list)
    # Edges of the imports that do not run at load (function-level and type-only ones): what
    # the graph would be if they did. A circle through them is a circle a reader still walks.
    deferred_edges: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # Top-level names of the other distributions each module imports at load (strawberry, ...).
    external: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def circles(self, *, with_deferred: bool = False) -> list[list[str]]:
        """Strongly connected components of more than one module (Tarjan), each sorted.

        `with_deferred` counts function-level and type-only imports as edges too: the circles they hide.
        """
        edges: dict[str, set[str]] = defaultdict(set)
        for source in (self.edges, self.deferred_edges) if with_deferred else (self.edges,):
            for importer, imported in source.items():
                edges[importer] |= imported
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        found: list[list[str]] = []
        counter = 0

        def visit(node: str) -> None:
            nonlocal counter
            index[node] = low[node] = counter
            counter += 1
            stack.append(node)
            on_stack.add(node)
            for succ in sorted(edges.get(node, ())):
                if succ not in index:
                    visit(succ)
                    low[node] = min(low[node], low[succ])
                elif succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

        sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
        for module in sorted(self.modules):
            if module not in index:
                visit(module)
        return sorted(found)

    def imports_of(self, module: str) -> set[str]:
        return set(self.edges.get(module, ()))


def room(module: str) -> str:
    """The top-level module or subpackage a module belongs to (`schema`, `db`, ...)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _module_name(path: Path, root: Path) -> str:
    relative = path.relative_to(root.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, str]]:
    """Every import statement with when it runs: "load", "call" (inside a function) or "never"
    (under ``if TYPE_CHECKING:``, read by type checkers only)."""
    found: list[tuple[ast.Import | ast.ImportFrom, str]] = []

    def walk(node: ast.AST, when: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append((child, when))
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                walk(child, "call")
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    walk_one(stmt, "never")
                for stmt in child.orelse:
                    walk_one(stmt, when)
            else:
                walk(child, when)

    def walk_one(stmt: ast.stmt, when: str) -> None:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            found.append((stmt, when))
        else:
            walk(stmt, when)

    walk(tree, "load")
    return found


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def build(root: Path = ROOT) -> ImportGraph:
    graph = ImportGraph()
    sources: dict[str, tuple[Path, bool]] = {}
    for path in sorted(root.rglob("*.py")):
        name = _module_name(path, root)
        is_package = path.name == "__init__.py"
        sources[name] = (path, is_package)
    graph.modules = set(sources)

    def targets(importer: str, imported: str) -> set[str]:
        """`imported` and every package __init__ loading it runs, that the importer is not inside."""
        result: set[str] = set()
        parts = imported.split(".")
        for end in range(1, len(parts) + 1):
            candidate = ".".join(parts[:end])
            if candidate not in graph.modules:
                continue
            if end < len(parts) and (importer == candidate or importer.startswith(candidate + ".")):
                continue  # the importer's own enclosing package is already loading
            result.add(candidate)
        result.discard(importer)
        return result

    for name, (path, is_package) in sources.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        found = _imports(tree)
        for node, when in found:
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                base = _resolve(name, is_package, node)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    names.append(full if full in graph.modules else base)
            if when == "call":
                # One entry per statement, named by the module it reads from.
                graph.deferred.append(DeferredImport(name, min(names, key=len), node.lineno))
            for imported in names:
                if imported.split(".")[0] != PACKAGE:
                    if when == "load" and imported:
                        graph.external[name].add(imported.split(".")[0])
                    continue
                (graph.edges if when == "load" else graph.deferred_edges)[name] |= targets(name, imported)
    return graph


def main() -> None:
    graph = build()
    arrows: dict[str, set[str]] = defaultdict(set)
    for importer, imported in graph.edges.items():
        for target in imported:
            if room(importer) != room(target):
                arrows[room(importer)].add(room(target))
    rooms = sorted({room(m) for m in graph.modules if m != PACKAGE})
    print(f"rooms ({len(rooms)}): {' '.join(rooms)}\n")
    print("arrows (room -> rooms it imports at load):")
    for name in rooms:
        print(f"  {name:18} -> {' '.join(sorted(arrows.get(name, ()))) or '-'}")
    rooms_graph = ImportGraph(modules=set(rooms), edges=arrows)
    room_circles = rooms_graph.circles()
    print(f"\ncircles between rooms, through modules that are not in a circle ({len(room_circles)}):")
    for members in room_circles:
        print("  " + " <-> ".join(members))
    circles = graph.circles()
    print(f"\ncircles between modules ({len(circles)}):")
    for members in circles:
        print("  " + " <-> ".join(m.removeprefix(PACKAGE + ".") for m in members))
    hidden = [c for c in graph.circles(with_deferred=True) if c not in circles]
    print(f"\ncircles that function-level or type-only imports hide ({len(hidden)}):")
    for members in hidden:
        print("  " + " <-> ".join(m.removeprefix(PACKAGE + ".") for m in members))
    print(f"\nfunction-level imports ({len(graph.deferred)}):")
    for item in sorted(graph.deferred, key=lambda d: (d.importer, d.line)):
        print(f"  {item.importer.removeprefix(PACKAGE + '.')}:{item.line} imports {item.imported}")


if __name__ == "__main__":
    main()
