"""The query cache embeds a batch of known questions in one call, through every wrapper."""

from __future__ import annotations

from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_lookup_knowledge.embeddings.cache import CachedQueryEmbeddings
from langchain_lookup_knowledge.embeddings.validation import ValidatedEmbeddings


class CountingFakeEmbeddings(DeterministicFakeEmbedding):
    """FAKE embedder that embeds a query as a document, counting its calls."""

    queries_are_documents: bool = True
    document_calls: int = 0
    query_calls: int = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.document_calls += 1
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.query_calls += 1
        return super().embed_query(text)


def test_prime_embeds_one_batch_through_the_validating_and_caching_wrappers():
    fake = CountingFakeEmbeddings(size=8)
    outer = CachedQueryEmbeddings(CachedQueryEmbeddings(ValidatedEmbeddings(fake)))
    questions = ["disk full", "pod restarts", "replica lag"]
    outer.prime(questions)
    vectors = [outer.embed_query(q) for q in questions]
    assert (fake.document_calls, fake.query_calls) == (1, 0)
    assert vectors == fake.embed_documents(questions)


def test_prime_does_nothing_for_an_embedder_whose_queries_differ_from_documents():
    fake = CountingFakeEmbeddings(size=8)
    fake.queries_are_documents = False
    cache = CachedQueryEmbeddings(ValidatedEmbeddings(fake))
    cache.prime(["disk full"])
    cache.embed_query("disk full")
    assert (fake.document_calls, fake.query_calls) == (0, 1)
