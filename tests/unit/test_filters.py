"""Safe Milvus expressions (store/filters.py): no value or key can change an expression's meaning.

Structure is checked two ways: a decoder that follows Milvus's string-literal rules, and the real
parser: each expression runs against Milvus Lite, and exactly the rows holding the value match.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_lookup_knowledge.core.filters import (
    CategoryFilter,
    and_exprs,
    condition,
    field_ref,
    filter_to_expr,
    literal,
    quote_string,
)
from langchain_lookup_knowledge.errors import UnsafeFilterError

# Text Milvus can hold: any code point but lone surrogates (not encodable as UTF-8).
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # the module-scoped store is meant to be shared
ADVERSARIAL = [
    'a" or id >= 0 or tag == "',
    "x\\",
    '\\"',
    '\\\\" or true or "',
    "tenant == 'b'",
    ") or (1 == 1",
    "line\nbreak\r\n",
    "nul\x00ctl\x01\x1b[0m\x7f",
    "新 tenant ü 😀 \u2028",
    'meta["k"]',
    "",
]


def decode_literal(text: str) -> str:
    """Decode one double-quoted literal the way Milvus's grammar reads it; fail on anything that
    would end it early or that Milvus rejects."""
    assert text[0] == '"', text
    assert text[-1] == '"', text
    out, i, body = [], 0, text[1:-1]
    escapes = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}
    while i < len(body):
        ch = body[i]
        assert ch not in '"\r\n', f"raw {ch!r} inside a literal: {text!r}"
        if ch == "\\":
            nxt = body[i + 1]
            assert nxt in escapes, f"escape Milvus rejects: \\{nxt} in {text!r}"
            out.append(escapes[nxt])
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# --- pure structure -------------------------------------------------------------------------
@given(TEXT)
def test_quoted_string_decodes_to_the_value_and_nothing_else(value: str) -> None:
    assert decode_literal(quote_string(value)) == value


@given(TEXT)
def test_condition_has_one_literal_whatever_the_value(value: str) -> None:
    expr = condition("tenant", value)
    prefix = "tenant == "
    assert expr.startswith(prefix)
    assert decode_literal(expr[len(prefix) :]) == value


@given(st.text(max_size=30))
def test_field_names_are_identifiers_or_rejected(name: str) -> None:
    try:
        ref = field_ref(name)
    except UnsafeFilterError:
        return
    assert ref == name
    assert name.isascii()
    assert name[0].isalpha() or name[0] == "_"
    assert all(ch.isalnum() or ch == "_" for ch in name)


@given(st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30))
def test_json_keys_are_quoted_or_rejected(key: str) -> None:
    try:
        ref = field_ref(f'metadata["{key}"]')
    except UnsafeFilterError:
        assert any(ch in key for ch in "\"'\\[]") or any(
            ord(ch) < 0x20 or ord(ch) == 0x7F for ch in key
        )
        return
    assert ref.startswith("metadata[")
    assert ref.endswith("]")
    assert decode_literal(ref[len("metadata[") : -1]) == key


@pytest.mark.parametrize(
    "name",
    ["tenant or 1==1", "a b", "x)", "1abc", "", "tenant;", 'metadata["a"]["b"]', 'meta["a\\"]'],
)
def test_injecting_field_names_are_rejected(name: str) -> None:
    with pytest.raises(UnsafeFilterError):
        filter_to_expr({name: "a"})


@pytest.mark.parametrize(
    "value",
    [math.nan, math.inf, 2**63, -(2**63) - 1, b"ab", {"a": 1}, [], [["nested"]], None, [1, None]],
)
def test_unsafe_values_are_rejected(value: object) -> None:
    with pytest.raises(UnsafeFilterError):
        filter_to_expr({"tenant": value})  # type: ignore[dict-item]


def test_structured_filters_and_json_paths() -> None:
    assert filter_to_expr(None) is None
    assert filter_to_expr({}) is None
    assert filter_to_expr({"tenant": "a", "level": [1, 2], "on": True}) == (
        '(tenant == "a") and (level in [1, 2]) and (on == true)'
    )
    assert filter_to_expr({'metadata["tenant"]': "a"}) == '(metadata["tenant"] == "a")'
    assert filter_to_expr({"metadata['tenant']": "a"}) == '(metadata["tenant"] == "a")'
    assert literal(-3) == "-3"
    assert literal(2.5) == "2.5"
    assert literal(False) == "false"
    assert and_exprs(None, "a == 1", "") == "a == 1"
    assert and_exprs("a == 1", "b == 2") == "(a == 1) and (b == 2)"
    assert and_exprs(None, None) is None


def test_a_list_on_a_json_path_is_an_or_of_equalities() -> None:
    assert filter_to_expr({'metadata["tenant"]': ["a", "b"]}) == (
        '(metadata["tenant"] == "a" or metadata["tenant"] == "b")'
    )
    assert filter_to_expr({'metadata["tenant"]': ["a"], "on": True}) == (
        '(metadata["tenant"] == "a") and (on == true)'
    )
    with pytest.raises(UnsafeFilterError, match="empty list"):
        filter_to_expr({'metadata["tenant"]': []})


def test_category_filter_on_scalar_or_metadata() -> None:
    assert CategoryFilter("db").to_expr("category") == 'category == "db"'
    assert CategoryFilter("db").to_expr(None) == 'metadata["category"] == "db"'
    assert CategoryFilter('x" or 1==1').to_expr('meta["category"]') == (
        'meta["category"] == "x\\" or 1==1"'
    )


# --- the real parser: Milvus Lite -----------------------------------------------------------
@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A Milvus Lite collection with a VARCHAR, an INT64, a DOUBLE and a JSON field."""
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(str(tmp_path_factory.mktemp("filters") / "filters.db"))
    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("tag", DataType.VARCHAR, max_length=4096)
    schema.add_field("n", DataType.INT64)
    schema.add_field("x", DataType.DOUBLE)
    schema.add_field("meta", DataType.JSON)
    schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)
    index = client.prepare_index_params()
    index.add_index("v", index_type="FLAT", metric_type="L2")
    client.create_collection("t", schema=schema)
    client.create_index("t", index, sync=False)
    client.load_collection("t")
    # Row 2 is another tenant: an expression that escapes its literal would also match it.
    client.insert(
        "t", [{"id": 2, "tag": "b", "n": 7, "x": 0.5, "meta": {"tenant": "b"}, "v": [0.0, 0.0]}]
    )
    yield client
    client.close()


