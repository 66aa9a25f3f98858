"""One owner per fact: the graph, ``compare`` and ``bench`` prepare a question with one function;
one redacted description of an exception serves every sink; the retriever takes ``k`` per call
on one compiled graph; no code that nothing calls. (The records scrubber: test_records_store.py
and unit/test_tie_break.py.)"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from collections import Counter
from pathlib import Path

from langchain_lookup_knowledge import LookupKnowledgeRetriever, LookupRuntime
from langchain_lookup_knowledge import retriever as retriever_module
from langchain_lookup_knowledge.compare import compare_paths
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.pipeline.transform import prepare_query
from langchain_lookup_knowledge.retrieval.sidecar import start_sidecar

try:
    from fakes import FailingPath
except ImportError:  # pragma: no cover - run from the repo root as a package
    from tests.fakes import FailingPath

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "s3cret-pw-42"
SECRET_URL = f"http://admin:{PASSWORD}@milvus.internal:19530"


def test_compare_searches_the_question_the_graph_searches(sample_kb_store, real_embeddings):
    # A control character and a lone surrogate, as a model or a terminal may send them.
    question = "etcd\x00 fsync is\ud800 slow  "
    graph = build_lookup_graph(sample_kb_store, embeddings=real_embeddings, recorder=None)
    searched = graph.invoke({"query": question})["result"]["query"]
    runtime = LookupRuntime(sample_kb_store, embeddings=real_embeddings)
    report = compare_paths(question, sample_kb_store, k=3, runtime=runtime)
    assert report["query"] == searched == "etcd  fsync is  slow"
    assert report["vectorstore"]["status"] == "ok", report["vectorstore"]
    assert report["sdk"]["status"] == "ok", report["sdk"]
    json.dumps(report)  # no lone surrogate left to break the CLI's JSON


def test_compare_and_sidecar_errors_are_redacted(sample_kb_store, real_embeddings):
    settings = sample_kb_store.model_copy(update={"sidecar_path": "sdk"})
    failing = {"sdk": lambda: FailingPath("sdk", message=f"cannot reach {SECRET_URL}")}
    runtime = LookupRuntime(settings, embeddings=real_embeddings, path_factories=failing)
    report = compare_paths("disk is full", settings, k=3, runtime=runtime)
    sidecar = start_sidecar(
        runtime, prepare_query(runtime, "disk is full").first_request(), main_path="vectorstore"
    ).report([])
    for error in (report["sdk"]["error"], sidecar.error):
        assert error is not None
        assert error.startswith("ConnectionError: cannot reach http://admin:***@"), error
        assert PASSWORD not in error
    assert report["vectorstore"]["status"] == "ok"  # the other path is still shown


def test_retriever_takes_k_per_call_on_one_compiled_graph(
    kb_settings, real_embeddings, monkeypatch
):
    built: list[object] = []

    def counting(*args, **kwargs):  # a spy: the real graph, counted
        graph = build_lookup_graph(*args, **kwargs)
        built.append(graph)
        return graph

    monkeypatch.setattr(retriever_module, "build_lookup_graph", counting)
    retriever = LookupKnowledgeRetriever(settings=kb_settings, embeddings=real_embeddings)
    question = "pgbouncer connection pool exhausted"
    sizes = {k: len(retriever.invoke(question, k=k)) for k in (1, 2, 7)}
    assert sizes == {1: 1, 2: 2, 7: 7}
    wide = retriever.invoke(question, k=60)  # beyond the tool's top_k limit (50)
    assert len(wide) > 7
    assert len(built) == 1
    # The same ranking as a graph built for that k.
    own = LookupKnowledgeRetriever(
        settings=kb_settings.model_copy(update={"top_k": 7}), embeddings=real_embeddings
    )
    assert [d.id for d in own.invoke(question)] == [d.id for d in retriever.invoke(question, k=7)]


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
