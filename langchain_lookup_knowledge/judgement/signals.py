"""What the judgement reads of a lookup besides its scores: the top similarity, the dense margin,
the legs' agreement, the question's terms the first block holds and the ones the knowledge base
never names (:class:`EvidenceSignals`).

The family is the path the lookup took, so the judgement never weighs a signal that path lacks:
``hybrid`` (dense + BM25 fused), ``dense`` (dense alone: a collection without BM25, a Milvus
server before 2.5), ``sparse`` (BM25 alone: a CJK question under the English-only embedder) and
``lexical`` (dense or hybrid on a question the embedder cannot read: its similarity is noise).

``dense_margin`` (how far the dense leg prefers the first block's document over the best other
one among the first five blocks) is computed for every lookup and reported in the evaluation
rows (``eval queries --json``'s ``signals``); the judgement does not weigh it.

The vocabulary signals read the knowledge base's own vocabulary (stored at ingest beside the
catalog): how much of the question's IDF mass is in terms no document holds (``unseen_idf``),
how much in those of them that are not everyday words of the language (``rare_unseen_idf``;
:func:`common_words`), and how much in those of them written in Latin script
(``rare_unseen_latin_idf``: a product or tool name, also in a Chinese question). A question's
word that is part of a longer KB term (an identifier's words run together: "notready" of
"KubeNodeNotReady") counts as seen. Without a vocabulary (a collection ingested before them, a
scoped lookup) they are 0 and ``vocabulary`` is False.

Example:
    >>> dense_margin([])
    0.0
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import TYPE_CHECKING

from langchain_lookup_knowledge.core.models import EvidenceBlock
from langchain_lookup_knowledge.core.term_match import query_term_matches, query_terms
from langchain_lookup_knowledge.core.text import cjk_bigrams, cjk_count, latin_word_count
from langchain_lookup_knowledge.core.vocabulary import (
    VOCABULARY_FEATURES,
    CommonWords,
    KbVocabulary,
    VocabularySignals,
    vocabulary_signals,
)
from langchain_lookup_knowledge.embeddings.choice import english_only_embedder
from langchain_lookup_knowledge.embeddings.onnx import ModelFiles
from langchain_lookup_knowledge.errors import ModelFilesError

if TYPE_CHECKING:
    from langchain_lookup_knowledge.settings import LookupSettings

__all__ = [
    "EvidenceSignals",
    "common_words",
    "dense_margin",
    "evidence_signals",
    "lookup_signals",
    "seen_rules",
    "similarity_readable",
]


@dataclass(frozen=True)
class EvidenceSignals:
    """What the judgement reads besides the scores, all from the final evidence blocks.

    Attributes:
        family: ``"hybrid"`` (dense + BM25 fused), ``"dense"`` (dense alone), ``"sparse"``
            (BM25 alone) or ``"lexical"`` (dense or hybrid on a question the embedder cannot
            read).
        similarity: The best dense similarity among the blocks.
        coverage: Share of the question's significant terms (words, CJK bigrams) in the first
            block (title, breadcrumb, content).
        title_overlap: Share of them in the first block's title or breadcrumb.
        agreement: Hybrid: the first block's fused rank score (1.0: first in both lists);
            dense: 1.0 when the first block is also the most similar; sparse: 0.
        l0_match: 1.0 when L0 matched the first block's document by title, keyword, alias or
            entity.
        bm25_per_term: BM25-only: the first block's BM25 score divided by the question's terms.
        dense_margin: The best dense similarity of the first block's document minus that of
            the best other document among the first five blocks (0.0 when no other document
            is among them): negative when the dense leg prefers another document to the one
            the lookup ranked first.
        terms: The question's significant terms.
        unseen_share: KB vocabulary: share of the question's terms no document holds.
        unseen_idf: KB vocabulary: their share of the question's IDF mass.
        rarest_idf: KB vocabulary: the rarest term the KB holds, its IDF over an unseen one's.
        rare_unseen_idf: KB vocabulary: the IDF share of the unseen terms that are not
            everyday words of the language (what a near miss names).
        rare_unseen_latin_idf: KB vocabulary: the part of ``rare_unseen_idf`` in
            Latin-script terms (a product or tool name, in an English or a Chinese question).
        vocabulary: Whether the KB vocabulary was read (else the five above are 0).
    """

    family: str
    similarity: float = 0.0
    coverage: float = 0.0
    title_overlap: float = 0.0
    agreement: float = 0.0
    l0_match: float = 0.0
    bm25_per_term: float = 0.0
    dense_margin: float = 0.0
    terms: int = 0
    unseen_share: float = 0.0
    unseen_idf: float = 0.0
    rarest_idf: float = 0.0
    rare_unseen_idf: float = 0.0
    rare_unseen_latin_idf: float = 0.0
    vocabulary: bool = False

    def as_dict(self) -> dict[str, float | str]:
        """Rounded, for traces and evaluation reports."""
        values = ((k, getattr(self, k)) for k in _field_names(type(self)))  # scalars: no copy
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in values}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, in order (read once per class, not once per lookup)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


_L0_MATCH_REASONS = frozenset({"l0_title", "l0_keyword", "l0_alias", "l0_entity"})


_AGREEMENT_TOP = 3


_MARGIN_TOP = 5  # the blocks dense_margin compares: the tool's default top_k


def similarity_readable(settings: LookupSettings, query: str) -> bool:
    """False when the embedder cannot read ``query``: mostly CJK under the bundled English-only
    model (the condition of the CJK rule), so a dense similarity of it is noise.

    Example:
        >>> from langchain_lookup_knowledge.settings import LookupSettings
        >>> similarity_readable(LookupSettings(), "pod 一直重启怎么办")
        False
        >>> similarity_readable(LookupSettings(), "pod keeps restarting")
        True
    """
    cjk = cjk_count(query)
    if cjk == 0 or cjk < latin_word_count(query):
        return True
    return not english_only_embedder(settings)


@lru_cache(maxsize=1)
def common_words() -> CommonWords:
    """The everyday words ``rare_unseen_idf`` leaves out: the whole Latin words (2+ letters
    or digits) of the bundled embedder's WordPiece vocabulary (all-MiniLM-L6-v2's 30,522
    entries: "keep", "never", "status"; not "istio", "kerberos", "hnsw"), and Chinese words
    jieba's dictionary counts often. Without the tokenizer file, no Latin word is common.

    Example:
        >>> common_words().holds("keep"), common_words().holds("spnego")
        (True, False)
    """
    try:
        tokenizer = ModelFiles.pinned_default().tokenizer
        vocab = json.loads(tokenizer.read_text(encoding="utf-8"))["model"]["vocab"]
    except (ModelFilesError, OSError, ValueError, KeyError, TypeError):
        return CommonWords()
    return CommonWords(
        latin=frozenset(w for w in vocab if len(w) > 1 and w.isascii() and w.isalnum())
    )


def evidence_signals(
    blocks: Sequence[EvidenceBlock],
    query: str,
    *,
    readable: bool = True,
    vocabulary: KbVocabulary | None = None,
    vocabulary_rules: str = "exact",
) -> EvidenceSignals | None:
    """The judgement's signals for ``blocks`` (best first) of ``query``; None without blocks.

    ``readable``: whether the embedder reads the question (:func:`similarity_readable`); a
    dense or hybrid lookup of a question it cannot read is of the ``lexical`` family.
    ``vocabulary``: the knowledge base's (:mod:`~langchain_lookup_knowledge.core.vocabulary`);
    without it the vocabulary signals are 0 and ``vocabulary`` is False.
    ``vocabulary_rules``: ``exact`` or ``operator`` (:func:`seen_rules`).

    Example:
        >>> from langchain_lookup_knowledge.core.models import ScoreLabel
        >>> label = ScoreLabel(path="sdk", metric="COSINE", raw=0.6, similarity=0.6, formula="")
        >>> block = EvidenceBlock(evidence_key="a.md#0", source="a.md", title="Disk full",
        ...                       content="The node disk is full.", score_label=label)
        >>> signals = evidence_signals([block], "node disk full")
        >>> signals.coverage, signals.title_overlap, signals.agreement
        (1.0, 0.6667, 1.0)
    """
    unseen = (
        vocabulary_signals(query, vocabulary, common_words(), **seen_rules(vocabulary_rules))
        if vocabulary is not None
        else None
    )
    return lookup_signals(blocks, query, readable=readable, unseen=unseen)


def lookup_signals(
    blocks: Sequence[EvidenceBlock],
    query: str,
    *,
    readable: bool,
    unseen: VocabularySignals | None,
) -> EvidenceSignals | None:
    """:func:`evidence_signals` with the question's vocabulary signals already read (None:
    no vocabulary)."""
    labelled = [b for b in blocks if b.score_label is not None]
    if not labelled:
        return None
    first = labelled[0]
    label = first.score_label
    assert label is not None
    terms = query_terms(query)
    bigrams = frozenset(cjk_bigrams(query))
    in_heading, covered = query_term_matches(
        terms, bigrams, f"{first.title}\n{first.breadcrumb}", first.content
    )
    similarities = [_finite(b.score_label.similarity) for b in labelled if b.score_label]
    family = {"sparse": "sparse", "hybrid": "hybrid"}.get(label.kind, "dense")
    if family != "sparse" and not readable:
        family = "lexical"  # its dense similarity is noise
    if label.kind == "hybrid":
        agreement = _finite(label.rank_score or 0.0)
    elif family == "dense":
        top = labelled[:_AGREEMENT_TOP]
        agreement = 1.0 if label.similarity >= max(similarities[: len(top)]) else 0.0
    else:
        agreement = 0.0
    bm25 = _finite(abs(label.raw)) / max(len(terms), 1) if family == "sparse" else 0.0
    margin = dense_margin(labelled[:_MARGIN_TOP])
    # the vocabulary signals by name (without a vocabulary: 0.0, the fields' default)
    seen_by_kb = (
        {name: getattr(unseen, name) for name in VOCABULARY_FEATURES} if unseen is not None else {}
    )
    return EvidenceSignals(
        family=family,
        similarity=max(similarities),
        coverage=round(len(covered) / max(len(terms), 1), 4),
        title_overlap=round(len(in_heading) / max(len(terms), 1), 4),
        agreement=agreement,
        l0_match=1.0 if any(r.kind in _L0_MATCH_REASONS for r in first.hit_reasons) else 0.0,
        bm25_per_term=bm25,
        dense_margin=margin,
        terms=len(terms),
        vocabulary=unseen is not None,
        **seen_by_kb,
    )


def _finite(score: float) -> float:
    """A score as the judgement reads it: a non-finite one (a NaN vector, a corrupted row) is 0,
    as in the rerank's base, never certainty."""
    return score if math.isfinite(score) else 0.0


