"""``bm25_k1`` / ``bm25_b`` / ``bm25_defaults``: the BM25 index of a Milvus Lite collection is
built with them; an ingest rebuilds an existing collection's index only when ``bm25_k1`` /
``bm25_b`` are set explicitly and differ (``bm25_defaults`` decides a new collection's index and
never releases a live one: the ingest reports what it would build instead).

Vectors come from the FAKE deterministic ``DirectionEmbeddings`` (tests/fakes.py): no chunk or
question here names an axis, so ``retrieval_mode=sparse`` isolates what BM25 ranks. The two
documents that hold "quota" are built so that the length normalisation decides their order:
a short one that says it twice (title and text) and a long one that says it eight times among
two hundred other words. With Milvus Lite's own ``k1=1.5, b=0.75`` (``bm25_defaults=engine``) the
short one ranks first; with ``b=0`` (no length normalisation) the long one does, and with the
passage setting ``auto`` gives an English collection (``k1=0.9, b=0.4``) the long one does too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pymilvus import MilvusClient

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.cli.ingest import print_ingest_report
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.ingest import IngestReport, ingest_folder
from langchain_lookup_knowledge.pipeline.plan import plan_query
from langchain_lookup_knowledge.retrieval.sdk import SdkPath
from langchain_lookup_knowledge.store.connection import close_all_clients, open_client
from langchain_lookup_knowledge.store.schema import (
    PASSAGE_BM25,
    apply_bm25_parameters,
    describe_chunk_collection,
    indexed_bm25_parameters,
)
from tests.fakes import DirectionEmbeddings
from tests.kb_helpers import write

FILLER = " ".join(f"word{i}" for i in range(200))
KB = {
    "limits/quota.md": "---\ntitle: Quota\n---\n# Quota\n\nQuota reached.\n",
    "notes/long.md": (
        "---\ntitle: Meeting notes\n---\n# Meeting notes\n\n" + "quota " * 8 + FILLER + "\n"
    ),
    "storage/volume.md": "---\ntitle: Volume\n---\n# Volume\n\nRotate the logs of the volume.\n",
}
SHORT, LONG = "limits/quota.md", "notes/long.md"


def _settings(root: Path, **overrides: object) -> LookupSettings:
    return LookupSettings(
        data_dir=root,
        milvus_uri=str(root / "milvus.db"),
        collection="bm25_params",
        record_invocations=False,
        retrieval_mode="sparse",
        **overrides,  # type: ignore[arg-type]
    )


def _ingest_report(root: Path, **overrides: object) -> tuple[LookupSettings, IngestReport]:
    kb = root / "kb"
    for rel, text in KB.items():
        write(kb, rel, text)
    settings = _settings(root, **overrides)
    report = ingest_folder(kb, settings, embeddings=DirectionEmbeddings(), show_progress=False)
    return settings, report


def _ingest(root: Path, **overrides: object) -> LookupSettings:
    return _ingest_report(root, **overrides)[0]


def bm25_order(settings: LookupSettings, query: str = "quota") -> list[str]:
    """The documents BM25 finds for ``query`` (the SDK path, planned as a lookup plans it)."""
    client = open_client(settings)
    layout = describe_chunk_collection(client, settings, None)
    vector = DirectionEmbeddings().embed_query(query)
    plan = plan_query(query, settings, vector=vector, layout=layout)
    return [c.source for c in SdkPath(client, layout, settings).search(plan.request(None, vector))]


def indexed(settings: LookupSettings) -> dict[str, float]:
    client = open_client(settings)
    return indexed_bm25_parameters(client, describe_chunk_collection(client, settings, None))


@pytest.fixture(autouse=True)
def _close_clients():
    yield
    close_all_clients()


def test_a_new_collection_is_indexed_with_them_and_milvus_lite_ranks_by_them(tmp_path):
    engine = _ingest(tmp_path / "engine", bm25_defaults="engine")
    assert indexed(engine) == {}  # the engine's own defaults
    assert bm25_order(engine)[:2] == [SHORT, LONG]

    flat = _ingest(tmp_path / "flat", bm25_defaults="engine", bm25_b=0.0)
    assert indexed(flat) == {"bm25_b": 0.0}
    assert bm25_order(flat)[:2] == [LONG, SHORT]  # no length normalisation: eight mentions win


def test_auto_gives_an_english_collection_the_passage_setting_and_a_chinese_one_the_engines(
    tmp_path,
):
    english = _ingest(tmp_path / "en")  # the standard analyzer (the KB is English)
    assert indexed(english) == PASSAGE_BM25 == {"bm25_k1": 0.9, "bm25_b": 0.4}
    assert bm25_order(english)[:2] == [LONG, SHORT]  # b 0.4: the long one is penalised less

    own_b = _ingest(tmp_path / "own_b", bm25_b=0.75)  # a value set wins over auto's
    assert indexed(own_b) == {"bm25_k1": 0.9, "bm25_b": 0.75}

    chinese = _ingest(tmp_path / "zh", bm25_analyzer="jieba")
    assert indexed(chinese) == {}  # 0.9 / 0.4 lost on the Chinese dev sets: the engine's


def test_an_ingest_rebuilds_the_index_when_they_change_and_keeps_it_when_unset(tmp_path):
    first = _ingest(tmp_path, bm25_defaults="engine")
    assert bm25_order(first)[:2] == [SHORT, LONG]

    flat = _ingest(tmp_path, bm25_defaults="engine", bm25_b=0.0)  # only the index is rebuilt
    assert indexed(flat) == {"bm25_b": 0.0}
    assert bm25_order(flat)[:2] == [LONG, SHORT]

    unset = _ingest(tmp_path, bm25_defaults="engine")  # engine asks nothing: kept as built
    assert indexed(unset) == {"bm25_b": 0.0}
    assert bm25_order(unset)[:2] == [LONG, SHORT]

    k1_only = _ingest(tmp_path, bm25_defaults="engine", bm25_k1=1.2)  # b keeps the index's
    assert indexed(k1_only) == {"bm25_b": 0.0, "bm25_k1": 1.2}

    client = open_client(k1_only)
    layout = describe_chunk_collection(client, k1_only, None)
    assert not apply_bm25_parameters(client, k1_only, layout)  # already so: not rebuilt
    back = _settings(tmp_path, bm25_defaults="engine", bm25_b=0.75)
    assert apply_bm25_parameters(client, back, layout)
    assert bm25_order(back)[:2] == [SHORT, LONG]

    kept = _ingest(tmp_path)  # the defaults (auto) on an existing collection: never rebuilt
    assert indexed(kept) == {"bm25_b": 0.75, "bm25_k1": 1.2}
    assert bm25_order(kept)[:2] == [SHORT, LONG]


def test_the_ingest_report_says_which_index_it_left_and_when_it_rebuilt_one(tmp_path, capsys):
    _, built = _ingest_report(tmp_path, bm25_defaults="engine")
    assert built.bm25_index == {}
    assert not built.bm25_index_rebuilt  # created so, not rebuilt
    # set explicitly on the engine-built English collection (a default would not rebuild it)
    _, upgraded = _ingest_report(tmp_path, bm25_k1=0.9, bm25_b=0.4)
    assert upgraded.bm25_index == PASSAGE_BM25
    assert upgraded.bm25_index_rebuilt
    assert upgraded.to_dict()["bm25Index"] == {"bm25_k1": 0.9, "bm25_b": 0.4}
    print_ingest_report(upgraded, as_json=False)
    assert "BM25 index rebuilt with bm25_b 0.4, bm25_k1 0.9" in capsys.readouterr().out
    _, again = _ingest_report(tmp_path, bm25_k1=0.9, bm25_b=0.4)
    assert again.bm25_index == PASSAGE_BM25
    assert not again.bm25_index_rebuilt
    print_ingest_report(again, as_json=False)
    assert "BM25 index" not in capsys.readouterr().out


def test_the_defaults_never_release_an_existing_collection_and_the_ingest_says_what_they_would(
    tmp_path, capsys, monkeypatch
):
    _ingest(tmp_path, bm25_defaults="engine")  # a live collection with the engine's index
    released: list[str] = []
    release = MilvusClient.release_collection

    def recording_release(self, collection_name, *args, **kwargs):  # a spy: it still releases
        released.append(collection_name)
        return release(self, collection_name, *args, **kwargs)

    monkeypatch.setattr(MilvusClient, "release_collection", recording_release)
    settings, report = _ingest_report(tmp_path)  # bm25_defaults=auto would build 0.9 / 0.4
    assert "bm25_params" not in released  # lookups of other processes never lost it
    assert not report.bm25_index_rebuilt
    assert report.bm25_index == {}
    assert bm25_order(settings)[:2] == [SHORT, LONG]  # still the engine's 1.5 / 0.75
    notice = report.to_dict()["bm25IndexNotice"]
    assert "collection 'bm25_params' keeps its BM25 index (the engine's defaults)" in notice
    assert "with bm25_b 0.4 / bm25_k1 0.9" in notice  # what auto would build
    assert "LOOKUP_KNOWLEDGE_BM25_B=0.4 LOOKUP_KNOWLEDGE_BM25_K1=0.9" in notice  # how to apply
    assert "released" in notice
    assert "quiet time" in notice
    print_ingest_report(report, as_json=False)
    assert f"  note: {notice}" in capsys.readouterr().out

    _, engine = _ingest_report(tmp_path, bm25_defaults="engine")  # keep it: no note
    assert engine.bm25_index_notice is None

    applied_settings, applied = _ingest_report(tmp_path, bm25_k1=0.9, bm25_b=0.4)  # the advice
    assert applied.bm25_index_rebuilt
    assert "bm25_params" in released  # the user's explicit choice releases it
    assert applied.bm25_index == PASSAGE_BM25
    assert applied.bm25_index_notice is None
    assert bm25_order(applied_settings)[:2] == [LONG, SHORT]
    _, after = _ingest_report(tmp_path)  # the defaults now agree with the index
    assert after.bm25_index_notice is None
    assert not after.bm25_index_rebuilt


@pytest.mark.parametrize(("field", "value"), [("bm25_k1", 0.0), ("bm25_b", 1.5)])
def test_out_of_range_values_are_refused_when_the_settings_are_built(field, value):
    with pytest.raises((ConfigurationError, ValueError), match=field):
        LookupSettings(**{field: value})


def test_an_ingest_reads_the_bm25_index_description_once(tmp_path, monkeypatch):
    _ingest(tmp_path, bm25_defaults="engine", bm25_b=0.0)
    described: list[str] = []
    describe = MilvusClient.describe_index

    def recording_describe(self, collection_name, index_name, *args, **kwargs):  # a spy
        described.append(index_name)
        return describe(self, collection_name, index_name, *args, **kwargs)

    monkeypatch.setattr(MilvusClient, "describe_index", recording_describe)
    _, kept = _ingest_report(tmp_path, bm25_defaults="engine", bm25_b=0.0)  # already so
    assert not kept.bm25_index_rebuilt
    assert kept.bm25_index == {"bm25_b": 0.0}
    assert described.count("sparse") == 1
    described.clear()
    _, rebuilt = _ingest_report(tmp_path, bm25_defaults="engine", bm25_b=0.75)
    assert rebuilt.bm25_index_rebuilt
    # once to decide, once by the rebuild (it records every index before dropping them)
    assert described.count("sparse") == 2
    assert rebuilt.bm25_index == {"bm25_b": 0.75}  # what the rebuild built, not read again
    assert indexed(_settings(tmp_path)) == {"bm25_b": 0.75}
