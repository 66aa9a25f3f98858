#!/usr/bin/env bash
# Fresh machine -> the test suite: a venv in .venv with the test extras, then pytest.
# Tests that need ../shared/data, PostgreSQL or a Milvus server skip with the reason when absent.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
exec .venv/bin/python -m pytest "$@"
