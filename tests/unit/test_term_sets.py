"""Term sets, fast and memoised, equal their definition (issue 12, latency).

``word_key_set`` folds an ASCII text once instead of word by word; the term matcher
(``core/term_match.py``) keeps each chunk text's term set (``_TextTerms``) in a bounded memo.
Neither may change a single key or a score.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_lookup_knowledge.core import term_match
from langchain_lookup_knowledge.core.text import fold, word_key_set, word_keys
from langchain_lookup_knowledge.pipeline.models import Candidate, ScoreLabel
from langchain_lookup_knowledge.pipeline.rerank import rerank

ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=200)


@settings(max_examples=300, deadline=None)
@given(st.one_of(ASCII, st.text(max_size=200)))
def test_word_key_set_is_the_set_of_word_keys(text):
    assert word_key_set(text) == frozenset(word_keys(text))


def test_non_ascii_words_are_folded_one_by_one():
    # "İ" casefolds to "i" + a combining dot, which is no word character: folding the whole
    # text first would split "İstanbul" into two keys.
    text = "İstanbul Straße ＰＯＤＳ pods"
    assert word_key_set(text) == frozenset(word_keys(text))
    assert "stanbul" not in word_key_set(text)
    assert {"strasse", "pod"} <= word_key_set(text)


def test_a_chunk_text_is_read_once_and_its_terms_equal_a_fresh_reading():
    term_match._text_terms.cache_clear()
    text = "Node disk pressure: the kubelet evicts Pods"
    again = "".join(list(text))  # an equal text in another string object (as each lookup gets)
    assert again is not text
    first = term_match._TextTerms.of(text)
    assert term_match._TextTerms.of(again) is first
    assert first.words == frozenset(word_keys(text))
    assert first.folded == fold(text)
    info = term_match._text_terms.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    assert info.maxsize == term_match.TEXT_TERMS_CACHE_SIZE


def _hit(key: str, similarity: float, title: str, content: str) -> Candidate:
    label = ScoreLabel(
        path="sdk", metric="COSINE", raw=2 * similarity - 1, similarity=similarity, formula=""
    )
    return Candidate(
        evidence_key=key,
        source=key.split("#")[0],
        title=title,
        content=content,
        rank=1,
        score_label=label,
    )


def test_rerank_with_a_warm_memo_scores_as_with_a_cold_one():
    hits = [
        _hit("a.md#0", 0.7, "Pods pending", "Pods stay pending: no node has the resources."),
        _hit("b.md#1", 0.72, "Node disk full", "The node's disks are full; pods are evicted."),
        _hit("c.md#2", 0.65, "节点磁盘满了", "节点磁盘满了, pods evicted"),
    ]
    query = "why are my pods pending 节点磁盘"
    term_match._text_terms.cache_clear()
    cold = rerank(hits, query, None)
    warm = rerank(hits, query, None)
    assert term_match._text_terms.cache_info().hits > 0
    assert [(s.evidence_key, s.final, s.reasons, s.terms_found) for s in warm] == [
        (s.evidence_key, s.final, s.reasons, s.terms_found) for s in cold
    ]


WORDISH = st.text(alphabet="abcsS ", min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(ASCII, st.one_of(WORDISH, st.sampled_from(["bus", "bu", "class", "clas", "is", "ss"])))
def test_holds_word_key_says_what_the_word_key_set_says(text, key):
    from langchain_lookup_knowledge.core.text import holds_word_key, raw_words

    words = set(raw_words(text.lower()))
    for candidate in {key, key.strip().lower(), key.lower() + "s", key.lower().rstrip("s")}:
        assert holds_word_key(candidate, words) == (candidate in word_key_set(text))


def _line_hits_by_definition(line: str, terms: list[str]) -> int:
    words, folded = word_key_set(line), fold(line)
    return sum(1 for t in terms if (t in words if t.isascii() else t in folded))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(ASCII, st.text(max_size=120)),
    st.lists(st.one_of(WORDISH, st.sampled_from(["pod", "pods", "node", "class", "磁盘"]))),
)
def test_line_hits_counts_the_terms_a_line_holds_as_word_keys(line, terms):
    from langchain_lookup_knowledge.pipeline.excerpt import line_hits

    assert line_hits(line, terms) == _line_hits_by_definition(line, terms)


CJK_LINE = st.text(alphabet="磁盘节点满了配置插件 abcsSİı ＡＢ:`-", max_size=80)


@settings(max_examples=300, deadline=None)
@given(
    CJK_LINE,
    st.lists(st.one_of(WORDISH, st.sampled_from(["磁盘", "节点", "a", "ab", "i", "i̇", "配置"]))),
)
def test_held_terms_of_a_cjk_line_are_the_terms_it_holds_by_definition(line, terms):
    from langchain_lookup_knowledge.pipeline.excerpt import held_terms

    words, folded = word_key_set(line), fold(line)
    expected = [t for t in terms if (t in words if t.isascii() else t in folded)]
    assert held_terms(line, terms) == expected


def test_a_plural_line_word_counts_for_its_singular_term_and_a_short_one_does_not():
    from langchain_lookup_knowledge.pipeline.excerpt import line_hits

    assert line_hits("> Nodes and buses: the class is set", ["node", "buse", "class", "bu"]) == 3
