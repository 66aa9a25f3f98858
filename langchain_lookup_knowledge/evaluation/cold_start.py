"""Cold start: a fresh process's first lookup (and a bare search's), timed to the answer.

Example:
    >>> cold_start(settings, "disk full", CHILD_TOOL)  # doctest: +SKIP
    {'seconds': 2.4, 'found': True}
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from langchain_lookup_knowledge.settings import URL_FIELDS, LookupSettings

if TYPE_CHECKING:
    pass

__all__ = [
    "CHILD_BARE",
    "CHILD_TOOL",
    "child_maxrss_mb",
    "cold_start",
    "lite_db_busy",
    "settings_json",
    "wait_until_free",
]


CHILD_TOOL = """
import json, sys, time
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.tool import create_lookup_knowledge_tool
settings = LookupSettings.model_validate_json(sys.stdin.read())
tool = create_lookup_knowledge_tool(settings)
msg = tool.invoke({"type": "tool_call", "id": "cold", "name": tool.name,
                   "args": {"query": sys.argv[1]}})
print(json.dumps({"found": bool(msg.artifact and msg.artifact.get("found"))}), flush=True)
"""


CHILD_BARE = """
import json, sys
from langchain_lookup_knowledge.settings import LookupSettings
from langchain_lookup_knowledge.embeddings import build_embeddings
from langchain_milvus import Milvus
settings = LookupSettings.model_validate_json(sys.stdin.read())
store = Milvus(embedding_function=build_embeddings(settings).inner,
               collection_name=settings.collection,
               connection_args={"uri": settings.resolved_milvus_uri},
               primary_field=settings.id_field, text_field=settings.content_field,
               vector_field=settings.vector_field, auto_id=False,
               index_params={"index_type": settings.index_type,
                             "metric_type": settings.metric_type},
               search_params={"metric_type": settings.metric_type})
hits = store.similarity_search_with_score(sys.argv[1], k=settings.top_k)
print(json.dumps({"found": bool(hits)}), flush=True)
"""


def settings_json(settings: LookupSettings) -> str:
    data = {
        k: (v.get_secret_value() if isinstance(v, SecretStr) else v)
        for k, v in settings.model_dump().items()
    }
    # model_dump masks URL passwords; the child process needs the real URLs.
    data.update({name: getattr(settings, name) for name in URL_FIELDS})
    return json.dumps(data, default=str)


def lite_db_busy(settings: LookupSettings) -> bool:
    if not settings.is_milvus_lite:
        return False
    from langchain_lookup_knowledge.store.connection import _lite_lock_holder

    path = Path(settings.resolved_milvus_uri).expanduser()
    return path.is_dir() and _lite_lock_holder(path)


def wait_until_free(settings: LookupSettings, timeout_s: float = 60.0) -> None:
    """A child's Milvus Lite server can outlive the child briefly; wait for its lock."""
    deadline = time.monotonic() + timeout_s
    while lite_db_busy(settings) and time.monotonic() < deadline:
        time.sleep(0.2)


def child_maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0


def cold_start(settings: LookupSettings, query: str, script: str) -> dict[str, Any]:
    """Seconds from spawning a Python process until it prints its first answer."""
    with tempfile.TemporaryFile(mode="w+") as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", script, query],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env=os.environ | {"TQDM_DISABLE": "1"},
        )
        stdin, stdout = proc.stdin, proc.stdout
        if stdin is None or stdout is None:  # pragma: no cover - PIPE always gives both
            msg = "cold start: no pipes to the child process"
            raise RuntimeError(msg)
        stdin.write(settings_json(settings))
        stdin.close()
        line = stdout.readline()
        seconds = time.perf_counter() - start
        stdout.read()
        proc.wait(timeout=300)
        wait_until_free(settings)
        errors.seek(0)
        err = errors.read()
    if proc.returncode != 0 or not line.strip():
        tail = err.strip().splitlines()[-1:] or ["no output"]
        return {"seconds": None, "error": tail[0][:300]}
    return {"seconds": round(seconds, 3), "found": json.loads(line).get("found")}
