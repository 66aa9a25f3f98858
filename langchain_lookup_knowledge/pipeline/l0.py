"""L0: deterministic keyword/frontmatter matching of a query against the knowledge catalog.

L0 output steers L1 (an optional category filter, rerank boosts, trace hints); it is never evidence.

Matching rules (case-insensitive: both sides are NFKC-normalized and casefolded):

* **Latin-script terms** (no CJK character) match on whole words: the term's words must appear
  contiguously in the query's words. A word is a run of letters/digits; ``-``, ``_``, ``.``,
  ``/`` and other punctuation separate words, so ``cert-manager`` also matches "cert manager".
  A simple plural ``s`` is ignored on both sides for words of 4+ characters not ending in
  ``ss``: "nodes" matches "node", "dns" stays "dns", and "node" does not match "nodejs".
* **Terms with CJK characters** match as substrings, after whitespace next to CJK characters is
  removed on both sides ("DNS 解析失败" matches "dns解析失败"); where the term begins or ends with
  a Latin letter/digit, that edge must be a word boundary in the query.
* **Titles** match when the whole title appears (as above), or, for titles of 2+ significant
  words, when every significant word appears anywhere in the query (stopwords ignored). A
  CamelCase word counts as its parts: "KubePodCrashLooping" is satisfied by the word itself or by
  all of "kube", "pod", "crash", "looping"; CamelCase words in the query are split the same way.
* **Keywords, aliases, entities** match when the term appears. A CamelCase alias such as
  ``KubePodCrashLooping`` is one word, so it matches when it appears verbatim.
* **Categories**: a category named in the query as words (``-``/``_`` read as spaces) becomes a
  domain. A matched document (by title, keyword, alias or entity) contributes its category.
* Noise control: Latin terms whose every word is a stopword or shorter than 2 characters are
  ignored, and so are CJK terms shorter than 2 characters.

Lookups go through inverted indexes (first word of a phrase; first CJK bigram of a CJK term;
the rarest word of a title), so a query costs about its own length, not the catalog's size.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence

from langchain_lookup_knowledge.core.models import L0Hints
from langchain_lookup_knowledge.core.text import (
    CJK_STOP_CHARS,
    STOPWORDS,
    camel_parts,
    cjk_bigrams,
    compact,
    contains_bounded,
    fold,
    has_cjk,
    raw_words,
    significant,
    singular,
    word_key_set,
    word_keys,
)
from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
from langchain_lookup_knowledge.pipeline.l0_match import KINDS, L0Match, single_domain
from langchain_lookup_knowledge.pipeline.l0_rules import TermRef, TitleRule, cjk_index_key

__all__ = [
    "CJK_STOP_CHARS",
    "KINDS",
    "STOPWORDS",
    "L0Match",
    "L0Matcher",
    "cjk_bigrams",
    "fold",
    "single_domain",
    "word_key_set",
    "word_keys",
]


_KIND_RANK = {kind: rank for rank, kind in enumerate(KINDS)}


class L0Matcher:
    """Matches queries against a catalog; build once, call :meth:`match` per query.

    Args:
        entries: The catalog (one entry per document).

    Example:
        >>> from langchain_lookup_knowledge.knowledge.catalog import CatalogEntry
        >>> matcher = L0Matcher([CatalogEntry(source="k8s/node.md", title="Node NotReady",
        ...     category="kubernetes", keywords=("node down",), aliases=("KubeNodeNotReady",))])
        >>> found = matcher.match("KubeNodeNotReady fired: two nodes down")
        >>> found.hints.matched_keywords, found.hints.domains
        (['KubeNodeNotReady', 'node down'], ['kubernetes'])
        >>> single_domain(found.hints)
        'kubernetes'
    """

    def __init__(self, entries: Sequence[CatalogEntry]) -> None:
        self._entries: tuple[CatalogEntry, ...] = tuple(entries)
        # first word -> word sequence -> refs
        self._phrases: dict[str, dict[tuple[str, ...], list[TermRef]]] = defaultdict(dict)
        # key bigram -> compact CJK term -> refs
        self._cjk_terms: dict[str, dict[str, list[TermRef]]] = defaultdict(dict)
        # anchor word / anchor bigram -> title rules
        self._title_rules_by_word: dict[str, list[TitleRule]] = defaultdict(list)
        self._title_rules_by_bigram: dict[str, list[TitleRule]] = defaultdict(list)
        # folded category -> original spellings
        self._categories: dict[str, set[str]] = defaultdict(set)

        rules: list[TitleRule] = []
        for index, entry in enumerate(self._entries):
            self._add_term(TermRef(index, "title", entry.title))
            for kind, terms in (
                ("keyword", entry.keywords),
                ("alias", entry.aliases),
                ("entity", entry.entities),
            ):
                for term in terms:
                    self._add_term(TermRef(index, kind, term))
            category = entry.category.strip()
            if category:
                self._categories[fold(category)].add(category)
                spoken = category.replace("-", " ").replace("_", " ")
                self._add_term(TermRef(-1, "category", category), text=spoken)
            rule = TitleRule.of(index, entry.title)
            if rule is not None:
                rules.append(rule)
        self._index_title_rules(rules)

    @property
    def entries(self) -> tuple[CatalogEntry, ...]:
        """The catalog this matcher was built from."""
        return self._entries

    def _add_term(self, ref: TermRef, *, text: str | None = None) -> None:
        text = ref.term if text is None else text
        if not isinstance(text, str) or not text.strip():
            return
        folded = fold(text)
        if has_cjk(folded):
            term = compact(folded)
            if len(term) >= 2:
                refs = self._cjk_terms[cjk_index_key(term)].setdefault(term, [])
                if ref not in refs:
                    refs.append(ref)
            return
        folded_words = [w.casefold() for w in raw_words(unicodedata.normalize("NFKC", text))]
        if not any(significant(w) for w in folded_words):
            return
        words = tuple(singular(w) for w in folded_words)
        refs = self._phrases[words[0]].setdefault(words, [])
        if ref not in refs:
            refs.append(ref)

    def _index_title_rules(self, rules: list[TitleRule]) -> None:
        # Anchor each rule on its rarest word so a query only verifies plausible titles.
        frequency: dict[str, int] = defaultdict(int)
        for rule in rules:
            for group in rule.words:
                frequency[group.whole] += 1
        for rule in rules:
            if rule.words:
                anchor = min(rule.words, key=lambda g: (frequency[g.whole], g.whole))
                self._title_rules_by_word[anchor.whole].append(rule)
                if anchor.parts:
                    self._title_rules_by_word[anchor.parts[0]].append(rule)
            else:
                self._title_rules_by_bigram[rule.cjk_runs[0][:2]].append(rule)

    def match(self, query: str) -> L0Match:
        """Match ``query`` against the catalog.

        Args:
            query: The user's query, any text.

        Returns:
            The hints and the per-source match details; empty when nothing matched.
        """
        nfkc = unicodedata.normalize("NFKC", query)
        written = raw_words(nfkc)
        words = [singular(w.casefold()) for w in written]
        found: dict[int, set[tuple[str, str]]] = defaultdict(set)
        named: set[str] = set()

        def record(refs: Iterable[TermRef]) -> None:
            for ref in refs:
                if ref.entry < 0:
                    named.add(ref.term)
                else:
                    found[ref.entry].add((ref.kind, ref.term))

        for i, word in enumerate(words):
            for sequence, refs in self._phrases.get(word, {}).items():
                if len(sequence) == 1 or tuple(words[i : i + len(sequence)]) == sequence:
                    record(refs)

        compact_query = ""
        bigrams: set[str] = set()
        if has_cjk(nfkc):
            compact_query = compact(nfkc.casefold())
            bigrams = {compact_query[i : i + 2] for i in range(len(compact_query) - 1)}
            for bigram in bigrams:
                for term, refs in self._cjk_terms.get(bigram, {}).items():
                    if contains_bounded(compact_query, term):
                        record(refs)

        query_words = set(words)
        for raw in written:
            query_words.update(camel_parts(raw))
        candidates: dict[int, TitleRule] = {}
        for word in query_words:
            for rule in self._title_rules_by_word.get(word, ()):
                candidates[rule.entry] = rule
        for bigram in bigrams:
            for rule in self._title_rules_by_bigram.get(bigram, ()):
                candidates[rule.entry] = rule
        for index, rule in candidates.items():
            if rule.satisfied(query_words, compact_query):
                found[index].add(("title", self._entries[index].title))

        return self._result(found, named)

    def _result(self, found: dict[int, set[tuple[str, str]]], named: set[str]) -> L0Match:
        named_folded = {fold(c) for c in named}
        matched: dict[str, set[tuple[str, str]]] = defaultdict(set)
        domains: set[str] = set(named)
        for index, pairs in found.items():
            entry = self._entries[index]
            matched[entry.source].update(pairs)
            category = entry.category.strip()
            if category:
                domains.add(category)
                if fold(category) in named_folded:
                    matched[entry.source].add(("category", category))

        def ordered(pairs: set[tuple[str, str]]) -> list[tuple[str, str]]:
            return sorted(pairs, key=lambda p: (_KIND_RANK.get(p[0], 99), fold(p[1]), p[1]))

        by_source = {source: ordered(pairs) for source, pairs in sorted(matched.items())}
        terms: dict[str, dict[str, str]] = defaultdict(dict)
        for source_pairs in by_source.values():
            for kind, term in source_pairs:
                bucket = "keyword" if kind == "alias" else kind
                terms[bucket].setdefault(fold(term), term)

        def listed(bucket: str) -> list[str]:
            return [terms[bucket][k] for k in sorted(terms[bucket])]

        hints = L0Hints(
            matched_titles=listed("title"),
            matched_keywords=listed("keyword"),
            domains=sorted(domains),
            entities=listed("entity"),
            matched_sources=list(by_source),
        )
        return L0Match(hints=hints, matched=by_source, named_domains=tuple(sorted(named)))
