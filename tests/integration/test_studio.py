"""``langgraph dev`` (what LangGraph Studio talks to) serving ``langgraph.json``, for real.

The repository's ``langgraph.json`` and ``graphs/`` are copied into a temporary folder (the dev
server keeps its state in ``.langgraph_api/`` under its working directory), the bundled sample
knowledge base is ingested there by the CLI, and the server runs on 127.0.0.1 offline (no
LangSmith key, tracing and CLI analytics off). Skipped, with the reason, where ``langgraph-cli
[inmem]`` is not installed (``pip install -e '.[studio]'``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langchain_lookup_knowledge.core.models import LookupResult

REPO = Path(__file__).resolve().parents[2]
SAMPLE_KB = REPO / "langchain_lookup_knowledge" / "sample_kb"
LANGGRAPH = Path(sys.executable).with_name("langgraph")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("langgraph_api") is None or not LANGGRAPH.exists(),
        reason="langgraph-cli[inmem] is not installed (pip install -e '.[studio]')",
    ),
]

OFFLINE = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, body: dict[str, Any] | None = None, timeout: float = 120) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as response:
        return json.loads(response.read())


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``langgraph dev`` over a copy of the checkout's langgraph.json and graphs/."""
    root = tmp_path_factory.mktemp("studio")
    shutil.copy(REPO / "langgraph.json", root / "langgraph.json")
    shutil.copytree(REPO / "graphs", root / "graphs")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"} and not k.startswith("LOOKUP_")
    }
    env |= OFFLINE | {"LOOKUP_KNOWLEDGE_DATA_DIR": str(root / "data")}
    ingest = subprocess.run(
        [sys.executable, "-m", "langchain_lookup_knowledge.cli", "ingest", str(SAMPLE_KB)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=root,
    )
    assert ingest.returncode == 0, ingest.stderr
    port = _free_port()
    log = (root / "dev.log").open("w")
    command = [str(LANGGRAPH), "dev", "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        [*command, "--no-browser", "--no-reload"],
        cwd=root,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if _request(f"{url}/ok", timeout=5).get("ok"):
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"langgraph dev did not start:\n{(root / 'dev.log').read_text()}")
            time.sleep(1)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def _assistant(url: str) -> str:
    (assistant,) = _request(f"{url}/assistants/search", {"graph_id": "lookup_knowledge"})
    return str(assistant["assistant_id"])


def test_studio_gets_input_and_output_schemas(dev_server: str) -> None:
    schemas = _request(f"{dev_server}/assistants/{_assistant(dev_server)}/schemas")
    schema_in, schema_out = schemas["input_schema"], schemas["output_schema"]
    assert schema_in["properties"]["query"]["type"] == "string"
    assert schema_in["required"] == ["query"]
    assert set(schema_out["properties"]) == {"result", "retrieval_details", "error"}


def test_a_lookup_through_the_api_returns_the_camelcase_contract(dev_server: str) -> None:
    out = _request(
        f"{dev_server}/runs/wait",
        {"assistant_id": _assistant(dev_server), "input": {"query": "redis memory eviction"}},
    )
    assert set(out) == {"result", "retrieval_details", "error"}
    assert out["error"] is None
    result = out["result"]
    assert {"evidenceBlocks", "contextPack", "retrievalTrace", "relevanceLevel"} <= set(result)
    typed = LookupResult.model_validate(result)
    assert typed.to_json_dict() == result  # exactly the contract, nothing snake_case
    assert typed.found
    assert typed.evidence_blocks[0].source == "databases/redis-memory-eviction.md"


def test_a_thread_run_keeps_its_state(dev_server: str) -> None:
    """On a thread the server checkpoints every node: the state loads back as JSON."""
    thread = _request(f"{dev_server}/threads", {})["thread_id"]
    out = _request(
        f"{dev_server}/threads/{thread}/runs/wait",
        {"assistant_id": _assistant(dev_server), "input": {"query": "etcd is slow"}},
    )
    state = _request(f"{dev_server}/threads/{thread}/state")
    assert state["values"]["result"] == out["result"]
    assert LookupResult.model_validate(out["result"]).found
