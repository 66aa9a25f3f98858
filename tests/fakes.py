"""Test fakes, named as such. Only used where a test must force a ranking or a similarity.

``DirectionEmbeddings`` is a FAKE embedder with deterministic "direction" vectors:

* A text holding a directive such as ``[[alpha=0.40 beta=0.20]]`` gets exactly those weights
  on the named axes, and the rest of the unit length on a private "document residual" axis.
  A query that is just the word ``alpha`` therefore has cosine similarity 0.40 with it.
* A text without a directive gets weight 1 on each axis word it contains (whole words,
  case-insensitive), normalized; with no axis word at all it points along a "nothing" axis
  that no document directive uses, so its similarity to every directive document is 0.

Knowledge files written for pipeline tests put one directive in each chunk's body, so the
similarity of every chunk to a query is chosen by the test, whatever the query's wording.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from langchain_core.embeddings import Embeddings

DIRECTIVE = re.compile(r"\[\[([^\]]+)\]\]")
_PAIR = re.compile(r"([a-z][a-z0-9_]*)\s*=\s*([0-9]*\.?[0-9]+)")
_WORD = re.compile(r"[a-z][a-z0-9_]*")

DEFAULT_AXES = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")


class DirectionEmbeddings(Embeddings):
    """FAKE deterministic embeddings whose similarities a test sets (see the module docstring).

    Example:
        >>> fake = DirectionEmbeddings()
        >>> doc = fake.embed_query("body [[alpha=0.4]]")
        >>> round(sum(a * b for a, b in zip(fake.embed_query("alpha"), doc)), 6)
        0.4
    """

    def __init__(self, axes: Sequence[str] = DEFAULT_AXES) -> None:
        self.axes = tuple(axes)
        self._index = {name: i for i, name in enumerate(self.axes)}
        self.dimension = len(self.axes) + 2
        self._doc_residual = len(self.axes)
        self._nothing = len(self.axes) + 1
        self.calls = 0

    def vector(self, text: str) -> list[float]:
        """The fake vector of ``text`` (unit length)."""
        self.calls += 1
        out = [0.0] * self.dimension
        match = DIRECTIVE.search(text)
        if match:
            total = 0.0
            for name, raw in _PAIR.findall(match.group(1).lower()):
                if name not in self._index:
                    msg = f"unknown direction {name!r} in {match.group(0)!r}"
                    raise ValueError(msg)
                weight = float(raw)
                out[self._index[name]] = weight
                total += weight * weight
            if total > 1.0 + 1e-9:
                msg = f"directive weights exceed unit length: {match.group(0)!r}"
                raise ValueError(msg)
            out[self._doc_residual] = math.sqrt(max(0.0, 1.0 - total))
            return out
        words = set(_WORD.findall(text.lower()))
        hits = [self._index[w] for w in words if w in self._index]
        if not hits:
            out[self._nothing] = 1.0
            return out
        scale = 1.0 / math.sqrt(len(hits))
        for i in hits:
            out[i] = scale
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Fake vectors of documents."""
        return [self.vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Fake vector of a query."""
        return self.vector(text)
