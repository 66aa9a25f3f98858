#!/usr/bin/env bash
# Fresh machine -> the offline demo: a venv in .venv, the package (+ langchain for agents), then
# `lookup-knowledge demo`
# (Milvus Lite + the bundled ONNX embedding model; no server, no network at run time).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[agents]'
exec .venv/bin/lookup-knowledge demo "$@"
