"""The stored vectors of search hits read at once from pymilvus's response (the cosine's input):
the vector field's packed floats, or the vector copies (base64 of the float32 bytes)."""

from __future__ import annotations

import numpy as np
from pymilvus import DataType
from pymilvus.client.search_result import SearchResult
from pymilvus.grpc_gen import schema_pb2

from langchain_lookup_knowledge.retrieval.hits import (
    entity_vector,
    take_dense_vectors,
    take_hit_vectors,
)
from langchain_lookup_knowledge.retrieval.scores import cosine_to
from langchain_lookup_knowledge.store.layout import CollectionLayout
from langchain_lookup_knowledge.store.vector_copy import decode_vector_copies, encode_vector_copy

VECTORS = [[0.1, 0.2, 0.3, 0.4], [0.5, -0.25, 1.0, 0.0], [1.5, 2.5, -3.5, 0.125]]
KEYS = ["a#0", "b#0", "c#1"]


def search_result(nq: int = 1) -> SearchResult:
    """A two-field search response as a Milvus server sends it (``nq`` queries, 3 hits each)."""
    pk = schema_pb2.FieldData(field_name="pk", type=DataType.VARCHAR)
    pk.scalars.string_data.data.extend(KEYS * nq)
    vector = schema_pb2.FieldData(field_name="vector", type=DataType.FLOAT_VECTOR)
    vector.vectors.dim = 4
    for _ in range(nq):
        for row in VECTORS:
            vector.vectors.float_vector.data.extend(row)
    data = schema_pb2.SearchResultData(
        num_queries=nq, top_k=3, topks=[3] * nq, output_fields=["pk", "vector"]
    )
    data.ids.str_id.data.extend(KEYS * nq)
    data.scores.extend([0.9, 0.8, 0.7] * nq)
    data.fields_data.extend([pk, vector])
    return SearchResult(data)


def test_the_hits_vectors_come_as_one_matrix_and_no_hit_decodes_them():
    hits = search_result()[0]
    vectors = take_dense_vectors(hits, "vector")
    assert vectors is not None
    assert vectors.dtype == np.float32
    assert vectors.tolist() == np.asarray(VECTORS, dtype=np.float32).tolist()
    entities = [hit["entity"] for hit in hits]  # materialized after: without the vector
    assert [e["pk"] for e in entities] == KEYS
    assert all("vector" not in e for e in entities)


def test_the_cosines_are_the_same_numbers_as_from_each_hits_decoded_vector():
    query = [0.3, -0.1, 0.7, 0.2]
    decoded = [hit["entity"]["vector"] for hit in search_result()[0]]
    matrix = take_dense_vectors(search_result()[0], "vector")
    assert matrix is not None
    assert cosine_to(query, matrix) == cosine_to(query, decoded)


def test_each_querys_hits_get_their_own_rows():
    second = search_result(nq=2)[1]
    vectors = take_dense_vectors(second, "vector")
    assert vectors is not None
    assert vectors.shape == (3, 4)
    assert vectors.tolist() == np.asarray(VECTORS, dtype=np.float32).tolist()


def test_hits_of_another_shape_keep_their_vectors():
    plain = [{"entity": {"pk": "a#0", "vector": VECTORS[0]}}]
    assert take_dense_vectors(plain, "vector") is None
    hits = search_result()[0]
    list(hits)  # already decoded hit by hit
    assert take_dense_vectors(hits, "vector") is None
    assert take_dense_vectors(search_result()[0], "other_field") is None


def layout_with_copy(copy: str | None = "vector_b64") -> CollectionLayout:
    return CollectionLayout(
        name="kb",
        id_field="pk",
        content_field="text",
        vector_field="vector",
        dimension=4,
        metric_type="COSINE",
        index_type="FLAT",
        sparse_field="sparse",
        metadata_field=None,
        category_field=None,
        source_field=None,
        analyzer="standard",
        vector_copy_field=copy,
    )


def copy_result(copies: list[str | None]) -> SearchResult:
    """A search response carrying the (nullable) vector copies as a VARCHAR field."""
    pk = schema_pb2.FieldData(field_name="pk", type=DataType.VARCHAR)
    pk.scalars.string_data.data.extend(KEYS)
    copy = schema_pb2.FieldData(field_name="vector_b64", type=DataType.VARCHAR)
    copy.scalars.string_data.data.extend([c or "" for c in copies])
    copy.valid_data.extend([c is not None for c in copies])
    data = schema_pb2.SearchResultData(
        num_queries=1, top_k=3, topks=[3], output_fields=["pk", "vector_b64"]
    )
    data.ids.str_id.data.extend(KEYS)
    data.scores.extend([0.9, 0.8, 0.7])
    data.fields_data.extend([pk, copy])
    return SearchResult(data)


def test_the_copies_decode_to_the_vector_fields_float32_numbers_and_leave_the_hits():
    hits = copy_result([encode_vector_copy(v) for v in VECTORS])[0]
    vectors = take_hit_vectors(hits, layout_with_copy())
    assert vectors is not None
    assert vectors.dtype == np.float32
    assert np.array_equal(vectors, take_dense_vectors(search_result()[0], "vector"))
    assert all(set(hit["entity"]) == {"pk"} for hit in hits)


def test_a_hit_without_its_copy_leaves_each_hit_to_its_own_fields():
    copies = [encode_vector_copy(VECTORS[0]), None, encode_vector_copy(VECTORS[2])]
    hits = copy_result(copies)[0]
    layout = layout_with_copy()
    assert take_hit_vectors(hits, layout) is None
    found = [entity_vector(hit["entity"], layout) for hit in hits]
    assert found[1] is None  # fetched by key by the caller
    assert np.array_equal(found[0], np.float32(VECTORS[0]))
    assert all("vector_b64" not in hit["entity"] for hit in hits)


def test_a_copy_of_another_size_or_text_is_no_vector():
    assert decode_vector_copies([encode_vector_copy(VECTORS[0])], 5) is None
    assert decode_vector_copies(["not base64 at all!!!!"], 4) is None
    assert decode_vector_copies([encode_vector_copy(VECTORS[0]), 7], 4) is None


def test_without_a_copy_field_the_vector_fields_floats_are_read():
    vectors = take_hit_vectors(search_result()[0], layout_with_copy(None))
    assert vectors is not None
    assert vectors.tolist() == np.asarray(VECTORS, dtype=np.float32).tolist()
