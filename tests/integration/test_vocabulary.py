"""The knowledge base's vocabulary: counted at ingest from the stored chunks, kept beside the
catalog in Milvus (real Milvus Lite in a temporary folder, the real embedder), read by the
evidence judgement; a collection without one (ingested before vocabularies) is judged without
vocabulary signals against the typical profile, and a damaged one is ignored with a note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from langchain_lookup_knowledge.core.filters import condition
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.core.vocabulary import (
    CommonWords,
    KbVocabulary,
    document_terms,
    vocabulary_signals,
)
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.judgement.lexical import lexical_confidence
from langchain_lookup_knowledge.judgement.questions import profile_questions, source_order
from langchain_lookup_knowledge.judgement.signals import EvidenceSignals, common_words
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.store import chunk_texts
from langchain_lookup_knowledge.store.catalog_store import (
    chunk_ordinal,
    query_all,
    query_pages,
    stored_chunk_keys,
)
from langchain_lookup_knowledge.store.chunk_texts import iter_texts_by_source
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.schema import describe_chunk_collection
from langchain_lookup_knowledge.store.vocabulary_store import (
    HEADER,
    iter_stored_texts,
    load_vocabulary,
    stored_texts,
    vocabulary_collection,
)
from tests.conftest import SAMPLE_KB, local_settings

QUESTION = "pgbouncer connection pool exhausted"


def _decision_note(result: LookupResult) -> str:
    notes = [n for n in result.retrieval_trace.notes if n.startswith("judgement:")]
    assert len(notes) == 1, result.retrieval_trace.notes
    return notes[0]


def _lookup(settings: LookupSettings, embeddings, query: str) -> LookupResult:
    graph = build_lookup_graph(
        settings.model_copy(update={"record_invocations": False}), embeddings=embeddings
    )
    return LookupResult.model_validate(graph.invoke({"query": query})["result"])


@pytest.fixture
def own_kb(tmp_path: Path, ingest_embeddings) -> LookupSettings:
    """A private copy of two sample KB folders, ingested into a fresh Milvus Lite database."""
    folder = tmp_path / "kb"
    for part in ("databases", "kubernetes"):
        shutil.copytree(SAMPLE_KB / part, folder / part)
    (tmp_path / "store").mkdir()
    settings = local_settings(tmp_path / "store")
    ingest_folder(folder, settings, embeddings=ingest_embeddings)
    return settings


# --- the terms and the signals (pure) --------------------------------------------------------
def test_document_terms_follow_the_shared_rules():
    terms = document_terms("The KubePodCrashLooping alert: pods restart. 节点磁盘满了")
    assert {"kubepodcrashlooping", "kube", "crash", "looping", "pod", "restart"} <= terms
    assert {"节点", "磁盘", "盘满"} <= terms
    assert "the" not in terms  # a stopword is never a term
    assert "满了" not in terms  # nor a bigram with a particle


def test_document_frequency_counts_a_document_once_over_its_chunks():
    vocabulary = KbVocabulary.build(
        [("a.md", "etcd disk"), ("a.md", "etcd defrag"), ("b.md", "etcd quota")]
    )
    assert vocabulary.documents == 2
    assert vocabulary.df("etcd") == 2
    assert vocabulary.df("disk") == vocabulary.df("quota") == 1
    assert vocabulary.idf("kafka") > vocabulary.idf("disk") > vocabulary.idf("etcd")


def test_the_signals_weigh_an_unseen_term_by_its_rarity():
    vocabulary = KbVocabulary.build([(f"{i}.md", "etcd disk full") for i in range(9)])
    vocabulary = KbVocabulary(vocabulary.documents + 1, {**vocabulary.frequencies, "defrag": 1})
    known = vocabulary_signals("etcd disk defrag", vocabulary)
    assert known.unseen == ()
    assert known.unseen_share == 0.0
    assert known.unseen_idf == 0.0
    common = vocabulary_signals("etcd disk", vocabulary)
    assert known.rarest_idf > 0.6 > common.rarest_idf  # "defrag": one document of ten
    near_miss = vocabulary_signals("etcd disk kafka", vocabulary)
    assert near_miss.unseen == ("kafka",)
    assert near_miss.unseen_share == pytest.approx(1 / 3, abs=1e-3)
    assert near_miss.unseen_idf > 0.5  # the unseen term outweighs the two common ones
    assert vocabulary_signals("the", vocabulary).unseen_share == 0.0  # no terms, none unseen


def test_an_everyday_unseen_word_is_not_a_rare_one():
    """A small KB never says "keeps" or "growing" either: unseen, but no name of a thing; the
    rare_unseen_idf signal weighs only the unseen terms that are not everyday words."""
    vocabulary = KbVocabulary.build([(f"{i}.md", "etcd disk full") for i in range(9)])
    everyday = CommonWords(latin=frozenset({"keep", "growing"}))
    in_scope = vocabulary_signals("etcd disk keeps growing", vocabulary, everyday)
    assert in_scope.unseen == ("keep", "growing")
    assert in_scope.unseen_idf > 0.5  # the old signal takes it for a near miss
    assert in_scope.rare_unseen == ()
    assert in_scope.rare_unseen_idf == 0.0
    near_miss = vocabulary_signals("etcd disk kafka", vocabulary, everyday)
    assert near_miss.rare_unseen == ("kafka",)
    assert near_miss.rare_unseen_idf == near_miss.unseen_idf > 0.5
    mixed = vocabulary_signals("etcd disk keeps growing kafka", vocabulary, everyday)
    assert 0.0 < mixed.rare_unseen_idf < mixed.unseen_idf
    # without everyday words, every unseen term is rare (the signal equals unseen_idf)
    unknown = vocabulary_signals("etcd disk keeps growing", vocabulary)
    assert unknown.rare_unseen_idf == unknown.unseen_idf


def test_an_identifiers_words_run_together_are_no_unseen_name():
    """The runbooks write the whole identifier (KubeNodeNotReady), the question its words run
    together ("notready"): part of a term the KB holds, so seen; a short one is not looked
    for inside others ("ready" is inside many identifiers by chance), nor a real name."""
    vocabulary = KbVocabulary.build(
        [("a.md", "KubeNodeNotReady: the node is down"), ("b.md", "ContainerCreating pods")]
    )
    assert vocabulary.df("notready") == 0  # no document has it as a word
    signals = vocabulary_signals("node notready containercreating", vocabulary)
    assert signals.unseen == ()
    assert signals.unseen_idf == 0.0
    named = vocabulary_signals("node notready kafka", vocabulary)
    assert named.unseen == ("kafka",)
    assert vocabulary.df_within("kafka") == vocabulary.df_within("notr") == 0
    assert vocabulary.df_within("node") == 0  # held as a word: df says so, not df_within


def test_an_operators_typo_and_a_camelcase_word_of_kb_words_can_count_as_seen():
    """typos: a Latin word of 6+ letters one Damerau edit from a KB term ("seperate" of
    "separate", "sepraate": two letters swapped) is seen, a short one ("nodez") or a real name
    ("kafka") is not; identifiers: a CamelCase word is seen when the KB holds each of its parts
    ("ContainerCreating": "container", "creating"), not when one part is unseen. Off by
    default: the question's word is then unseen."""
    vocabulary = KbVocabulary.build(
        [
            ("a.md", "separate the control plane from the data plane"),
            ("b.md", "the container is creating its volume on the node"),
        ]
    )
    question = "seperate control plane kafka"
    assert vocabulary_signals(question, vocabulary).unseen == ("seperate", "kafka")
    typo = vocabulary_signals(question, vocabulary, typos=True)
    assert typo.unseen == ("kafka",)
    assert typo.unseen_idf < vocabulary_signals(question, vocabulary).unseen_idf
    assert vocabulary.df_typo("sepraate") == 1
    assert vocabulary.df_typo("nodez") == 0  # shorter than MIN_TYPO_LENGTH
    assert vocabulary_signals("nodez volume", vocabulary, typos=True).unseen == ("nodez",)
    camel = "pods stuck in ContainerCreating"
    assert vocabulary_signals(camel, vocabulary).unseen == ("pod", "stuck", "containercreating")
    assert vocabulary_signals(camel, vocabulary, identifiers=True).unseen == ("pod", "stuck")
    half = vocabulary_signals("ContainerExploding volume", vocabulary, identifiers=True)
    assert half.unseen == ("containerexploding",)


