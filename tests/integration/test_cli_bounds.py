"""Out-of-range values on the command line and in the environment are one clear line, exit 2,
and leave nothing behind: huge durations, ``--html`` naming a folder, unbounded timeouts, an
empty authoritative filter."""

from __future__ import annotations

import pytest

from tests.cli_helpers import run_cli


@pytest.fixture
def env(sample_kb_store, tmp_path, monkeypatch):
    """The sample store configured through the environment, records in a fresh SQLite file."""
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DATA_DIR", str(sample_kb_store.data_dir))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_MILVUS_URI", str(sample_kb_store.milvus_uri))
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_COLLECTION", sample_kb_store.collection)
    monkeypatch.setenv(
        "LOOKUP_KNOWLEDGE_INVOCATION_DB_URL", f"sqlite:///{tmp_path / 'records.sqlite3'}"
    )
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_RECORD_TIMEOUT_S", "30")  # a loaded machine


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--since", "99999999d"],
        ["report", "--since", "1d", "--until", "99999999999w"],
        ["records", "prune", "--older-than", "99999999999d"],
        ["records", "prune", "--older-than", "9" * 400 + "d"],  # a float: inf
    ],
)
def test_huge_durations_are_a_clear_error(env, argv):
    code, _out, err = run_cli(argv)
    assert code == 2, err
    assert "Traceback" not in err
    assert "OverflowError" not in err
    assert "lookup-knowledge: error: invalid duration" in err
    assert "at most 36500d" in err


def test_html_into_a_folder_is_an_error_and_leaves_no_temp_file(env, tmp_path):
    target = tmp_path / "pages"
    target.mkdir()
    run_cli(["query", "pod keeps crashing and restarting"])
    code, _out, err = run_cli(["report", "--since", "1d", "--html", str(target)])
    assert code == 2, err
    assert f"--html: {target} is a folder" in err
    assert "Traceback" not in err
    assert list(tmp_path.glob(".*.tmp")) == []
    assert list(target.iterdir()) == []


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LOOKUP_KNOWLEDGE_RECORD_TIMEOUT_S", "inf"),
        ("LOOKUP_KNOWLEDGE_RECORD_RETRY_AFTER_S", "1e12"),
        ("LOOKUP_KNOWLEDGE_MILVUS_TIMEOUT_S", "nan"),
        ("LOOKUP_KNOWLEDGE_MILVUS_LOAD_TIMEOUT_S", "inf"),
        ("LOOKUP_KNOWLEDGE_EMBEDDING_TIMEOUT_S", "Infinity"),
        ("LOOKUP_KNOWLEDGE_SIDECAR_TIMEOUT_S", "7200"),
    ],
)
def test_unbounded_timeouts_are_refused_with_their_range(env, monkeypatch, variable, value):
    monkeypatch.setenv(variable, value)
    code, _out, err = run_cli(["query", "pod keeps crashing"])
    assert code == 2, err
    assert variable in err
    assert "in the range (0, 3600]" in err
    assert "Traceback" not in err


def test_empty_default_filter_is_an_error(env, monkeypatch):
    monkeypatch.setenv("LOOKUP_KNOWLEDGE_DEFAULT_FILTER", "{}")
    code, _out, err = run_cli(["query", "pod keeps crashing"])
    assert code == 2, err
    assert "LOOKUP_KNOWLEDGE_DEFAULT_FILTER" in err
    assert "an empty filter would match every tenant" in err
    assert "Traceback" not in err
