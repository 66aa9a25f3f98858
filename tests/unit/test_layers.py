"""The package's layers, read from its source: who may import whom, and no import cycle.

Every import statement counts, wherever it stands: at module level, inside a function or a
method (a lazy import runs later, but it is a dependency all the same, as import-linter counts
it), under ``if TYPE_CHECKING:``, in ``try``/``if`` blocks; relative imports are resolved.

``core`` (contract models, text rules, filters, rerank weights, the evidence model) imports
nothing of the package but ``errors`` (which imports nothing); ``retrieval`` (the L1 paths)
builds on ``core`` and never on ``pipeline`` (the graph), which builds on both. The imports form
no cycle, between modules or between packages (each subpackage and each top-level module
counted as one: ``pipeline``, ``retrieval``, ``settings``, ...).

A lazy import is still the right tool where it keeps start-up cheap (pymilvus, onnxruntime,
SQLAlchemy's drivers, the CLI's subcommands): it only must not close a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from itertools import pairwise
from pathlib import Path

import langchain_lookup_knowledge

PACKAGE = "langchain_lookup_knowledge"
ROOT = Path(langchain_lookup_knowledge.__file__).parent

Edges = dict[str, dict[str, int]]
"""module -> {imported module: line of the first statement importing it}."""


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str | None:
    """The module ``from X import ...`` names, relative imports resolved against ``module``."""
    if node.level == 0:
        return node.module
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _imports(source: str, module: str, *, is_package: bool = False) -> dict[str, int]:
    """Every ``PACKAGE`` name ``source`` imports, anywhere in it, with the line of the first."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(source)):  # every statement: functions, TYPE_CHECKING too
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            target = _absolute(node, module, is_package)
            if target:
                # "from pkg.sub import module": the module itself too, if it is one
                names = [target, *(f"{target}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                found.setdefault(name, node.lineno)
    return found


def _edges(sources: Mapping[str, tuple[str, bool]]) -> Edges:
    """The import graph of ``sources`` (module -> (source, is a package)): the edges between
    modules of it ("from pkg.sub import name" may name a module or an attribute)."""
    edges: Edges = {}
    for name, (source, is_package) in sources.items():
        imported = _imports(source, name, is_package=is_package)
        edges[name] = {m: line for m, line in imported.items() if m in sources and m != name}
    return edges


def _package_edges() -> Edges:
    sources = {
        _module_name(p): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
        for p in ROOT.rglob("*.py")
    }
    return _edges(sources)


def _graph(edges: Edges | None = None) -> dict[str, set[str]]:
    return {m: set(deps) for m, deps in (_package_edges() if edges is None else edges).items()}


def _cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
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


def _unit(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _packages(modules: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The module graph collapsed to packages: ``pkg.pipeline.graph`` counts as ``pkg.pipeline``,
    a top-level module ``pkg.settings`` as itself; the root package is left out (every module is
    inside it)."""
    graph: dict[str, set[str]] = {}
    for module, deps in modules.items():
        if module == PACKAGE:
            continue
        graph.setdefault(_unit(module), set()).update(
            _unit(d) for d in deps if d != PACKAGE and _unit(d) != _unit(module)
        )
    return graph


def _where(cycle: list[str], edges: Edges) -> str:
    """Each edge of a package or module cycle as the import statements that make it."""
    steps = []
    for a, b in pairwise(cycle):
        sites = [
            f"{m}:{line} imports {d}"
            for m, deps in sorted(edges.items())
            for d, line in sorted(deps.items())
            if (m == a or _unit(m) == a) and (d == b or _unit(d) == b)
        ]
        steps.append(f"{a} -> {b}: " + "; ".join(sites[:4]))
    return "import cycle " + " -> ".join(cycle) + "\n" + "\n".join(steps)


def _imports_of(prefix: str) -> dict[str, set[str]]:
    return {m: deps for m, deps in _graph().items() if m == prefix or m.startswith(prefix + ".")}


def test_no_import_cycle_between_modules() -> None:
    edges = _package_edges()
    cycle = _cycle(_graph(edges))
    assert cycle is None, _where(cycle, edges)


def test_no_import_cycle_between_packages() -> None:
    edges = _package_edges()
    packages = _packages(_graph(edges))
    # the graph is really read: the layers stated above are edges of it
    assert {f"{PACKAGE}.core", f"{PACKAGE}.retrieval"} <= packages[f"{PACKAGE}.pipeline"]
    assert f"{PACKAGE}.settings" in packages[f"{PACKAGE}.retrieval"]
    cycle = _cycle(packages)
    assert cycle is None, _where(cycle, edges)


def test_a_submodule_imported_by_name_is_an_edge() -> None:
    """``from pkg.cli import query`` imports the module ``pkg.cli.query``, not only ``pkg.cli``."""
    assert f"{PACKAGE}.cli.query" in _graph()[f"{PACKAGE}.cli"]


def test_imports_inside_functions_and_under_type_checking_are_edges() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        f"    from {PACKAGE}.settings import LookupSettings\n"
        "def build():\n"
        f"    from {PACKAGE}.store.connection import open_client\n"
        "class Recorder:\n"
        "    def write(self):\n"
        f"        import {PACKAGE}.records.tables\n"
        "try:\n"
        f"    from {PACKAGE}.embeddings import onnx\n"
        "except ImportError:\n"
        "    pass\n"
    )
    assert set(_imports(source, f"{PACKAGE}.pipeline.x")) == {
        f"{PACKAGE}.settings",
        f"{PACKAGE}.settings.LookupSettings",
        f"{PACKAGE}.store.connection",
        f"{PACKAGE}.store.connection.open_client",
        f"{PACKAGE}.records.tables",
        f"{PACKAGE}.embeddings",
        f"{PACKAGE}.embeddings.onnx",
    }
    # and in the package's own source: the retrieval settings validate filters lazily
    assert f"{PACKAGE}.core.filters" in _graph()[f"{PACKAGE}.settings.retrieval"]


def test_relative_imports_are_resolved() -> None:
    source = "from . import plan\nfrom .models import X\nfrom ..core import text\n"
    assert set(_imports(source, f"{PACKAGE}.pipeline.graph")) == {
        f"{PACKAGE}.pipeline",
        f"{PACKAGE}.pipeline.plan",
        f"{PACKAGE}.pipeline.models",
        f"{PACKAGE}.pipeline.models.X",
        f"{PACKAGE}.core",
        f"{PACKAGE}.core.text",
    }
    assert set(_imports("from .graph import g\n", f"{PACKAGE}.pipeline", is_package=True)) == {
        f"{PACKAGE}.pipeline.graph",
        f"{PACKAGE}.pipeline.graph.g",
    }


def test_a_cycle_closed_by_a_lazy_import_is_found() -> None:
    """The shape the package had: settings imported pipeline inside a validator."""
    sources = {
        f"{PACKAGE}.settings": (
            "def _check(value):\n"
            f"    from {PACKAGE}.pipeline.rerank import RerankWeights\n"
            "    return RerankWeights.from_overrides(value)\n",
            False,
        ),
        f"{PACKAGE}.pipeline": ("", True),
        f"{PACKAGE}.pipeline.rerank": (f"from {PACKAGE}.settings import LookupSettings\n", False),
    }
    edges = _edges(sources)
    cycle = _cycle(_graph(edges))
    rerank, settings = f"{PACKAGE}.pipeline.rerank", f"{PACKAGE}.settings"
    assert cycle == [rerank, settings, rerank]
    assert f"{PACKAGE}.settings:2 imports {PACKAGE}.pipeline.rerank" in _where(cycle, edges)


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