def test_an_unseen_latin_name_is_told_apart_from_an_unseen_chinese_word():
    """rare_unseen_latin_idf is the part of rare_unseen_idf in Latin-script terms: a product
    name a Chinese question holds ("postgresql"), not a Chinese word the KB words otherwise."""
    vocabulary = KbVocabulary.build([(f"{i}.md", "tidb 数据 迁移 mysql") for i in range(9)])
    common = CommonWords()
    named = vocabulary_signals("把 postgresql 的数据迁移到 tidb", vocabulary, common)
    assert named.rare_unseen == ("postgresql",)
    assert named.rare_unseen_latin_idf == named.rare_unseen_idf > 0.4
    worded = vocabulary_signals("tidb 数据迁移的时钟", vocabulary, common)
    assert worded.rare_unseen == ("时钟",)
    assert worded.rare_unseen_idf > 0.3
    assert worded.rare_unseen_latin_idf == 0.0
    both = vocabulary_signals("postgresql 数据迁移的时钟", vocabulary, common)
    assert 0.0 < both.rare_unseen_latin_idf < both.rare_unseen_idf
    english = vocabulary_signals("migrate kafka data", vocabulary)  # every unseen term Latin
    assert english.rare_unseen_latin_idf == english.rare_unseen_idf > 0.5


