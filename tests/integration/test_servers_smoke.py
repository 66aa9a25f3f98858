"""Smoke tests: the real test servers from tests/servers.py start and answer.

The fixtures (``postgres_url``, ``milvus_server_uri``, in tests/conftest.py) start
their server once per module and skip (with the reason) when the server cannot be
had; see tests/servers.py for the env vars that point the tests at an existing
server instead.
"""

from __future__ import annotations

import uuid

import pytest


@pytest.mark.postgres
def test_postgres_round_trip(postgres_url: str) -> None:
    sa = pytest.importorskip("sqlalchemy")

    assert postgres_url.startswith("postgresql+psycopg://")
    engine = sa.create_engine(postgres_url)
    table = f"smoke_{uuid.uuid4().hex[:8]}"
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, body JSONB NOT NULL)")
            )
            conn.execute(
                sa.text(f"INSERT INTO {table} (id, body) VALUES (:id, CAST(:body AS JSONB))"),
                [{"id": "a", "body": '{"k": "x"}'}, {"id": "b", "body": '{"k": "y"}'}],
            )
        with engine.connect() as conn:
            rows = conn.execute(
                sa.text(f"SELECT id FROM {table} WHERE body->>'k' = :k"), {"k": "y"}
            ).all()
            assert [r.id for r in rows] == ["b"]
            version = conn.execute(sa.text("SHOW server_version")).scalar_one()
            assert version
        with engine.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE {table}"))
    finally:
        engine.dispose()


@pytest.mark.milvus_server
def test_milvus_server_round_trip(milvus_server_uri: str) -> None:
    pytest.importorskip("pymilvus")
    from pymilvus import DataType, MilvusClient

    dim = 384
    client = MilvusClient(uri=milvus_server_uri)
    name = f"smoke_{uuid.uuid4().hex[:8]}"
    try:
        schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
        schema.add_field("metadata", DataType.JSON)
        schema.add_field("category", DataType.VARCHAR, max_length=64)
        index_params = client.prepare_index_params()
        index_params.add_index(field_name="vector", index_type="FLAT", metric_type="COSINE")
        # Strong consistency: the default ("Bounded") may not see just-inserted rows.
        client.create_collection(
            name, schema=schema, index_params=index_params, consistency_level="Strong"
        )

        def one_hot(i: int) -> list[float]:
            v = [0.0] * dim
            v[i] = 1.0
            return v

        rows = [
            {"id": "a", "vector": one_hot(0), "metadata": {"n": 1}, "category": "x"},
            {"id": "b", "vector": one_hot(1), "metadata": {"n": 2}, "category": "y"},
            {"id": "c", "vector": one_hot(2), "metadata": {"n": 3}, "category": "y"},
        ]
        assert client.insert(name, rows)["insert_count"] == 3
        client.flush(name)

        # The query vector is closest to "c", but the filter only admits "a".
        hits = client.search(
            name,
            data=[one_hot(2)],
            filter='category == "x"',
            limit=3,
            output_fields=["category", "metadata"],
        )[0]
        assert [h["id"] for h in hits] == ["a"]
        assert hits[0]["entity"]["category"] == "x"
        assert hits[0]["entity"]["metadata"] == {"n": 1}

        top = client.search(name, data=[one_hot(2)], limit=1)[0]
        assert top[0]["id"] == "c"
        assert top[0]["distance"] == pytest.approx(1.0, abs=1e-5)
    finally:
        try:
            client.drop_collection(name)
        finally:
            client.close()
