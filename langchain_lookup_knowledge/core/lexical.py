"""The lexical form of English text for BM25: Snowball stems and identifier parts.

Milvus Lite's analyzers are ``standard`` and ``jieba`` only (a Milvus 2.5+ server also has
``english``), so "restarting" never meets "restarts" and ``KubeNodeReadinessFlapping`` is one
token no question spells. The client writes the lexical form of each chunk into the BM25 input
field (the display text and the dense vector keep the original) and searches the lexical form of
the question, made by the same function:

- a word becomes its Snowball English stem (``flapping`` -> ``flap``);
- an identifier (CamelCase, or words joined by ``_``, ``-`` or ``.``) keeps its whole token,
  lowercased and without separators, and adds each part's stem;
- everything else (CJK text, punctuation) is kept as it is.

A collection records the form it was built with (:class:`LexicalForm`, in the name of its BM25
function: Milvus Lite keeps no field descriptions), so a question is always stemmed the way the
chunks were.

Example:
    >>> lexical_text("KubeNodeReadinessFlapping: nodes keep flapping")
    'kubenodereadinessflapping kube node readi flap: node keep flap'
    >>> lexical_text("limit-count and proxy_cache")
    'limitcount limit count and proxycache proxi cach'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import Stemmer

from langchain_lookup_knowledge.core.text import camel_parts

__all__ = ["LEXICAL_VERSION", "LexicalForm", "identifier_parts", "lexical_text", "stem"]

LEXICAL_VERSION = 1
"""Bumped whenever the same text would get another lexical form (a collection built with another
version is refused with what to do, never searched with mismatched terms)."""

# A Latin "compound": letter/digit runs joined by _, - or . (no space): an identifier or a word.
_COMPOUND = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")
_SEPARATOR = re.compile(r"[._-]")
_CAMEL_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")  # as core.text's
_STEMMER = Stemmer.Stemmer("english")
_FORM = re.compile(r"lex(\d+)s([01])i([01])$")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a lowercase word (numbers and 1-2 letters as they are).

    Example:
        >>> stem("restarting"), stem("certificates"), stem("k8s")
        ('restart', 'certif', 'k8s')
    """
    if len(word) < 3 or not word.isalpha():
        return word
    return str(_STEMMER.stemWord(word))


def identifier_parts(token: str) -> tuple[str, ...]:
    """The lowercase words of an identifier; () for a plain word.

    Separators (``_``, ``-``, ``.``) split first, then CamelCase (:func:`camel_parts`).

    Example:
        >>> identifier_parts("KubeNodeReadinessFlapping")
        ('kube', 'node', 'readiness', 'flapping')
        >>> identifier_parts("proxy_cache"), identifier_parts("limit-count")
        (('proxy', 'cache'), ('limit', 'count'))
        >>> identifier_parts("config.yaml"), identifier_parts("pod")
        (('config', 'yaml'), ())
    """
    pieces = [p for p in _SEPARATOR.split(token) if p]
    parts: list[str] = []
    for piece in pieces:
        if camel_parts(piece):  # CamelCase; its words as written (camel_parts drops a plural s)
            parts.extend(w.lower() for w in _CAMEL_WORD.findall(piece))
        else:
            parts.append(piece.lower())
    return tuple(parts) if len(parts) > 1 else ()


@dataclass(frozen=True)
class LexicalForm:
    """How a collection's BM25 input was made from the chunk text.

    Attributes:
        stem: Snowball English stems in place of words.
        split_identifiers: Identifiers add their parts (their whole token is kept).

    Example:
        >>> form = LexicalForm(stem=True, split_identifiers=False)
        >>> form.marker, LexicalForm.parse("lexical_bm25_" + form.marker) == form
        ('lex1s1i0', True)
        >>> form.apply("Pods restarting in proxy_cache")
        'pod restart in proxy_cache'
    """

    stem: bool = True
    split_identifiers: bool = True

    @property
    def marker(self) -> str:
        """What the collection records (the end of its BM25 function's name)."""
        return f"lex{LEXICAL_VERSION}s{int(self.stem)}i{int(self.split_identifiers)}"

    @classmethod
    def parse(cls, marker: str) -> LexicalForm | None:
        """The form a name ending in a :attr:`marker` names; ``None`` when it names none.

        Raises:
            ValueError: the marker is of another :data:`LEXICAL_VERSION` (re-ingest).
        """
        match = _FORM.search(marker or "")
        if match is None:
            return None
        version = int(match.group(1))
        if version != LEXICAL_VERSION:
            msg = (
                f"its BM25 text was written with lexical form version {version}; this package "
                f"writes version {LEXICAL_VERSION}"
            )
            raise ValueError(msg)
        return cls(stem=match.group(2) == "1", split_identifiers=match.group(3) == "1")

    def apply(self, text: str) -> str:
        """The lexical form of ``text`` (see the module docstring)."""
        return _COMPOUND.sub(lambda m: self._token(m.group(0)), text)

    def _token(self, token: str) -> str:
        parts = identifier_parts(token) if self.split_identifiers else ()
        if not parts:
            return self._word(token.lower())
        whole = "".join(parts)
        return " ".join([whole, *(self._word(p) for p in parts)])

    def _word(self, word: str) -> str:
        return stem(word) if self.stem else word


_DEFAULT = LexicalForm()


def lexical_text(text: str) -> str:
    """``text`` in the default lexical form (stems and identifier parts).

    Example:
        >>> lexical_text("Pods are restarting")
        'pod are restart'
    """
    return _DEFAULT.apply(text)
