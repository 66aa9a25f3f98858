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


def test_an_english_question_does_not_load_jieba():
    script = (
        "import sys\n"
        "from langchain_lookup_knowledge.core.vocabulary import question_terms\n"
        "terms = question_terms('alertmanager pods keep crashing')\n"
        "print(terms, 'jieba' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()
    assert out == "['alertmanager', 'pod', 'keep', 'crashing'] False"


def test_a_chinese_question_loads_it():
    script = (
        "import sys\n"
        "from langchain_lookup_knowledge.core.vocabulary import question_terms\n"
        "question_terms('节点磁盘满了')\n"
        "print('jieba' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    ).stdout.strip()
    assert out == "True"
