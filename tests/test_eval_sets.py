"""The question sets in ``evals/`` stay valid: every rel names one document, out-of-scope terms stay
absent, each dev/test pair is the committed seeded split (``evals/check_sets.py``)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.conftest import REPO, SHARED_DATA, require_shared

CHECKER = REPO / "evals" / "check_sets.py"


def _checker():
    spec = importlib.util.spec_from_file_location("check_sets", CHECKER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_question_set_checks_out(capsys: pytest.CaptureFixture[str]) -> None:
    require_shared(SHARED_DATA)
    assert _checker().main(["--data", str(SHARED_DATA)]) == 0, capsys.readouterr().out


def test_a_rel_that_names_no_document_is_reported(tmp_path: Path) -> None:
    require_shared(SHARED_DATA)
    checker = _checker()
    kbs = {
        "runbooks_en": checker.KnowledgeBase(SHARED_DATA / checker.KNOWLEDGE_BASES["runbooks_en"])
    }
    bad = tmp_path / "runbooks_en_x_dev.jsonl"
    rows = [{"q": "a", "rel": ["NoSuchRunbook"]}, {"q": "b", "rel": ["_index"]}]
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    problems = checker.check_file(bad, kbs)
    assert any("NoSuchRunbook" in p and "names no document" in p for p in problems)
    assert any("_index" in p and "ambiguous" in p for p in problems)


def test_a_question_moved_between_dev_and_test_is_reported(tmp_path: Path) -> None:
    checker = _checker()
    rows = sorted(({"q": f"question {i}", "rel": ["x"]} for i in range(10)), key=lambda r: r["q"])
    dev, test = checker.split(rows)
    dev.append(test.pop())
    (tmp_path / "s_dev.jsonl").write_text(checker.dump(dev), encoding="utf-8")
    (tmp_path / "s_test.jsonl").write_text(checker.dump(test), encoding="utf-8")
    assert checker.check_split(tmp_path / "s_dev.jsonl", tmp_path / "s_test.jsonl")
