"""L0 catalog matching: word boundaries, CJK substrings, CamelCase titles, domains, robustness."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline.l0 import STOPWORDS, L0Match, L0Matcher, single_domain
from langchain_lookup_knowledge.pipeline.models import L0Hints

DNS = CatalogEntry(
    source="networking/dns.md",
    title="DNS resolution failure",
    category="networking",
    keywords=("dns", "cert-manager", "evicted keys", "DNS 解析失败", "日志轮转"),
    entities=("node",),
)
CRASHLOOP = CatalogEntry(
    source="kubernetes/crashloop.md",
    title="Pod stuck in CrashLoopBackOff",
    category="kubernetes",
    aliases=("KubePodCrashLooping",),
    entities=("Kubernetes",),
)
ALERT = CatalogEntry(source="alerts/kube-pod.md", title="KubePodCrashLooping", category="alerts")
STORAGE = CatalogEntry(
    source="storage/pvc.md",
    title="PVC pending",
    category="object-storage",
    entities=("Kubernetes",),
)
NOISE = CatalogEntry(
    source="misc/noise.md",
    title="a",
    category="",
    keywords=("the", "how to", "x", "我", ""),
    aliases=("I",),
)
CATALOG = [DNS, CRASHLOOP, ALERT, STORAGE, NOISE]


@pytest.fixture(scope="module")
def matcher() -> L0Matcher:
    return L0Matcher(CATALOG)


def terms(found: L0Match, source: str) -> set[tuple[str, str]]:
    return set(found.matched.get(source, []))


def test_latin_term_matches_whole_words_only(matcher: L0Matcher) -> None:
    assert ("keyword", "dns") in terms(matcher.match("DNS resolution is slow"), DNS.source)
    assert ("keyword", "dns") not in terms(matcher.match("coredns pods restart"), DNS.source)
    assert ("entity", "node") not in terms(matcher.match("upgrade nodejs"), DNS.source)


def test_plural_s_is_ignored_on_both_sides(matcher: L0Matcher) -> None:
    assert ("entity", "node") in terms(matcher.match("two nodes are down"), DNS.source)
    assert ("keyword", "evicted keys") in terms(matcher.match("one evicted key"), DNS.source)
    # short words keep their s: "dns" is not the plural of "dn"
    assert DNS.source not in matcher.match("dn").matched


def test_punctuation_separates_words_in_terms(matcher: L0Matcher) -> None:
    for query in ("cert-manager did not renew", "Cert Manager failed"):
        assert ("keyword", "cert-manager") in terms(matcher.match(query), DNS.source)


def test_matching_ignores_case_and_character_width(matcher: L0Matcher) -> None:
    assert ("keyword", "dns") in terms(matcher.match("ＤＮＳ broken"), DNS.source)


def test_cjk_term_matches_as_substring_without_spaces(matcher: L0Matcher) -> None:
    found = matcher.match("怎么配置日志轮转策略")
    assert ("keyword", "日志轮转") in terms(found, DNS.source)
    found = matcher.match("集群里dns解析失败了")
    assert ("keyword", "DNS 解析失败") in terms(found, DNS.source)


def test_cjk_term_keeps_word_boundary_at_its_latin_edge(matcher: L0Matcher) -> None:
    assert ("keyword", "DNS 解析失败") not in terms(matcher.match("coredns解析失败"), DNS.source)


def test_camelcase_alias_matches_verbatim(matcher: L0Matcher) -> None:
    found = matcher.match("alert kubepodcrashlooping fired")
    assert ("alias", "KubePodCrashLooping") in terms(found, CRASHLOOP.source)
    assert "KubePodCrashLooping" in found.hints.matched_keywords


def test_camelcase_title_matches_by_its_split_words(matcher: L0Matcher) -> None:
    assert ("title", ALERT.title) in terms(
        matcher.match("kube pod crash looping again"), ALERT.source
    )
    assert ("title", ALERT.title) in terms(matcher.match("KubePodCrashLooping"), ALERT.source)
    assert ALERT.source not in matcher.match("pod crash looping").matched


def test_title_matches_when_all_significant_words_appear(matcher: L0Matcher) -> None:
    found = matcher.match("my pod is stuck, status CrashLoopBackOff")
    assert ("title", CRASHLOOP.title) in terms(found, CRASHLOOP.source)
    assert found.hints.matched_titles == [CRASHLOOP.title]
    assert CRASHLOOP.source not in matcher.match("my pod is stuck").matched


def test_query_camelcase_words_count_for_title_words(matcher: L0Matcher) -> None:
    found = matcher.match("DnsResolutionFailure in prod")
    assert ("title", DNS.title) in terms(found, DNS.source)


def test_stopwords_and_single_characters_never_match(matcher: L0Matcher) -> None:
    found = matcher.match("how to fix a pod? I think x is 我")
    assert NOISE.source not in found.matched


def test_named_category_is_a_domain_without_matching_sources(matcher: L0Matcher) -> None:
    found = matcher.match("object storage latency")
    assert found.hints.domains == ["object-storage"]
    assert found.named_domains == ("object-storage",)
    assert found.matched == {}


def test_matched_documents_contribute_their_categories(matcher: L0Matcher) -> None:
    found = matcher.match("kubernetes pvc pending")
    assert found.hints.domains == ["kubernetes", "object-storage"]
    assert found.hints.entities == ["Kubernetes"]
    assert found.hints.matched_sources == sorted([CRASHLOOP.source, STORAGE.source])
    assert ("category", "kubernetes") in terms(found, CRASHLOOP.source)


def test_no_match_gives_empty_hints(matcher: L0Matcher) -> None:
    found = matcher.match("recipe for chocolate cake")
    assert found.hints.empty
    assert found.matched == {}


def test_result_does_not_depend_on_catalog_order() -> None:
    shuffled = CATALOG[:]
    random.Random(7).shuffle(shuffled)
    query = "kubernetes node dns cert-manager KubePodCrashLooping pvc pending"
    assert L0Matcher(shuffled).match(query) == L0Matcher(CATALOG).match(query)


@pytest.mark.parametrize(
    ("domains", "expected"),
    [
        ([], None),
        (["kubernetes"], "kubernetes"),
        (["kubernetes", " "], "kubernetes"),
        (["kubernetes", "storage"], None),
    ],
)
def test_single_domain_only_when_exactly_one_nonblank(
    domains: list[str], expected: str | None
) -> None:
    assert single_domain(L0Hints(domains=domains)) == expected


texts = st.text(max_size=40)
entries = st.builds(
    CatalogEntry,
    source=st.text(min_size=1, max_size=10),
    title=texts,
    category=texts,
    keywords=st.lists(texts, max_size=4).map(tuple),
    entities=st.lists(texts, max_size=3).map(tuple),
    aliases=st.lists(texts, max_size=3).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(catalog=st.lists(entries, max_size=6), query=st.text(max_size=200))
def test_matcher_never_crashes_on_any_unicode(catalog: list[CatalogEntry], query: str) -> None:
    found = L0Matcher(catalog).match(query)
    assert set(found.matched) <= {e.source for e in catalog}
    assert found.hints.matched_sources == sorted(found.matched)
    assert found.hints.domains == sorted(set(found.hints.domains))


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz节点磁盘满", min_size=2, max_size=8)


@settings(max_examples=200, deadline=None)
@given(term_words=st.lists(words, min_size=1, max_size=3), left=words, right=words)
def test_a_keyword_written_in_the_query_is_found(
    term_words: list[str], left: str, right: str
) -> None:
    keyword = " ".join(term_words)
    entry = CatalogEntry(source="s.md", title="", category="", keywords=(keyword,))
    found = L0Matcher([entry]).match(f"{left} {keyword.upper()} {right}")
    if any(w not in STOPWORDS for w in term_words):
        assert ("keyword", keyword) in found.matched.get("s.md", [])
