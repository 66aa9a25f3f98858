"""No function, method or class of the package that nothing calls (dead code): each is named
somewhere besides its own definition and ``__all__``."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _defined_names(path: Path) -> list[str]:
    """The functions, classes and methods ``path`` defines, but for dunders, decorated ones
    (validators, properties: called by name elsewhere) and overrides of a base class's method
    (a framework calls them: ``_aget_relevant_documents``)."""
    module = importlib.import_module(
        ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
    )
    overrides: set[int] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            cls = getattr(module, node.name, None)
            bases = inspect.getmro(cls)[1:] if inspect.isclass(cls) else ()
            overrides |= {
                id(f) for f in node.body if any(hasattr(b, getattr(f, "name", "")) for b in bases)
            }
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and not node.name.startswith("__")
        and not node.decorator_list
        and id(node) not in overrides
    ]


def test_no_function_or_class_of_the_package_is_left_uncalled():
    """Every function, method and class of the package is named somewhere besides its own
    definition (and ``__all__``): in the package, the tests, the graphs or the notebooks."""
    package = sorted((REPO / "langchain_lookup_knowledge").rglob("*.py"))
    readers = [*package, *REPO.glob("tests/**/*.py"), *REPO.glob("graphs/*.py")]
    readers += [*REPO.glob("notebooks/*.ipynb"), *REPO.glob("scripts/*"), *REPO.glob("evals/*.py")]
    words: Counter[str] = Counter()
    for reader in readers:
        if reader.is_file():
            words.update(re.findall(r"\w+", reader.read_text(encoding="utf-8", errors="replace")))
    uncalled = []
    for path in package:
        text = path.read_text(encoding="utf-8")
        for name in _defined_names(path):
            listed = len(re.findall(rf"[\"']{re.escape(name)}[\"']", text))  # in __all__
            if words[name] - 1 - listed <= 0:
                uncalled.append(f"{path.relative_to(REPO)}: {name}")
    assert not uncalled, uncalled
