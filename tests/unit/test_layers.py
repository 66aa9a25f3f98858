"""The package's layers, read from its source: who may import whom, and no import cycle.

``core`` (contract models, text rules, filters, rerank weights) imports nothing of the package
but ``errors`` (which imports nothing); ``retrieval`` (the L1 paths) builds on ``core`` and never
on ``pipeline`` (the graph), which builds on both. Module-level imports form no cycle, between
modules or between packages (each subpackage and each top-level module counted as one:
``pipeline``, ``retrieval``, ``settings``, ...). Imports inside functions and under
``TYPE_CHECKING`` are not counted: they run after every module is loaded.
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
                    # "from pkg.sub import module": the module itself, if it is one
                    found.update(f"{inner.module}.{a.name}" for a in inner.names)
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


def _packages(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed to packages: ``pkg.pipeline.graph`` counts as ``pkg.pipeline``,
    a top-level module ``pkg.settings`` as itself; the root package is left out (every module is
    inside it)."""

    def unit(module: str) -> str:
        return ".".join(module.split(".")[:2])

    graph: dict[str, set[str]] = {}
    for module, deps in modules.items():
        if module == PACKAGE:
            continue
        graph.setdefault(unit(module), set()).update(
            unit(d) for d in deps if d != PACKAGE and unit(d) != unit(module)
        )
    return graph


def _imports_of(prefix: str) -> dict[str, set[str]]:
    return {m: deps for m, deps in _graph().items() if m == prefix or m.startswith(prefix + ".")}


def test_no_module_level_import_cycle() -> None:
    assert _cycle(_graph()) is None


def test_no_import_cycle_between_packages() -> None:
    packages = _packages(_graph())
    # the graph is really read: the layers stated above are edges of it
    assert {f"{PACKAGE}.core", f"{PACKAGE}.retrieval"} <= packages[f"{PACKAGE}.pipeline"]
    assert f"{PACKAGE}.settings" in packages[f"{PACKAGE}.retrieval"]
    assert _cycle(packages) is None


def test_a_submodule_imported_by_name_is_an_edge() -> None:
    """``from pkg.cli import query`` imports the module ``pkg.cli.query``, not only ``pkg.cli``."""
    assert f"{PACKAGE}.cli.query" in _graph()[f"{PACKAGE}.cli"]


def test_core_imports_nothing_of_the_package_but_errors() -> None:
    assert _graph()[f"{PACKAGE}.errors"] == set()  # the exception classes import nothing
    layer = _imports_of(f"{PACKAGE}.core")
    assert f"{PACKAGE}.errors" in layer[f"{PACKAGE}.core.filters"]  # the package is really read
    for module, deps in layer.items():
        outside = {d for d in deps if not d.startswith(f"{PACKAGE}.core")}
        assert outside <= {f"{PACKAGE}.errors"}, module


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


def test_a_cycle_through_two_packages_is_found_though_no_module_cycle_is() -> None:
    modules = {
        f"{PACKAGE}.a.x": {f"{PACKAGE}.b.y"},
        f"{PACKAGE}.b.y": set(),
        f"{PACKAGE}.b.z": {f"{PACKAGE}.a.w"},
        f"{PACKAGE}.a.w": {f"{PACKAGE}.settings"},
        f"{PACKAGE}.settings": set(),
        PACKAGE: {f"{PACKAGE}.a.x"},
    }
    assert _cycle(modules) is None
    assert _packages(modules) == {
        f"{PACKAGE}.a": {f"{PACKAGE}.b", f"{PACKAGE}.settings"},
        f"{PACKAGE}.b": {f"{PACKAGE}.a"},
        f"{PACKAGE}.settings": set(),
    }
    assert _cycle(_packages(modules)) == [f"{PACKAGE}.a", f"{PACKAGE}.b", f"{PACKAGE}.a"]