def seen_rules(vocabulary_rules: str) -> dict[str, bool]:
    """The :func:`vocabulary_signals` switches of ``evidence_vocabulary_rules``: ``exact``
    none; ``operator`` how operators write a KB's words (typos, CamelCase words of KB words,
    two KB words run together) and pasted values (a term with a digit is no unseen name).

    Example:
        >>> seen_rules("exact"), sorted(seen_rules("operator"))
        ({}, ['compounds', 'identifiers', 'typos', 'values'])
    """
    if vocabulary_rules == "operator":
        return {"typos": True, "identifiers": True, "compounds": True, "values": True}
    return {}


def dense_margin(blocks: Sequence[EvidenceBlock]) -> float:
    """The best dense similarity of the first block's document minus that of the best other
    document among ``blocks`` (best first, each with a score label); 0.0 when no other
    document is among them. Negative: the dense leg prefers another document to the one
    ranked first.

    Example:
        >>> from langchain_lookup_knowledge.core.models import ScoreLabel
        >>> def at(source, similarity):
        ...     label = ScoreLabel(path="sdk", metric="COSINE", raw=similarity,
        ...                        similarity=similarity, formula="")
        ...     return EvidenceBlock(evidence_key=f"{source}#0", source=source, title="",
        ...                          content="", score_label=label)
        >>> round(dense_margin([at("a.md", 0.5), at("a.md", 0.7), at("b.md", 0.6)]), 2)
        0.1
        >>> round(dense_margin([at("a.md", 0.5), at("b.md", 0.6)]), 2)
        -0.1
    """
    first = blocks[0].source if blocks else None
    mine: float | None = None
    others: float | None = None
    for b in blocks:
        if b.score_label is None:
            continue
        s = _finite(b.score_label.similarity)
        if b.source == first:
            mine = s if mine is None else max(mine, s)
        else:
            others = s if others is None else max(others, s)
    if mine is None or others is None:
        return 0.0
    return round(mine - others, 4)
