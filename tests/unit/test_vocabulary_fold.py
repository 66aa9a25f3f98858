"""The KB vocabulary's fold: the same counts whether or not it knows each source's chunk count,
and with the counts it holds only the sources still being read."""

from __future__ import annotations

import random
import tracemalloc

from langchain_lookup_knowledge.core.kb_vocabulary import KbVocabulary


def _pairs() -> list[tuple[str, str]]:
    rng = random.Random(3)
    words = ["disk", "pressure", "kafka", "lag", "replica", "certificate", "节点磁盘", "etcd"]
    pairs = [
        (f"doc{d}.md", " ".join(rng.sample(words, 3))) for d in range(40) for _ in range(d % 4 + 1)
    ]
    rng.shuffle(pairs)  # pages of a store come in any order
    return pairs


def test_known_chunk_counts_give_the_same_vocabulary():
    pairs = _pairs()
    per_source: dict[str, int] = {}
    for source, _ in pairs:
        per_source[source] = per_source.get(source, 0) + 1
    assert KbVocabulary.build(pairs, per_source) == KbVocabulary.build(pairs)
    assert KbVocabulary.build(pairs).documents == 40


def test_a_source_is_let_go_once_its_last_chunk_has_passed():
    # 3,000 one-chunk documents of 60 words from a shared 400: held until the end, their term
    # sets are megabytes; let go as they pass, the fold holds little more than the counts.
    rng = random.Random(5)
    words = [f"term{w}x" for w in range(400)]
    pairs = [(f"doc{d}.md", " ".join(rng.sample(words, 60))) for d in range(3_000)]

    def peak(chunks_per_source: dict[str, int] | None) -> int:
        tracemalloc.start()
        try:
            vocabulary = KbVocabulary.build(iter(pairs), chunks_per_source)
            size = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert vocabulary.documents == 3_000
        return size

    held = peak(None)
    streamed = peak({source: 1 for source, _ in pairs})
    assert streamed < held * 0.75, (streamed, held)


def test_more_texts_than_announced_are_not_counted_twice():
    pairs = [("a.md", "disk"), ("a.md", "disk kafka")]
    assert KbVocabulary.build(pairs, {"a.md": 1}).df("disk") == 1
