"""The package's layers, read from its source: who may import whom, and no import cycle.

``core`` (contract models, text rules) imports nothing of the package; ``retrieval`` (the L1
paths) builds on ``core`` and never on ``pipeline`` (the graph), which builds on both. Module-level
imports form no cycle (imports inside functions and under ``TYPE_CHECKING`` are not counted: they
run after every module is loaded).
"""

from __future__ import annotations

import ast
from pathlib import Path

import langchain_lookup_knowledge

PACKAGE = "langchain_lookup_knowledge"
ROOT = Path(langchain_lookup_knowledge.__file__).parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path) -> set[str]:
    """Package modules imported at module level (not in functions, not under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        nodes = node.body if isinstance(node, ast.If | ast.Try) else [node]
        for inner in nodes:
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                if inner.module.startswith(PACKAGE):
                    found.add(inner.module)
            elif isinstance(inner, ast.Import):
                found.update(a.name for a in inner.names if a.name.startswith(PACKAGE))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        # "from pkg.sub import name" may name a module or an attribute: keep what is a module.
        graph[name] = {m for m in _top_level_imports(path) if m in modules and m != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def _imports_of(prefix: str) -> dict[str, set[str]]:
    return {m: deps for m, deps in _graph().items() if m == prefix or m.startswith(prefix + ".")}


def test_no_module_level_import_cycle() -> None:
    assert _cycle(_graph()) is None


def test_core_imports_nothing_of_the_package() -> None:
    for module, deps in _imports_of(f"{PACKAGE}.core").items():
        assert {d for d in deps if not d.startswith(f"{PACKAGE}.core")} == set(), module


def test_retrieval_is_below_pipeline() -> None:
    layers = _imports_of(f"{PACKAGE}.retrieval")
    assert f"{PACKAGE}.retrieval.request" in layers  # the package is really read
    for module, deps in layers.items():
        assert not {d for d in deps if d.startswith(f"{PACKAGE}.pipeline")}, module


def test_retrieval_is_a_package() -> None:
    assert (ROOT / "retrieval" / "__init__.py").is_file()
    assert (ROOT / "core" / "__init__.py").is_file()


def test_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