def test_chinese_everyday_words_come_from_jiebas_dictionary():
    vocabulary = KbVocabulary.build([(f"{i}.md", "节点 磁盘 索引") for i in range(5)])
    common = CommonWords()
    everyday = vocabulary_signals("节点磁盘一直满", vocabulary, common)
    assert everyday.unseen == ("一直",)
    assert everyday.rare_unseen_idf == 0.0  # "一直" (always): jieba counts it 18,596 times
    named = vocabulary_signals("物化视图的索引", vocabulary, common)
    assert set(named.rare_unseen) == {"物化", "视图"}
    assert named.rare_unseen_idf == named.unseen_idf > 0.5


def test_the_everyday_latin_words_are_the_bundled_tokenizers_whole_words():
    common = common_words()
    assert len(common.latin) > 20_000
    assert all(common.holds(w) for w in ("keep", "never", "restart", "statu", "growing"))
    assert not any(common.holds(w) for w in ("istio", "spnego", "kerbero", "hnsw", "velero"))


def test_an_unseen_term_lowers_the_lexical_confidence():
    """A lexical lookup's score weighs the vocabulary: the same retrieval with the question's
    distinctive term unseen is less likely to be evidence."""
    for family in ("lexical",):
        seen = EvidenceSignals(
            family=family, similarity=0.5, coverage=0.5, agreement=0.8, vocabulary=True
        )
        unseen = EvidenceSignals(
            family=family,
            similarity=0.5,
            coverage=0.5,
            agreement=0.8,
            vocabulary=True,
            unseen_share=0.25,
            unseen_idf=0.45,
        )
        assert lexical_confidence(unseen) < lexical_confidence(seen), family
        # the same unseen terms, a Latin-script name that is no everyday word: lower still
        named = EvidenceSignals(
            **{**unseen.__dict__, "rare_unseen_idf": 0.45, "rare_unseen_latin_idf": 0.45}
        )
        assert lexical_confidence(named) < lexical_confidence(unseen), family


# --- the store (real Milvus Lite) ------------------------------------------------------------
def test_ingest_stores_the_vocabulary_of_the_stored_chunks(own_kb: LookupSettings):
    read = load_vocabulary(open_client(own_kb), own_kb)
    assert read.vocabulary is not None, read.note
    sources = {p.relative_to(SAMPLE_KB).as_posix() for p in SAMPLE_KB.glob("*/*.md")}
    expected = len([s for s in sources if s.split("/")[0] in {"databases", "kubernetes"}])
    assert read.vocabulary.documents == expected
    assert read.vocabulary.df("pgbouncer") >= 1
    assert read.vocabulary.df("crashloopbackoff") >= 1
    assert read.vocabulary.df("kafka") == 0
    assert read.vocabulary.df("conntrack") == read.vocabulary.df("corefile") == 0  # networking/


def test_the_chunk_texts_are_read_a_page_at_a_time_and_all_of_them(own_kb: LookupSettings):
    client = open_client(own_kb)
    layout = describe_chunk_collection(client, own_kb, None)
    fields = [layout.id_field, layout.content_field]
    expr = f'{layout.id_field} != ""'
    pages = list(query_pages(client, layout.name, expr, fields, size=3))
    assert len(pages) > 1
    assert all(len(page) <= 3 for page in pages)
    paged = sorted(row[layout.id_field] for page in pages for row in page)
    assert paged == sorted(
        row[layout.id_field] for row in query_all(client, layout.name, expr, fields)
    )
    streamed = iter_stored_texts(client, layout)
    assert not isinstance(streamed, list)  # a fold over it never holds every text
    assert sorted(streamed) == sorted(stored_texts(client, layout))