def _matching(client: object, expr: str | None) -> list[int]:
    rows = client.query("t", filter=expr or "id >= 0", output_fields=["id"])  # type: ignore[attr-defined]
    return sorted(r["id"] for r in rows)


def _put(client: object, tag: str, n: int = 1, x: float = 1.0) -> None:
    client.upsert(
        "t",
        [
            {
                "id": 1,
                "tag": tag,
                "n": n,
                "x": x,  # type: ignore[attr-defined]
                "meta": {"tenant": tag},
                "v": [0.0, 0.0],
            }
        ],
    )


def _check_string(client: object, value: str) -> None:
    _put(client, value)
    expected = sorted({1} | ({2} if value == "b" else set()))
    assert _matching(client, filter_to_expr({"tag": value})) == expected
    assert _matching(client, filter_to_expr({'meta["tenant"]': value})) == expected
    assert _matching(client, filter_to_expr({"tag": [value, "zz"]})) == expected
    assert _matching(client, filter_to_expr({'meta["tenant"]': [value, "zz"]})) == expected
    # ANDed with another scope, the value can never widen the match to the other row.
    assert _matching(client, and_exprs(filter_to_expr({"tag": value}), "id == 1")) == [1]
    assert _matching(client, and_exprs(filter_to_expr({"tag": value}), "id == 3")) == []


def test_a_list_on_a_json_path_matches_each_of_its_values_in_milvus(lite: object) -> None:
    _put(lite, "a")
    assert _matching(lite, filter_to_expr({'meta["tenant"]': ["a", "b"]})) == [1, 2]
    assert _matching(lite, filter_to_expr({'meta["tenant"]': ["b", "zz"]})) == [2]
    both = filter_to_expr({'meta["tenant"]': ["a", "b"]})
    assert _matching(lite, and_exprs(both, "id == 2")) == [2]


@pytest.mark.parametrize("value", ADVERSARIAL)
def test_adversarial_values_match_exactly_their_row_in_milvus(lite: object, value: str) -> None:
    _check_string(lite, value)


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURE_OK)
@given(value=TEXT)
def test_any_unicode_value_matches_exactly_its_row_in_milvus(lite: object, value: str) -> None:
    _check_string(lite, value)


@settings(max_examples=40, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    n=st.integers(-(2**63), 2**63 - 1), x=st.floats(allow_nan=False, allow_infinity=False, width=64)
)
def test_numbers_round_trip_through_milvus(lite: object, n: int, x: float) -> None:
    _put(lite, "num", n=n, x=x)
    assert 1 in _matching(lite, filter_to_expr({"n": n}))
    assert 1 in _matching(lite, filter_to_expr({"x": x}))
    assert _matching(lite, and_exprs(filter_to_expr({"n": [n]}), "id == 1")) == [1]


@pytest.mark.parametrize("name", ["A\n", "tenant\n", 'metadata["tenant"]\n'])
def test_a_trailing_newline_is_no_identifier(name: str) -> None:
    with pytest.raises(UnsafeFilterError):
        field_ref(name)
