"""The lexical form of English text for BM25: Snowball stems, identifier parts, the marker."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.core.lexical import (
    LEXICAL_VERSION,
    LexicalForm,
    identifier_parts,
    lexical_text,
)
from langchain_lookup_knowledge.retrieval.request import SearchRequest
from langchain_lookup_knowledge.settings import LookupSettings


def test_words_become_their_snowball_stems() -> None:
    assert lexical_text("Nodes keep restarting; restarts flapped") == (
        "node keep restart; restart flap"
    )


def test_a_question_and_a_chunk_meet_on_the_same_stem() -> None:
    chunk = lexical_text("The kubelet was restarted after the certificates expired").split()
    question = lexical_text("kubelet restarts when certificate expires").split()
    assert {"restart", "certif", "expir"} <= set(chunk) & set(question)


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("KubeNodeReadinessFlapping", ("kube", "node", "readiness", "flapping")),
        ("proxy_cache", ("proxy", "cache")),
        ("limit-count", ("limit", "count")),
        ("apisix.yaml", ("apisix", "yaml")),
        ("HTTPServerErrors", ("http", "server", "errors")),
        ("kubernetes", ()),
        ("HTTP", ()),
    ],
)
def test_identifier_parts(token: str, parts: tuple[str, ...]) -> None:
    assert identifier_parts(token) == parts


def test_an_identifier_keeps_its_whole_token_and_adds_its_stemmed_words() -> None:
    assert lexical_text("KubeNodeReadinessFlapping") == (
        "kubenodereadinessflapping kube node readi flap"
    )
    assert lexical_text("set limit-count on the route").split()[1:4] == [
        "limitcount",
        "limit",
        "count",
    ]


def test_cjk_and_punctuation_are_kept_as_written() -> None:
    assert lexical_text("节点 NotReady 了: pods 重启") == "节点 notready not readi 了: pod 重启"


def test_each_rule_can_be_off() -> None:
    assert LexicalForm(stem=False).apply("Pods restarting in KubePodCrashLooping") == (
        "pods restarting in kubepodcrashlooping kube pod crash looping"
    )
    assert LexicalForm(split_identifiers=False).apply("Pods in proxy_cache") == (
        "pod in proxy_cache"
    )


def test_the_marker_round_trips_and_another_version_is_refused() -> None:
    form = LexicalForm(stem=True, split_identifiers=False)
    assert LexicalForm.parse(f"lexical_bm25_{form.marker}") == form
    assert LexicalForm.parse("text_bm25") is None  # a collection of plain text
    with pytest.raises(ValueError, match=f"version {LEXICAL_VERSION + 1}"):
        LexicalForm.parse(f"lexical_bm25_lex{LEXICAL_VERSION + 1}s1i1")


def test_the_bm25_text_of_a_request_is_in_the_collection_s_form() -> None:
    settings = LookupSettings()
    stemmed = SearchRequest.configured(
        settings,
        query_text="Why are the nodes flapping?",
        query_vector=[],
        expr=None,
        k=5,
        retrieval_mode="hybrid",
        lexical=LexicalForm(),
    )
    plain = SearchRequest.configured(
        settings,
        query_text="Why are the nodes flapping?",
        query_vector=[],
        expr=None,
        k=5,
        retrieval_mode="hybrid",
    )
    assert stemmed.bm25_text == "whi are the node flap?"
    assert stemmed.query_text == "Why are the nodes flapping?"  # the dense side reads it as asked
    assert plain.bm25_text == "Why are the nodes flapping?"
    dropped = SearchRequest.configured(
        settings,
        query_text="Why are the nodes flapping?",
        query_vector=[],
        expr=None,
        k=5,
        retrieval_mode="hybrid",
        row_count=10_000,  # stopwords dropped first, then the lexical form
        lexical=LexicalForm(),
    )
    assert dropped.bm25_text == "node flap?"
