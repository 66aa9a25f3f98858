"""A question's terms: jieba segments its CJK text, and is never loaded for a question without
any (its import is a fifth of a second of a process's first English lookup)."""

from __future__ import annotations

import subprocess
import sys

from langchain_lookup_knowledge.core.vocabulary import question_terms


def test_cjk_text_is_segmented_into_words():
    assert question_terms("Why are my Pods pending? 节点磁盘满了怎么办") == [
        "pod",
        "pending",
        "节点",
        "磁盘",
    ]


def _terms_in_a_fresh_process(question: str) -> str:
    """``question_terms(question)`` and whether jieba was then loaded, in a new interpreter."""
    script = (
        "import sys\n"
        "from langchain_lookup_knowledge.core.vocabulary import question_terms\n"
        f"terms = question_terms({question!r})\n"
        "print(terms, 'jieba' in sys.modules)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()


def test_an_english_question_does_not_load_jieba():
    out = _terms_in_a_fresh_process("alertmanager pods keep crashing")
    assert out == "['alertmanager', 'pod', 'keep', 'crashing'] False"


def test_a_chinese_question_loads_it():
    assert _terms_in_a_fresh_process("节点磁盘满了") == "['节点', '磁盘'] True"
