"""Credentials inside a URL (``http://user:password@host`` as ``milvus_uri`` or
``openai_base_url``, a PostgreSQL records URL) never show: not in ``settings.model_dump()``, CLI
errors, the tool message the model reads, records, traces or DEBUG logs (issue 13, "Isolation and
secrets"). Each sink's text is collected and searched for the password.
"""

from __future__ import annotations

from langchain_lookup_knowledge import LookupSettings

PG_PASSWORD = "pg-URL-SECRET-5d1e"
MILVUS_PASSWORD = "mv-URL-SECRET-8c2a"
OPENAI_PASSWORD = "oa-URL-SECRET-3f9b"
PASSWORDS = (PG_PASSWORD, MILVUS_PASSWORD, OPENAI_PASSWORD)


def assert_no_password(surfaces: dict[str, str]) -> None:
    for where, text in surfaces.items():
        for secret in PASSWORDS:
            assert secret not in text, f"URL password leaked in {where}"


def test_settings_dumps_and_repr_mask_url_passwords():
    settings = LookupSettings(
        milvus_uri=f"http://root:{MILVUS_PASSWORD}@127.0.0.1:19530",
        openai_base_url=f"http://emb:{OPENAI_PASSWORD}@127.0.0.1:8080/v1",
        invocation_db_url=f"postgresql+psycopg://app:{PG_PASSWORD}@127.0.0.1:5432/records",
    )
    dumped = settings.model_dump()
    assert_no_password(
        {
            "model_dump": str(dumped),
            "model_dump_json": settings.model_dump_json(),
            "repr": repr(settings),
            "str": str(settings),
        }
    )
    # The user and host stay visible; the settings themselves still hold the real value.
    assert dumped["invocation_db_url"] == "postgresql+psycopg://app:***@127.0.0.1:5432/records"
    assert dumped["milvus_uri"] == "http://root:***@127.0.0.1:19530"
    assert settings.invocation_db_url is not None
    assert PG_PASSWORD in settings.invocation_db_url