def test_the_profile_reads_documents_in_question_order_a_batch_at_a_time(
    own_kb: LookupSettings, monkeypatch: pytest.MonkeyPatch
):
    client = open_client(own_kb)
    layout = describe_chunk_collection(client, own_kb, None)
    keys = stored_chunk_keys(client, layout.name, layout.id_field)
    order = source_order(keys)
    every = list(iter_texts_by_source(client, layout, keys, order, batch=2))
    assert [source for source, _ in every] == order
    for source, texts in every:  # all of a document's chunks, in chunk order
        stored = _texts_by_key(client, layout, keys[source])
        assert texts == [stored[key] for key in sorted(keys[source], key=chunk_ordinal)]
    # The same questions as from every text at once...
    assert profile_questions(documents=iter(every), pseudo=3) == profile_questions(
        [(source, text) for source, texts in every for text in texts], pseudo=3
    )
    # ... and a reader that has its questions reads no further batch.
    reads: list[str] = []
    real_pages = chunk_texts.query_pages

    def counted(*args, **kwargs):
        reads.append(args[2])
        return real_pages(*args, **kwargs)

    monkeypatch.setattr(chunk_texts, "query_pages", counted)
    questions = profile_questions(
        documents=iter_texts_by_source(client, layout, keys, order, batch=1), pseudo=1, probes=0
    )
    assert len(questions) == 1
    assert len(reads) < len(order)
    # A query names at most max_keys chunks, unless one document alone has more.
    reads.clear()
    assert list(iter_texts_by_source(client, layout, keys, order, max_keys=1)) == every
    assert len(reads) == len(order)


def _texts_by_key(client, layout, keys) -> dict[str, str]:
    fields = [layout.id_field, layout.content_field]
    rows = query_all(client, layout.name, condition(layout.id_field, sorted(keys)), fields)
    return {row[layout.id_field]: row[layout.content_field] for row in rows}


def test_a_re_ingest_recounts_after_a_document_is_gone(
    own_kb: LookupSettings, tmp_path: Path, ingest_embeddings
):
    client = open_client(own_kb)
    before = load_vocabulary(client, own_kb)
    assert before.vocabulary is not None
    folder = tmp_path / "kb"
    removed = next((folder / "databases").glob("pgbouncer*.md"))
    removed.unlink()
    ingest_folder(folder, own_kb, embeddings=ingest_embeddings, prune=True)
    after = load_vocabulary(client, own_kb)
    assert after.vocabulary is not None
    assert after.generation != before.generation
    assert after.vocabulary.documents == before.vocabulary.documents - 1
    assert after.vocabulary.df("pgbouncer") < before.vocabulary.df("pgbouncer")
    # one generation is kept: the old parts are gone (the judgement's profile, stored beside
    # the vocabulary, is tied to the same generation)
    rows = client.query(
        vocabulary_collection(own_kb), filter='part != ""', output_fields=["generation"]
    )
    assert {r["generation"].removeprefix("profile:") for r in rows} == {after.generation}


def test_an_old_collection_falls_back_and_a_re_ingest_adds_the_vocabulary(
    own_kb: LookupSettings, tmp_path: Path, real_embeddings, ingest_embeddings
):
    client = open_client(own_kb)
    client.drop_collection(vocabulary_collection(own_kb))  # as ingested before vocabularies
    read = load_vocabulary(client, own_kb)
    assert read.vocabulary is None
    assert "re-ingest adds it" in read.note
    result = _lookup(own_kb, real_embeddings, QUESTION)
    assert result.found is True
    assert result.evidence_blocks[0].source == "databases/pgbouncer-connection-exhaustion.md"
    note = _decision_note(result)
    assert "no KB vocabulary read" in note
    assert "typical profile" in note  # the profile is kept beside the vocabulary: gone too
    assert result.retrieval_trace.judgement["profile"] == "typical"

    report = ingest_folder(tmp_path / "kb", own_kb, embeddings=ingest_embeddings)
    assert report.chunks_written == 0  # nothing re-embedded: the vocabulary alone is added
    assert load_vocabulary(client, own_kb).vocabulary is not None
    again = _lookup(own_kb, real_embeddings, QUESTION)
    note = _decision_note(again)
    assert "no KB vocabulary read" not in note
    assert "typical profile" not in note
    assert again.retrieval_trace.judgement["profile"] == "kb"


