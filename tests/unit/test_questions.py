"""The one question reader: every line on its own, problems named by file and line."""

from __future__ import annotations

import json

import pytest

from langchain_lookup_knowledge.questions import (
    Question,
    QuestionFileError,
    UnreadableQuestion,
    question_from_argument,
    read_question_file,
    readable_only,
)


def test_plain_jsonl_and_beir_lines_are_questions_in_order(tmp_path):
    file = tmp_path / "q.jsonl"
    file.write_bytes(
        b"\xef\xbb\xbfdisk full\n\n"
        + json.dumps({"q": "etcd is slow", "rel": ["etcd-slow"]}).encode()
        + b"\n"
        + json.dumps({"_id": "1", "text": "0-dimensional biomaterials"}).encode()
        + b"\r\n"
    )
    items = read_question_file(file)
    assert items == [
        Question("disk full", f"{file}:1"),
        Question("etcd is slow", f"{file}:3", ("etcd-slow",)),
        Question("0-dimensional biomaterials", f"{file}:4"),
    ]


def test_a_non_utf8_line_costs_that_line_only(tmp_path):
    file = tmp_path / "q.txt"
    file.write_bytes(b'disk full\ncaf\xe9 au lait\n{"q": "node down"}\n{broken\n{"rel": ["a"]}\n')
    items = read_question_file(file)
    assert [type(i) for i in items] == [
        Question,
        UnreadableQuestion,
        Question,
        UnreadableQuestion,
        UnreadableQuestion,
    ]
    bad_bytes, bad_json, no_q = items[1], items[3], items[4]
    assert str(bad_bytes).startswith(f"{file}:2: not valid UTF-8 (byte 0xe9 at column 4)")
    assert bad_json.origin == f"{file}:4"
    assert "invalid JSON" in bad_json.reason
    assert no_q.origin == f"{file}:5"
    assert '"q"' in no_q.reason


def test_a_lone_surrogate_escaped_in_json_is_not_a_question(tmp_path):
    file = tmp_path / "q.jsonl"
    file.write_text('{"q": "bad \\ud800 text"}\n', encoding="utf-8")
    (item,) = read_question_file(file)
    assert isinstance(item, UnreadableQuestion)
    assert "lone surrogate (U+D800)" in item.reason


def test_command_line_bytes_that_are_not_utf8_are_named_by_position():
    # Python keeps undecodable argv bytes as surrogate escapes (\udcXX).
    item = question_from_argument("caf\udce9", 2)
    assert item == UnreadableQuestion("argument 2", "not valid UTF-8 (byte 0xe9 at character 4)")
    assert question_from_argument("  disk full ", 1) == Question("disk full", "argument 1")
    assert isinstance(question_from_argument("   ", 3), UnreadableQuestion)


def test_file_level_problems_raise_one_error_type(tmp_path):
    with pytest.raises(QuestionFileError, match="questions file not found"):
        read_question_file(tmp_path / "missing.jsonl")
    (tmp_path / "empty.txt").write_text("\n  \n", encoding="utf-8")
    with pytest.raises(QuestionFileError, match="no questions in"):
        read_question_file(tmp_path / "empty.txt")


def test_readable_only_refuses_a_file_with_unreadable_lines_naming_each():
    items = [Question("a", "f:1"), *(UnreadableQuestion(f"f:{n}", "bad") for n in range(2, 10))]
    with pytest.raises(QuestionFileError) as caught:
        readable_only(items, "f")
    message = str(caught.value)
    assert message.startswith("8 unreadable line(s) in f: f:2: bad; f:3: bad")
    assert message.endswith("and 3 more")
    assert readable_only([Question("a", "f:1")], "f") == [Question("a", "f:1")]
