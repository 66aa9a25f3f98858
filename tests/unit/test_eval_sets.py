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


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def test_near_duplicates_in_a_supplementary_set_are_reported(tmp_path: Path) -> None:
    checker = _checker()
    dev = _write(
        tmp_path / "s_dev.jsonl", [{"q": "kubectl apply fails with database space exceeded"}]
    )
    test = _write(tmp_path / "s_test.jsonl", [{"q": "节点 NotReady 了怎么排查"}])
    new = _write(
        tmp_path / "s_dev2.jsonl",
        [
            {"q": "kubectl apply failing with: database space exceeded"},  # reworded dev question
            {"q": "节点 NotReady 了该怎么排查"},  # near a test question
            {"q": "two alertmanager replicas disagree on the routing config"},  # new
            {"q": "Two alertmanager replicas disagree on the routing config!"},  # repeats line 3
        ],
    )
    questions = {p.name: [r["q"] for r in checker.read_lines(p)] for p in (dev, test, new)}
    problems = checker.check_near_duplicates(new, questions)
    assert len(problems) == 3, problems
    assert problems[0].startswith("s_dev2.jsonl:1: near duplicate of a question in s_dev.jsonl")
    assert problems[1].startswith("s_dev2.jsonl:2: near duplicate of a question in s_test.jsonl")
    assert "NotReady" not in problems[1]  # a test question is never printed
    assert problems[2].startswith("s_dev2.jsonl:4: near duplicate of line 3")


def test_near_duplicate_tells_a_rewording_from_another_question() -> None:
    near_duplicate = _checker().near_duplicate
    assert near_duplicate("apisever droping requests, 429s", "apiserver dropping requests, 429s")
    assert near_duplicate("tikv 磁盘 io util 一直 100%", "tikv 磁盘 io util 一直是 100%")
    assert not near_duplicate("tikv 磁盘 io util 一直 100%", "tikv 内存一直涨")
    assert not near_duplicate("pod keeps crashing and restarting", "node keeps flapping")


def test_a_supplementary_line_needs_a_known_style(tmp_path: Path) -> None:
    require_shared(SHARED_DATA)
    checker = _checker()
    kbs = {
        "runbooks_en": checker.KnowledgeBase(SHARED_DATA / checker.KNOWLEDGE_BASES["runbooks_en"])
    }
    rows = [
        {"q": "a", "rel": ["TargetDown"]},
        {"q": "b", "rel": ["TargetDown"], "style": "alert"},
        {"q": "c", "rel": ["TargetDown"], "style": "symptom"},
    ]
    problems = checker.check_file(_write(tmp_path / "runbooks_en_x_dev2.jsonl", rows), kbs)
    assert problems == [
        "runbooks_en_x_dev2.jsonl:1: a line of a supplementary set needs a style",
        "runbooks_en_x_dev2.jsonl:2: style 'alert' is not one of symptom, task, concept",
    ]
    # The split sets keep style optional.
    assert checker.check_file(_write(tmp_path / "runbooks_en_x_dev.jsonl", rows[:1]), kbs) == []


def test_every_tuning_file_is_checked_against_the_blind_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    require_shared(SHARED_DATA)
    checker = _checker()
    blind_question = "etcd keeps logging no leader elected after the upgrade"
    _write(tmp_path / "runbooks_en_x_test.jsonl", [{"q": blind_question, "rel": ["etcdNoLeader"]}])
    _write(
        tmp_path / "runbooks_en_x_dev.jsonl",  # a first-set dev file, not a supplementary one
        [{"q": "etcd keeps logging no leader elected after an upgrade", "rel": ["etcdNoLeader"]}],
    )
    monkeypatch.setattr(checker, "EVALS", tmp_path)
    assert checker.main(["--data", str(SHARED_DATA)]) == 1
    out = capsys.readouterr().out
    assert (
        "runbooks_en_x_dev.jsonl:1: near duplicate of a question in runbooks_en_x_test.jsonl" in out
    )
    assert blind_question not in out


def test_an_answer_missing_from_its_document_is_reported(tmp_path: Path) -> None:
    require_shared(SHARED_DATA)
    checker = _checker()
    kbs = {"apisix_en": checker.KnowledgeBase(SHARED_DATA / checker.KNOWLEDGE_BASES["apisix_en"])}
    rows = [
        {"q": "a", "rel": ["gzip"], "answer": "comp_level"},  # in gzip.md
        {"q": "b", "rel": ["gzip"], "answer": "Comp_Level  "},  # case and whitespace aside
        {"q": "c", "rel": ["gzip"], "answer": "max_breaker_sec"},  # in api-breaker.md only
    ]
    problems = checker.check_file(_write(tmp_path / "apisix_en_howto_x.jsonl", rows), kbs)
    assert problems == [
        "apisix_en_howto_x.jsonl:3: answer 'max_breaker_sec' occurs in none of its rel documents"
    ]
