"""What a record keeps of the user's question: ``record_query_text`` = full | hash | none.

Under ``hash`` and ``none`` the ``query`` column is empty and ``retrieval_details`` is scrubbed
by the kind of each text it holds, not by a list of fields:

- **the question itself** (a text that is nothing but the question, or its words): ``None``;
- **a closed value** (a level, a status, a mode, an attempt name: one of the contract's
  enumerations) and **the knowledge base's own text** (sources, evidence keys, titles,
  previews, filters, L0 hints: the catalog titles, keywords, domains and entities the question
  matched): kept, they are the same whoever asks;
- **everything else is text the pipeline wrote** (notes, hit reasons, rerank and tie-break
  details, decision notes, errors): every word of the question in it (stopwords aside) is
  masked, and a list of nothing but masked words is cut (``"2/7 query terms: disk, full"``
  -> ``"2/7 query terms"``).

A new field is therefore scrubbed unless it is of a kept kind. ``hash`` keeps a SHA-256 of the
normalized question in ``query_hash``, so repeats of one question still count as one.

Example:
    >>> policy = QueryTextPolicy("hash")
    >>> query, details = policy.apply("Disk  FULL", {"query_transform": {"query": "Disk  FULL"},
    ...     "notes": ["unseen: disk (not everyday words: disk); relevance high"]})
    >>> query, details["query_transform"]["query"], details["notes"]
    ('', None, ['unseen (not everyday words); relevance high'])
    >>> policy.hash("disk full") == query_hash("Disk FULL")
    True
"""

from __future__ import annotations

import hashlib
import re
from typing import Any, Literal, cast, get_args

from langchain_lookup_knowledge.core.models import (
    AttemptStatus,
    ErrorKind,
    EvidenceStatus,
    FallbackReason,
    RelevanceLevel,
    RetrievalLayer,
)
from langchain_lookup_knowledge.core.text import (
    CJK_CHARS,
    cjk_bigrams,
    fold,
    significant,
    singular,
    word_keys,
)

QueryTextMode = Literal["full", "hash", "none"]
MASK = "***"

KNOWLEDGE_BASE_TEXT = frozenset(
    {
        "source",
        "sources",
        "evidence_key",
        "evidenceKey",
        "title",
        "breadcrumb",
        "category",
        "content_preview",
        "contentPreview",
        "included_sources",
        "omitted_sources",
        "filter",
        "category_filter",
        "caller_filter",
        "l0_hints",
        "l0_matched_titles",
        "l0_matched_keywords",
        "l0_domains",
        "l0_entities",
    }
)
"""The fields that hold the knowledge base's (or the deployment's) own text, not the asker's."""

CLOSED_VALUES = frozenset(
    value
    for closed in (
        RetrievalLayer,
        RelevanceLevel,
        EvidenceStatus,
        FallbackReason,
        AttemptStatus,
        ErrorKind,
        Literal["filtered", "unfiltered", "unfiltered_retry", "dense", "hybrid", "sparse"],
        Literal["vectorstore", "sdk", "embedding", "milvus", "full", "hash", "none"],
    )
    for value in get_args(closed)
)
"""The values of the contract's enumerations: the same for every question, always kept."""

_TOKEN = re.compile(rf"[^\W_{CJK_CHARS}]+|[{CJK_CHARS}]+")
_MASKED_ITEM = rf"{re.escape(MASK)}(?:\s*\([\d.]+\))?"
_MASKED_LIST = re.compile(rf":\s*{_MASKED_ITEM}(?:\s*,\s*{_MASKED_ITEM})*(?:\s*,\s*\.\.\.)?")
_ONLY_MASKS = re.compile(rf"^[\s\W]*(?:{re.escape(MASK)}[\s\W]*)+$")


def normalize_query(text: str) -> str:
    """The form a question is hashed in: case-folded, whitespace collapsed."""
    return " ".join(text.casefold().split())


def query_hash(text: str) -> str:
    """SHA-256 (hex) of the normalized question: equal for repeats of one question."""
    return hashlib.sha256(normalize_query(text).encode("utf-8")).hexdigest()


class _QuestionWords:
    """Masks the words of one question in a text (as typed, folded, singular, CJK bigrams)."""

    def __init__(self, question: str) -> None:
        self.question = normalize_query(question)
        self.words = {fold(t) for t in _TOKEN.findall(question)} | set(word_keys(question))
        self.bigrams = set(cjk_bigrams(question))

    def _is_question_word(self, token: str) -> bool:
        folded = fold(token)
        if significant(folded) and (folded in self.words or singular(folded) in self.words):
            return True
        return bool(self.bigrams) and any(g in self.bigrams for g in cjk_bigrams(token))

    def mask(self, text: str) -> str | None:
        """``text`` with the question's words masked; None when it held nothing else."""
        if normalize_query(text) == self.question:
            return None
        masked = _TOKEN.sub(lambda m: MASK if self._is_question_word(m[0]) else m[0], text)
        if masked == text:
            return text
        if _ONLY_MASKS.match(masked):
            return None
        return _MASKED_LIST.sub("", masked)

    def scrub(self, value: Any, kept: bool = False) -> Any:
        """``value`` (a JSON-like record part) with every text of the pipeline's masked."""
        if isinstance(value, dict):
            return {k: self.scrub(v, kept or k in KNOWLEDGE_BASE_TEXT) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.scrub(v, kept) for v in value]
        if isinstance(value, str) and not kept and value not in CLOSED_VALUES:
            return self.mask(value)
        return value


class QueryTextPolicy:
    """Applies one ``record_query_text`` mode to a record before it is written."""

    def __init__(self, mode: str = "full") -> None:
        if mode not in get_args(QueryTextMode):
            raise ValueError(f"record_query_text must be full, hash or none (got {mode!r})")
        self.mode = cast(QueryTextMode, mode)

    def hash(self, text: str) -> str | None:
        """The ``query_hash`` column: None under ``none`` (nothing of the question is kept)."""
        return None if self.mode == "none" else query_hash(text)

    def apply(self, query: str, details: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """The ``query`` column and the ``retrieval_details`` to store under this mode."""
        if self.mode == "full":
            return query, details
        scrubbed: dict[str, Any] = _QuestionWords(query).scrub(details)
        scrubbed["query_text"] = self.mode
        return "", scrubbed