@pytest.mark.parametrize(
    ("damage", "problem"),
    [
        ("line", "is not 'term<TAB>count'"),
        ("digest", "do not match the header's sha256"),
        ("part", "parts"),
        ("header", "not a mapping"),
    ],
)
def test_a_damaged_vocabulary_is_ignored_with_a_note(
    own_kb: LookupSettings, real_embeddings, damage: str, problem: str
):
    import hashlib

    client = open_client(own_kb)
    name = vocabulary_collection(own_kb)
    header = client.query(name, filter=f'part == "{HEADER}"', output_fields=["*"])[0]
    info = dict(header["info"])
    first = f"{info['generation']}/00000"
    part = client.query(name, filter=f'part == "{first}"', output_fields=["*"])[0]
    if damage == "line":  # a consistent digest over a body that is not term<TAB>count
        body = part["body"] + "\nbroken line"
        client.upsert(name, [part | {"body": body}])
        bodies = [
            r["body"]
            for r in sorted(
                client.query(
                    name,
                    filter=f'generation == "{info["generation"]}" and part != "{HEADER}"',
                    output_fields=["part", "body"],
                ),
                key=lambda r: r["part"],
            )
        ]
        sha = hashlib.sha256()
        for text in bodies:
            sha.update(text.encode("utf-8") + b"\0")
        client.upsert(name, [header | {"info": info | {"sha256": sha.hexdigest()}}])
    elif damage == "digest":
        client.upsert(name, [part | {"body": part["body"].replace("\t1", "\t2", 1)}])
    elif damage == "part":
        client.delete(name, filter=f'part == "{first}"')
    else:
        client.upsert(name, [header | {"info": [1, 2, 3]}])
    client.flush(name)

    read = load_vocabulary(client, own_kb)
    assert read.vocabulary is None
    assert problem in read.note
    assert "re-ingest rewrites it" in read.note
    result = _lookup(own_kb, real_embeddings, QUESTION)  # the lookup is not crashed
    assert result.found is True
    note = _decision_note(result)
    assert "no KB vocabulary read" in note


def test_a_lookup_with_nothing_to_judge_never_reads_the_vocabulary(
    own_kb: LookupSettings, real_embeddings, monkeypatch: pytest.MonkeyPatch
):
    """Every L1 path fails (FAKE paths, an injected outage): no block to judge, so the decision
    is found=false without the vocabulary's read (a store that is down costs no second wait)."""
    from langchain_lookup_knowledge.pipeline.runtime import LookupRuntime
    from tests.fakes import failing_graph

    reads: list[int] = []
    real_read = LookupRuntime.vocabulary

    def counted(self: LookupRuntime):
        reads.append(1)
        return real_read(self)

    monkeypatch.setattr(LookupRuntime, "vocabulary", counted)
    settings = own_kb.model_copy(update={"record_invocations": False})
    out = failing_graph(settings, real_embeddings).invoke({"query": QUESTION})
    assert LookupResult.model_validate(out["result"]).found is False
    assert reads == []
    answered = _lookup(own_kb, real_embeddings, QUESTION)  # the same with blocks: read once
    assert answered.found is True
    assert reads == [1]


def test_a_scoped_lookup_never_reads_the_collection_wide_vocabulary(
    tmp_path: Path, real_embeddings, ingest_embeddings
):
    """The vocabulary counts every tenant's documents. Under a tenant's filter a term only
    another tenant's documents hold would count as seen, and the decision's note lists the
    unseen terms: tenant a could learn what tenant b's runbooks name. So a scoped lookup is
    judged without it (and against the typical profile), and says so; an unscoped one still
    reads it."""
    kb = tmp_path / "kb"
    for tenant, body in (
        ("a", "When the pgbouncer connection pool is exhausted, raise max_client_conn."),
        ("b", "The zorblatt ledger replica lags: restart the zorblatt shipper."),
    ):
        path = kb / f"ops/{tenant}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        front = f"---\ntitle: Runbook {tenant}\ntenant: {tenant}\n---\n"
        path.write_text(f"{front}# Runbook\n\n{body}\n")
    (tmp_path / "store").mkdir()
    settings = local_settings(tmp_path / "store")
    ingest_folder(kb, settings, embeddings=ingest_embeddings)
    question = "pgbouncer pool exhausted while the zorblatt ledger lags"

    unscoped = _decision_note(_lookup(settings, real_embeddings, question))
    assert "no KB vocabulary read" not in unscoped

    scoped_settings = settings.model_copy(update={"default_filter": {'metadata["tenant"]': "a"}})
    scoped = _lookup(scoped_settings, real_embeddings, question)
    assert {b.source for b in scoped.evidence_blocks} == {"ops/a.md"}
    note = _decision_note(scoped)
    assert "KB vocabulary not read for a scoped lookup" in note
    assert "no KB vocabulary read" in note
    assert scoped.retrieval_trace.judgement["profile"] == "typical"
    assert "zorblatt" not in note  # no term of the question, seen or not, is listed
    assert scoped.retrieval_trace.judgement["read"].get("rare_unseen_latin_idf", 0.0) == 0.0
