"""The calibrated evidence decision end to end on the sample knowledge base (real Milvus Lite,
the real embedder): an off-topic question gets no block and says why; a runbook question keeps
its evidence; the previous rule (``evidence_decision=similarity``) stays available."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.pipeline.graph import build_lookup_graph
from langchain_lookup_knowledge.settings import LookupSettings

REPO = Path(__file__).resolve().parents[2]


def lookup(settings, embeddings, query: str, **overrides):
    graph = build_lookup_graph(
        settings.model_copy(
            update={"record_invocations": False, "evidence_decision": "calibrated", **overrides}
        ),
        embeddings=embeddings,
    )
    return LookupResult.model_validate(graph.invoke({"query": query})["result"])


def default_lookup(settings, embeddings, query: str, **overrides):
    """A lookup under the calibrated decision with its default models and thresholds."""
    return lookup(settings, embeddings, query, **overrides)


DENSE_ONLY = {"retrieval_mode": "dense", "cjk_retrieval_mode": "dense"}  # no BM25 leg at all


@pytest.mark.parametrize("path", ["hybrid", "dense-only"])
@pytest.mark.parametrize("query", ["how do I file my annual tax return online", "巧克力蛋糕的做法"])
def test_off_topic_is_no_evidence_under_the_fitted_models(
    sample_kb_store, real_embeddings, path, query
):
    overrides = DENSE_ONLY if path == "dense-only" else {}
    result = default_lookup(sample_kb_store, real_embeddings, query, **overrides)
    assert result.found is False
    assert result.evidence_status == "no_evidence"
    assert result.evidence_blocks == []


@pytest.mark.parametrize("path", ["hybrid", "dense-only"])
@pytest.mark.parametrize(
    ("query", "source"),
    [
        ("postgres read replica lag keeps growing", "databases/postgresql-replication-lag.md"),
        ("my pod keeps crashing and restarting", "kubernetes/pod-crashloopbackoff.md"),
        ("pgbouncer connection pool exhausted", "databases/pgbouncer-connection-exhaustion.md"),
        ("数据库连接数满了怎么办", "databases/pgbouncer-connection-exhaustion.md"),
    ],
)
def test_a_right_answer_stays_evidence_under_the_fitted_models(
    sample_kb_store, real_embeddings, path, query, source
):
    """Dense-only too: the model of that path weighs no hybrid agreement it cannot have, and a
    Chinese question the English-only embedder cannot read is judged on its terms alone."""
    overrides = DENSE_ONLY if path == "dense-only" else {}
    result = default_lookup(sample_kb_store, real_embeddings, query, **overrides)
    assert result.found is True, result.retrieval_trace.notes
    assert result.evidence_blocks[0].source == source
    decided = [n for n in result.retrieval_trace.notes if n.startswith("evidence decision")]
    assert decided
    assert ">= found_confidence" in decided[0]


@pytest.mark.parametrize("path", ["hybrid", "dense-only"])
def test_a_near_miss_naming_what_no_runbook_mentions_gets_no_evidence(
    sample_kb_store, real_embeddings, path
):
    """A near miss: on topic (a replica set, an election that keeps flapping), about a product
    no sample runbook mentions. "mongodb" is a Latin-script name and not an everyday word, so
    rare_unseen_latin_idf weighs it; by unseen_idf alone (with "flapping", which no runbook
    says either) it was answered from the replication-lag runbook at confidence 0.81."""
    overrides = DENSE_ONLY if path == "dense-only" else {}
    query = "mongodb replica set election keeps flapping"
    result = default_lookup(sample_kb_store, real_embeddings, query, **overrides)
    assert result.found is False, result.retrieval_trace.notes
    assert result.evidence_blocks == []
    decided = [n for n in result.retrieval_trace.notes if n.startswith("evidence decision")]
    assert "rare_unseen_latin_idf" in decided[0]
    assert "not everyday words: mongodb" in decided[0]


def test_an_off_topic_question_gets_no_evidence(sample_kb_store, real_embeddings):
    result = lookup(sample_kb_store, real_embeddings, "how do I file my annual tax return online")
    assert result.found is False
    assert result.evidence_status == "no_evidence"
    assert result.evidence_blocks == []


def test_a_rejected_lookup_hands_out_no_block_and_says_why(sample_kb_store, real_embeddings):
    # the same retrieval, a confidence bar no lookup clears (this one's is 0.9997 under the
    # default model): the decision alone says no
    query = "postgres read replica lag keeps growing"
    result = lookup(sample_kb_store, real_embeddings, query, found_confidence=0.999999)
    assert result.found is False
    assert result.evidence_status == "no_evidence"
    assert result.evidence_blocks == []
    assert result.context_pack.text == ""
    assert result.relevance_level == "low"
    assert result.retrieval_trace.final_count == 0
    assert any("< found_confidence 0.999999" in n for n in result.retrieval_trace.notes)


def test_a_runbook_question_keeps_its_evidence(sample_kb_store, real_embeddings):
    result = lookup(sample_kb_store, real_embeddings, "postgres read replica lag keeps growing")
    assert result.found is True
    assert result.evidence_blocks[0].source == "databases/postgresql-replication-lag.md"
    assert result.relevance_level in {"high", "medium"}
    assert any(">= found_confidence" in n for n in result.retrieval_trace.notes)


def test_the_similarity_rule_is_still_a_setting(sample_kb_store, real_embeddings):
    query = "postgres read replica lag keeps growing"
    legacy = lookup(
        sample_kb_store,
        real_embeddings,
        query,
        evidence_decision="similarity",
        found_confidence=0.999,  # not read by the previous rule
    )
    assert legacy.found is True
    assert legacy.evidence_blocks
    assert not any("evidence decision" in n for n in legacy.retrieval_trace.notes)


def test_the_fit_script_refuses_a_held_out_report(tmp_path: Path):
    report = {"file": "evals/x_test.jsonl", "blind": True, "signals": []}
    saved = tmp_path / "r.json"
    saved.write_text(json.dumps(report) + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "fit_decision.py"), str(saved)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0
    assert "held-out" in done.stderr


def _synthetic_dev_report(tmp_path: Path) -> tuple[list[dict], Path]:
    """120 dev rows of three families (a quarter out of scope) and the question file they
    number, saved as an ``eval queries --json`` report."""
    import random

    rng = random.Random(7)
    signals = []
    for i in range(120):
        inside = i % 4 != 0
        family = ("hybrid", "dense", "sparse")[i % 3]
        base = 0.55 if inside else 0.3
        signals.append(
            {
                "id": f"q{i + 1}",  # numbered as eval queries numbers a file
                "in_scope": inside,
                "correct": inside and rng.random() < 0.7,
                "family": family,
                "similarity": base + rng.uniform(-0.2, 0.2),
                "coverage": (0.0 if family == "sparse" and i % 11 == 0 else 0.2)
                + (0.3 if inside else 0.0) * rng.random(),
                "agreement": rng.uniform(0.5, 1.0),
                "bm25_per_term": rng.uniform(0.3, 2.0),
                "unseen_idf": rng.uniform(0.0, 0.5) + (0.0 if inside else 0.3),
                "vocabulary": True,
            }
        )
    questions = tmp_path / "x_dev.jsonl"  # the question file the report names, in its order
    questions.write_text(
        "".join(
            json.dumps({"q": f"question {i}", "rel": ["a"] if r["in_scope"] else []}) + "\n"
            if r["in_scope"]
            else json.dumps({"q": f"question {i}", "rel": [], "near_miss": i % 8 == 0}) + "\n"
            for i, r in enumerate(signals)
        ),
        encoding="utf-8",
    )
    report = {
        "file": str(questions),
        "blind": False,
        "signals": signals,
        "settings": {"retrieval_mode": "hybrid"},
    }
    saved = tmp_path / "dev.json"
    saved.write_text(json.dumps(report) + "\n", encoding="utf-8")
    return signals, saved


def test_the_fit_keeps_min_found_of_each_path_at_confidence_one_half(tmp_path: Path):
    """Each family's threshold is folded into its bias: at found_confidence 0.5 the fitted model
    keeps at least --min-found of that family's dev in-scope rows, and a BM25-only first block
    without a question term is never found."""
    signals, saved = _synthetic_dev_report(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "fit_decision.py"),
            "--min-found",
            "0.9",
            str(saved),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    fit = json.loads(done.stdout)
    assert fit["found_confidence"] == 0.5
    settings = LookupSettings(
        evidence_decision="calibrated",
        evidence_model=fit["evidence_model"],
        fallback_evidence_model=fit["fallback_evidence_model"],
        relevance_model=fit["relevance_model"],
    )
    from langchain_lookup_knowledge.core.evidence_model import EvidenceSignals, confidence

    names = ("family", "similarity", "coverage", "agreement", "bm25_per_term", "unseen_idf")
    for model in (settings.evidence_model, settings.fallback_evidence_model):
        for family in ("hybrid", "dense", "sparse"):
            rows = [r for r in signals if r["family"] == family and r["in_scope"]]
            vouched = [r for r in rows if family != "sparse" or r["coverage"] > 0]
            kept = [
                r
                for r in vouched
                if confidence(EvidenceSignals(**{k: r[k] for k in names}), model) >= 0.5
            ]
            assert len(kept) >= 0.9 * len(vouched), family
    assert "unseen_idf" in fit["evidence_model"]["hybrid"]
    assert "unseen_idf" not in fit["fallback_evidence_model"]["hybrid"]
    # cross-validated on dev: every row decided once, by a fit that did not see its question
    assert fit["dev_cv"]["all"]["in_scope"] == fit["dev"]["all"]["in_scope"]
    assert fit["dev_cv"]["all"]["out_of_scope"] == fit["dev"]["all"]["out_of_scope"]
    assert fit["dev"]["all"]["in_scope_found"] >= 0.85
    # near misses and unrelated questions apart, read back from the question file's flags
    near = sum(1 for i, r in enumerate(signals) if not r["in_scope"] and i % 8 == 0)
    assert fit["dev"]["mode=hybrid kind=near"]["out_of_scope"] == near
    assert fit["dev"]["mode=hybrid kind=unrelated"]["out_of_scope"] == 30 - near
    # and every question a cross-validated fit decides wrongly, with its signals
    wrong = fit["dev_cv_misses"]
    assert all(m["kind"] in {"in", "near", "unrelated"} and "coverage" in m for m in wrong)
    cv = fit["dev_cv"]["all"]
    withheld = round(cv["in_scope"] * (1 - cv["in_scope_found"]))
    answered = round(cv["out_of_scope"] * (1 - cv["out_of_scope_no_evidence"]))
    assert len(wrong) == withheld + answered


def _kept_share(fit: dict, signals: list[dict], family: str) -> float:
    from langchain_lookup_knowledge.core.evidence_model import EvidenceSignals, confidence

    names = ("family", "similarity", "coverage", "agreement", "bm25_per_term", "unseen_idf")
    rows = [r for r in signals if r["family"] == family and r["in_scope"]]
    vouched = [r for r in rows if family != "sparse" or r["coverage"] > 0]
    model = fit["evidence_model"]
    kept = [
        r for r in vouched if confidence(EvidenceSignals(**{k: r[k] for k in names}), model) >= 0.5
    ]
    return len(kept) / len(vouched)


def test_the_fit_takes_a_stricter_share_for_the_families_it_names(tmp_path: Path):
    """--family-min-found overrides --min-found per family: the named family keeps every dev
    in-scope row, the others keep what --min-found says and no more is forced on them; an
    unknown family is refused by name."""
    signals, saved = _synthetic_dev_report(tmp_path)
    script = str(REPO / "benchmarks" / "fit_decision.py")

    def fit(*flags: str) -> dict:
        done = subprocess.run(
            [sys.executable, script, "--min-found", "0.7", *flags, str(saved)],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout)

    loose = fit("--family-min-found", "")
    strict = fit("--family-min-found", "hybrid=1.0")
    assert _kept_share(loose, signals, "hybrid") < 1.0  # 0.7 leaves some out
    assert _kept_share(strict, signals, "hybrid") == 1.0
    assert strict["evidence_model"]["dense"] == loose["evidence_model"]["dense"]
    assert strict["evidence_model"]["sparse"] == loose["evidence_model"]["sparse"]
    refused = subprocess.run(
        [sys.executable, script, "--family-min-found", "hybird=0.99", str(saved)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode != 0
    assert "'hybird=0.99'" in refused.stderr


def test_the_fit_adds_the_signals_it_is_told_and_averages_fold_assignments(tmp_path: Path):
    """--signals adds a report signal to the found model of the families named (with and
    without the vocabulary), an unknown one is refused by name; --assignments averages the
    cross-validated rates over that many fold assignments; --term-required all withholds every
    family's first block without a question term (the lookup's rule: sparse and lexical)."""
    signals, _ = _synthetic_dev_report(tmp_path)
    rng = random.Random(11)
    hybrid_inside = [r for r in signals if r["family"] == "hybrid" and r["in_scope"]]
    for r in signals:
        r["dense_margin"] = rng.uniform(-0.1, 0.1) + (0.05 if r["in_scope"] else -0.05)
    for r in hybrid_inside[::4]:  # a quarter of the hybrid path's answerable rows: no term
        r["coverage"] = 0.0
    report = json.loads((tmp_path / "dev.json").read_text(encoding="utf-8"))
    report["signals"] = signals
    saved = tmp_path / "dev_margin.json"
    saved.write_text(json.dumps(report) + "\n", encoding="utf-8")
    script = str(REPO / "benchmarks" / "fit_decision.py")

    def fit(*flags: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, script, "--min-found", "0.9", *flags, str(saved)],
            capture_output=True,
            text=True,
            check=check,
        )

    added = json.loads(fit("--signals", "sparse=dense_margin", "--assignments", "3").stdout)
    assert "dense_margin" in added["evidence_model"]["sparse"]
    assert "dense_margin" in added["fallback_evidence_model"]["sparse"]
    assert "dense_margin" not in added["evidence_model"]["hybrid"]
    mean = added["dev_cv_assignments"]["mode=hybrid"]
    assert mean["assignments"] == 3
    assert mean["out_of_scope_min"] <= mean["out_of_scope_no_evidence"] <= mean["out_of_scope_max"]
    plain = json.loads(fit().stdout)
    assert plain["dev_cv_assignments"]["mode=hybrid"]["assignments"] == 1
    assert plain["dev_cv_assignments"]["mode=hybrid"]["in_scope_found"] == pytest.approx(
        plain["dev_cv"]["mode=hybrid"]["in_scope_found"], abs=1e-4
    )
    refused = fit("--signals", "sparse=dense_margn", check=False)
    assert refused.returncode != 0
    assert "dense_margn" in refused.stderr
    assert plain["dev"]["family=hybrid"]["in_scope_found"] >= 0.9
    strict = json.loads(fit("--term-required", "all").stdout)
    withheld = len(hybrid_inside[::4]) / len(hybrid_inside)
    assert strict["dev"]["family=hybrid"]["in_scope_found"] <= 1 - withheld + 1e-9


def test_the_fit_script_measures_a_fixed_decision_without_fitting(tmp_path: Path):
    """--evaluate decides the dev rows by a given decision (a previous run's output, or the
    package's defaults) and fits nothing: a saved fit evaluated on its own rows gives its
    ``dev`` rates back; a decision that answers everything rejects no out-of-scope row; each
    rate comes with a Wilson interval around it."""
    signals, saved = _synthetic_dev_report(tmp_path)
    script = str(REPO / "benchmarks" / "fit_decision.py")

    def run(*flags: str) -> dict:
        done = subprocess.run(
            [sys.executable, script, *flags, str(saved)],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(done.stdout)

    fitted = run("--min-found", "0.9")
    fit_file = tmp_path / "fit.json"
    fit_file.write_text(json.dumps(fitted), encoding="utf-8")
    again = run("--evaluate", str(fit_file))
    assert "evidence_model" not in again  # nothing fitted
    assert again["dev"]["all"] == fitted["dev"]["all"]
    lenient = fitted | {
        "evidence_model": {"dense": {"bias": 30.0}},
        "fallback_evidence_model": {"dense": {"bias": 30.0}},
    }
    fit_file.write_text(json.dumps(lenient), encoding="utf-8")
    everything = run("--evaluate", str(fit_file))["dev"]["all"]
    # only the sparse rows without a question term are no evidence (the lookup's rule)
    unvouched = [r for r in signals if r["family"] == "sparse" and r["coverage"] == 0.0]
    outside = [r for r in signals if not r["in_scope"]]
    expected = sum(1 for r in unvouched if not r["in_scope"]) / len(outside)
    assert 0 < expected < 1
    assert everything["out_of_scope_no_evidence"] == pytest.approx(expected, abs=1e-4)
    assert everything["in_scope_found"] == 1.0
    low, high = run("--evaluate", "shipped")["dev_intervals"]["all"]["out_of_scope_no_evidence"]
    shipped = run("--evaluate", "shipped")["dev"]["all"]["out_of_scope_no_evidence"]
    assert low <= shipped <= high
    assert high - low > 0.1  # 30 out-of-scope rows pin a rate down to no better than that
