#!/usr/bin/env bash
# Install the server binaries the integration tests start by themselves
# (see tests/servers.py). Idempotent and quiet; run as root (CI is root):
#   bash .ci/servers.sh        or        source .ci/servers.sh
# PostgreSQL: Debian's "postgresql" package (binaries under
# /usr/lib/postgresql/*/bin). Milvus: the PyPI package "milvus" (a dev
# dependency installed by pip), nothing to do here.

lk_install_servers() {
    if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null \
        && compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null; then
        return 0  # already installed
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            echo "servers.sh: not root: cannot install postgresql; PostgreSQL tests will be skipped" >&2
            return 0
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "servers.sh: no apt-get: cannot install postgresql; PostgreSQL tests will be skipped" >&2
        return 0
    fi
    echo "servers.sh: installing postgresql (apt-get)" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
        && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            postgresql >/dev/null \
        || { echo "servers.sh: apt-get install postgresql failed" >&2; return 1; }
}

lk_install_servers

# Chromium: the records report test renders the HTML page in a real headless browser
# (tests/integration/test_records_report.py skips, with the reason, where it is absent).
lk_install_chromium() {
    if command -v chromium >/dev/null 2>&1; then
        return 0
    fi
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo="sudo -n"
        else
            echo "servers.sh: not root: cannot install chromium; the HTML render test will be skipped" >&2
            return 0
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "servers.sh: no apt-get: cannot install chromium; the HTML render test will be skipped" >&2
        return 0
    fi
    echo "servers.sh: installing chromium (apt-get)" >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            chromium >/dev/null \
        || { $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null \
            && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
                --no-install-recommends chromium >/dev/null; } \
        || echo "servers.sh: apt-get install chromium failed; the HTML render test will be skipped" >&2
    return 0
}

lk_install_chromium
