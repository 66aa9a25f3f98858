"""Settings grouped by concern: given and read flat or by group, the same settings either way."""

from __future__ import annotations

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.settings import (
    GROUPS,
    REMOVED_SETTINGS,
    RetrievalSettings,
    StoreSettings,
)
from langchain_lookup_knowledge.settings.groups import group_of, setting_names


def test_every_setting_is_in_exactly_one_group():
    names = setting_names()
    assert len(names) == len(set(names))
    assert set(names) == set(LookupSettings.model_fields)
    assert list(LookupSettings.model_fields) == names  # the reference's order is the model's


def test_a_group_given_by_name_sets_the_same_settings_as_flat_arguments():
    grouped = LookupSettings(
        retrieval={"top_k": 3, "fusion": "weighted"}, store={"collection": "rb"}
    )
    flat = LookupSettings(top_k=3, fusion="weighted", collection="rb")
    assert grouped.model_dump() == flat.model_dump()


def test_a_group_model_is_accepted_as_its_group():
    settings = LookupSettings(store=StoreSettings(collection="docs", hnsw_ef=99))
    assert (settings.collection, settings.hnsw_ef) == ("docs", 99)


def test_flat_and_group_reads_agree_and_follow_assignment():
    settings = LookupSettings(top_k=4)
    assert settings.retrieval.top_k == settings.top_k == 4
    assert isinstance(settings.retrieval, RetrievalSettings)
    settings.top_k = 7
    assert settings.retrieval.top_k == 7
    assert settings.retrieval.rerank_pool == settings.rerank_pool == 21
    for name, model in GROUPS.items():
        view = getattr(settings, name)
        assert isinstance(view, model)
        assert view.model_dump() == {f: getattr(settings, f) for f in model.model_fields}


def test_a_group_view_is_read_only():
    settings = LookupSettings()
    with pytest.raises(ValueError, match="frozen"):
        settings.retrieval.top_k = 3  # type: ignore[misc]
    assert settings.top_k == 5


def test_flat_environment_variables_still_set_settings(monkeypatch):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_TOP_K", "4")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RECORD_QUERY_TEXT", "hash")
    settings = LookupSettings()
    assert (settings.top_k, settings.records.record_query_text) == (4, "hash")
    # an argument wins over the variable, flat or by group
    assert LookupSettings(top_k=2).top_k == 2
    assert LookupSettings(retrieval={"top_k": 2}).top_k == 2


def test_a_bad_value_in_a_group_is_named_like_a_flat_one():
    with pytest.raises(ConfigurationError, match=r"top_k=0: Input should be greater"):
        LookupSettings(retrieval={"top_k": 0})
    with pytest.raises(ConfigurationError, match=r"candidate_k .* must be at least top_k"):
        LookupSettings(retrieval={"top_k": 10}, candidate_k=5)


def test_a_setting_given_twice_or_in_the_wrong_group_is_an_error():
    with pytest.raises(ConfigurationError, match=r"top_k is given twice \(flat and in retrieval\)"):
        LookupSettings(top_k=3, retrieval={"top_k": 4})
    with pytest.raises(ConfigurationError, match=r"store\.top_k: not a setting of the store group"):
        LookupSettings(store={"top_k": 3})
    with pytest.raises(ConfigurationError, match="a group is a mapping of its settings"):
        LookupSettings(retrieval=3)


@pytest.mark.parametrize("name", sorted(REMOVED_SETTINGS))
def test_a_removed_setting_is_an_error_that_says_why(name, monkeypatch):
    with pytest.raises(ConfigurationError, match=f"{name} .* was removed: "):
        LookupSettings(**{name: True})
    monkeypatch.setenv(f"LOOKUP_KNOWLEDGE_{name.upper()}", "true")
    with pytest.raises(ConfigurationError, match=f"LOOKUP_KNOWLEDGE_{name.upper()}\\) was removed"):
        LookupSettings()


REMOVED_DECISION_SETTINGS = (
    "evidence_decision",
    "relevance_decision",
    "high_relevance",
    "medium_relevance",
    "evidence_model",
    "fallback_evidence_model",
    "relevance_model",
    "found_confidence",
    "high_confidence",
    "medium_confidence",
    "evidence_term_rule",
)


@pytest.mark.parametrize("name", REMOVED_DECISION_SETTINGS)
def test_a_removed_decision_setting_names_itself_and_what_replaces_it(name, monkeypatch):
    """The decision modes and their settings are gone: given as a keyword or an environment
    variable, each is an error naming it, saying it was removed and what replaces it."""
    with pytest.raises(ConfigurationError) as keyword:
        LookupSettings(**{name: "calibrated"})
    message = str(keyword.value)
    assert f"{name} (or LOOKUP_KNOWLEDGE_{name.upper()}) was removed" in message
    assert "the judgement (relevanceScore read against the knowledge base's profile)" in message
    if name != "evidence_term_rule":
        assert "judge_model_file" in message  # the replacement
    monkeypatch.setenv(f"LOOKUP_KNOWLEDGE_{name.upper()}", "0.5")
    with pytest.raises(ConfigurationError, match=f"{name} .*was removed: the judgement"):
        LookupSettings()


def test_the_decision_settings_are_few():
    from langchain_lookup_knowledge.settings import DecisionSettings

    assert sorted(DecisionSettings.model_fields) == [
        "evidence_vocabulary_rules",
        "judge_model_file",
        "min_evidence_similarity",
    ]


def test_model_copy_and_validate_take_flat_and_grouped_settings():
    settings = LookupSettings()
    assert settings.model_copy(update={"reference_threshold": 1.0}).reference_threshold == 1.0
    assert LookupSettings.model_validate({"retrieval": {"top_k": 6}}).top_k == 6
    with pytest.raises(ConfigurationError, match="given twice"):
        LookupSettings.model_validate({"top_k": 6, "retrieval": {"top_k": 6}})


def test_group_of_names_a_settings_group():
    assert [group_of(n) for n in ("milvus_uri", "top_k", "judge_model_file")] == [
        "store",
        "retrieval",
        "decision",
    ]
    with pytest.raises(KeyError):
        group_of("bm25_stemming")
