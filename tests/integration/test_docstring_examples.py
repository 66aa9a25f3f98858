"""The examples in the public docstrings run and print what they say (``doctest``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import langchain_lookup_knowledge

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(
        langchain_lookup_knowledge.__path__, prefix="langchain_lookup_knowledge."
    )
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(
        module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False
    )
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
