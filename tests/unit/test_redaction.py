"""``redact`` with its fast paths (no regex without "://", a pre-sorted secret list) masks exactly
what the rule says: every URL password and every registered secret, longest first (issue 12)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_lookup_knowledge.redaction import MASK, redact, redact_value, register_secret

SECRETS = ("s3cr3t-token-abc", "s3cr3t-token-abcdef", "pw!x")
for _secret in SECRETS:
    register_secret(_secret)

_USERINFO = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<user>[^\s/?#@:'\"]*):(?P<password>[^\s/?#'\"]*)@"
)


def reference_redact(text: str, secrets: tuple[str, ...]) -> str:
    """The rule, spelled out: the userinfo regex on every text, then each secret longest first."""
    masked = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    for secret in sorted(secrets, key=len, reverse=True):
        masked = masked.replace(secret, MASK)
    return masked


PIECES = st.sampled_from(
    [
        "http://",
        "postgresql+psycopg://",
        "admin:",
        "@milvus:19530",
        "/db",
        " ",
        ":",
        "@",
        *SECRETS,
        "plain words",
        "ÿ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(PIECES, st.text(max_size=8)), max_size=12).map("".join))
def test_redact_equals_the_rule(text):
    assert redact(text) == reference_redact(text, SECRETS)


def test_the_longer_secret_is_masked_whole_and_urls_keep_their_user():
    text = "token s3cr3t-token-abcdef at postgresql://app:pw@db/records"
    assert redact(text) == f"token {MASK} at postgresql://app:{MASK}@db/records"
    assert redact_value({"a": [text, 3], "b": "no secret here"}) == {
        "a": [redact(text), 3],
        "b": "no secret here",
    }
