#!/usr/bin/env bash
# The unit tests on the LOWEST versions the pins allow: uv resolves the package's direct
# dependencies (and the `unit` extra) to their floors, pip installs them in .venv-lowest.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv-lowest/bin/python ] || python3 -m venv .venv-lowest
.venv-lowest/bin/python -m pip install -q --upgrade pip uv
.venv-lowest/bin/uv pip compile -q --resolution lowest-direct --only-binary :all: --no-binary jieba \
    --python .venv-lowest/bin/python --extra unit pyproject.toml -o .venv-lowest/requirements.txt
.venv-lowest/bin/python -m pip install -q -r .venv-lowest/requirements.txt
.venv-lowest/bin/python -m pip install -q --no-deps -e .
.venv-lowest/bin/python -m pip check
exec .venv-lowest/bin/python -m pytest -q -p no:cacheprovider tests/unit "$@"
