"""A name that is no setting, given in Python (an argument, a group's key, a mapping to
``model_validate``), is a ``ConfigurationError`` naming it and the nearest settings; a
``LOOKUP_KNOWLEDGE_*`` variable that is no setting is still only warned about."""

from __future__ import annotations

import logging

import pytest

from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.cli import main
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.settings import take_unknown_setting_warnings


def problem(**values: object) -> str:
    with pytest.raises(ConfigurationError) as caught:
        LookupSettings(**values)  # type: ignore[arg-type]
    return str(caught.value)


def test_an_unknown_argument_is_named_with_the_nearest_settings():
    message = problem(milvus_uri="/tmp/x.db", collection_name="rb")
    assert message.startswith("LookupSettings: unknown setting 'collection_name' ")
    assert "(did you mean 'collection'" in message
    assert "did you mean 'top_k'?" in problem(topk=3)
    assert "did you mean 'chunk_size'?" in problem(chunksize=512)


def test_an_unknown_argument_without_a_near_setting_points_to_the_reference():
    message = problem(xyz=1)
    assert "unknown setting 'xyz'" in message
    assert "did you mean" not in message
    assert "docs/configuration.md" in message


def test_a_misspelt_group_is_an_unknown_setting_too():
    assert "unknown setting 'retreival' (did you mean 'retrieval'" in problem(
        retreival={"top_k": 3}
    )


def test_every_unknown_argument_is_named_in_one_line():
    message = problem(topk=3, collection_name="rb", retrieval={"topk": 4})
    assert "\n" not in message
    for named in ("'topk'", "'collection_name'", "retrieval.topk"):
        assert named in message


def test_an_unknown_key_in_a_group_is_named_with_the_nearest_settings_of_that_group():
    message = problem(retrieval={"topk": 3})
    assert "retrieval.topk: not a setting of the retrieval group (did you mean 'top_k'?)" in message
    assert "(did you mean 'collection'" in problem(store={"collection_name": "rb"})


def test_a_setting_given_in_another_group_says_which_group_it_is_in():
    message = problem(store={"top_k": 3})
    assert "store.top_k: not a setting of the store group (top_k is a retrieval setting)" in message


def test_model_validate_refuses_an_unknown_key_as_the_constructor_does():
    with pytest.raises(ConfigurationError, match=r"unknown setting 'topk' \(did you mean 'top_k'"):
        LookupSettings.model_validate({"topk": 3})
    with pytest.raises(ConfigurationError, match=r"retrieval\.topk: not a setting"):
        LookupSettings.model_validate({"retrieval": {"topk": 3}})


def test_a_stray_environment_variable_still_builds_the_settings(monkeypatch):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_SOMETHING", "1")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_TOPK", "3")
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_COLLECTION", "runbooks")
    take_unknown_setting_warnings()  # this process may have warned about them already
    settings = LookupSettings(top_k=4)
    assert (settings.top_k, settings.collection) == (4, "runbooks")
    assert LookupSettings(retrieval={"top_k": 2}).top_k == 2
    assert LookupSettings.model_validate({"top_k": 2}).top_k == 2


def test_a_stray_environment_variable_is_warned_about_not_refused(monkeypatch, caplog):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_TOPK_UNKNOWN_KEYS_TEST", "3")
    with caplog.at_level(logging.WARNING, logger="langchain_lookup_knowledge.settings"):
        LookupSettings()
    assert "LOOKUP_KNOWLEDGE_TOPK_UNKNOWN_KEYS_TEST is not a setting, ignored" in caplog.text


def test_valid_arguments_groups_and_copies_still_work():
    settings = LookupSettings(
        milvus_uri="/tmp/x.db",
        collection="rb",
        retrieval={"top_k": 3},
        rerank={"per_document_cap": 2},
    )
    assert (settings.collection, settings.top_k, settings.per_document_cap) == ("rb", 3, 2)
    assert LookupSettings(TOP_K=3).top_k == 3  # names are case-insensitive, as pydantic reads them
    assert LookupSettings(_env_file=None).top_k == 5  # BaseSettings' own arguments still pass
    again = LookupSettings.model_validate(settings.model_dump())
    assert again.model_dump() == settings.model_dump()
    assert settings.model_copy(update={"top_k": 7}).top_k == 7


def test_the_cli_shows_an_unknown_setting_in_one_line_without_a_traceback(monkeypatch, capsys):
    # a caller's typo reaching the settings the CLI builds (its flags all name settings)
    monkeypatch.setattr(
        "langchain_lookup_knowledge.cli.options.LookupSettings",
        lambda **values: LookupSettings(collection_name="rb", **values),
    )
    assert main(["query", "disk full"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "lookup-knowledge: error: LookupSettings: unknown setting 'collection_name' "
        "(did you mean 'collection' or 'catalog_collection'?)"
    ]
