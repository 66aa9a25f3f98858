"""Real servers for integration tests, started by the tests themselves.

Two context managers, each yielding a connection string:

* :func:`start_postgres` -> SQLAlchemy URL ``postgresql+psycopg://...``
* :func:`start_milvus_server` -> Milvus URI ``http://127.0.0.1:PORT``
* :func:`start_milvus_lite_server` -> Milvus URI ``http://127.0.0.1:PORT`` (``milvus-lite server``)

Each one first honours an environment variable naming an existing server
(``LOOKUP_KNOWLEDGE_TEST_POSTGRES_URL`` / ``LOOKUP_KNOWLEDGE_TEST_MILVUS_URI`` /
``LOOKUP_KNOWLEDGE_TEST_MILVUS_LITE_URI``);
otherwise it starts a private, throw-away server in a fresh temp directory,
on free ports, reached over 127.0.0.1, and tears it down (whole process group
killed, temp directory removed) on exit.  When the server cannot be had
(binary missing, startup failed or timed out) :class:`ServerUnavailable` is
raised with a human-readable ``reason`` so the caller can ``pytest.skip``.

PostgreSQL comes from Debian's ``postgresql`` package (``.ci/servers.sh``
installs it); binaries are looked up under ``/usr/lib/postgresql/*/bin``.
When running as root, ``initdb``/``postgres`` run as the ``postgres`` user.

Milvus comes from the PyPI package ``milvus`` (2.3.x, the "Milvus Lite"
standalone server bundle).  Its binaries are unpacked once into a cache
directory (``$LOOKUP_KNOWLEDGE_TEST_CACHE_DIR`` or
``~/.cache/lookup-knowledge-tests``), every server gets its own data dir.
Milvus Lite (PyPI ``milvus-lite``, 3.x) also serves its engine over the server's gRPC API:
``milvus-lite server --data-dir D --host 127.0.0.1 --port P``. Unlike the 2.3 server it has
BM25 functions, so the production code path of hybrid search over a server URI is exercised.
Note: Milvus 2.3's gRPC/HTTP listeners bind the wildcard address (not
configurable in 2.3); every component is told to advertise 127.0.0.1, the
embedded etcd listens on 127.0.0.1 only, and clients connect via 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import glob
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "MILVUS_LITE_URI_ENV",
    "MILVUS_URI_ENV",
    "POSTGRES_URL_ENV",
    "ServerUnavailable",
    "find_postgres_bindir",
    "start_milvus_lite_server",
    "start_milvus_server",
    "start_postgres",
]

POSTGRES_URL_ENV = "LOOKUP_KNOWLEDGE_TEST_POSTGRES_URL"
MILVUS_URI_ENV = "LOOKUP_KNOWLEDGE_TEST_MILVUS_URI"
MILVUS_LITE_URI_ENV = "LOOKUP_KNOWLEDGE_TEST_MILVUS_LITE_URI"
CACHE_DIR_ENV = "LOOKUP_KNOWLEDGE_TEST_CACHE_DIR"

DEFAULT_POSTGRES_DB = "lookup_knowledge_test"
LOOPBACK = "127.0.0.1"


class ServerUnavailable(Exception):  # noqa: N818 - name fixed by the test API
    """The requested test server cannot be provided; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --------------------------------------------------------------------------
# helpers


def _free_ports(count: int) -> list[int]:
    """Return ``count`` distinct TCP ports that are free right now."""
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((LOOPBACK, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _die_with_parent() -> None:
    """preexec_fn: have the kernel SIGKILL the child if the test process dies."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    except Exception:  # pragma: no cover - best effort only
        pass


def _tail(path: Path, lines: int = 15, width: int = 300) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(line[:width] for line in text[-lines:])


_TMP_PREFIX = "lookup-knowledge-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale(kind: str) -> None:
    """Remove temp dirs (and Milvus pid files) left by test processes that were killed.

    Directories are named ``lookup-knowledge-KIND-PID-*``; one whose PID is no
    longer alive belonged to a run that could not clean up after itself.
    """
    pattern = re.compile(rf"^{_TMP_PREFIX}{kind}-(\d+)-")
    for entry in Path(tempfile.gettempdir()).glob(f"{_TMP_PREFIX}{kind}-*"):
        m = pattern.match(entry.name)
        if m and not _pid_alive(int(m.group(1))):
            shutil.rmtree(entry, ignore_errors=True)
    if kind == "milvus":
        for rundir in ("/run/milvus", "/tmp/milvus"):
            for pidfile in Path(rundir).glob("standalone-lk*-*.pid"):
                m = re.match(r"^standalone-lk(\d+)-", pidfile.name)
                if m and not _pid_alive(int(m.group(1))):
                    with contextlib.suppress(OSError):
                        pidfile.unlink()


def _stop_process_group(proc: subprocess.Popen, sig: int, grace: float) -> None:
    """Send ``sig`` to the process group of ``proc``; SIGKILL the group after ``grace`` s."""
    try:
        pgid = os.getpgid(proc.pid)
    except ProcessLookupError:
        pgid = None
    if proc.poll() is None:
        try:
            if pgid is not None:
                os.killpg(pgid, sig)
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace)
    # Kill whatever is left in the group (children, stragglers), then reap.
    if pgid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        proc.wait(timeout=10)


# --------------------------------------------------------------------------
# PostgreSQL


def find_postgres_bindir() -> Path | None:
    """Directory holding initdb + postgres (newest /usr/lib/postgresql/N/bin), or None."""

    def version_key(p: str) -> tuple:
        ver = Path(p).parent.name
        return tuple(int(x) if x.isdigit() else 0 for x in ver.split("."))

    for bindir in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version_key, reverse=True):
        if os.access(os.path.join(bindir, "initdb"), os.X_OK) and os.access(
            os.path.join(bindir, "postgres"), os.X_OK
        ):
            return Path(bindir)
    initdb = shutil.which("initdb")
    if initdb:
        found = Path(os.path.realpath(initdb)).parent
        if (found / "postgres").exists():
            return found
    return None


@contextlib.contextmanager
def start_postgres(
    *,
    timeout: float = 60.0,
    database: str = DEFAULT_POSTGRES_DB,
    keep_on_failure: bool = False,
) -> Iterator[str]:
    """Yield a SQLAlchemy URL (``postgresql+psycopg://postgres@127.0.0.1:PORT/DB``).

    Uses ``$LOOKUP_KNOWLEDGE_TEST_POSTGRES_URL`` as-is when set.  Otherwise runs
    initdb + postgres in a temp dir (as user ``postgres`` when we are root),
    listening on 127.0.0.1 only with trust auth, creates ``database`` and
    yields its URL.  Raises :class:`ServerUnavailable` if the binaries are
    missing or the server is not accepting connections within ``timeout`` s.
    """
    external = os.environ.get(POSTGRES_URL_ENV)
    if external:
        yield external
        return

    bindir = find_postgres_bindir()
    if bindir is None:
        raise ServerUnavailable(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin "
            "(apt-get install postgresql, or set " + POSTGRES_URL_ENV + ")"
        )
    try:
        import psycopg
    except ImportError as exc:  # pragma: no cover
        raise ServerUnavailable(f"psycopg is not installed: {exc}") from exc

    run_as: dict = {}
    if os.geteuid() == 0:
        # initdb/postgres refuse to run as root: drop to the 'postgres' user.
        try:
            pw = pwd.getpwnam("postgres")
        except KeyError as exc:
            raise ServerUnavailable(
                "running as root but there is no 'postgres' user to run PostgreSQL as"
            ) from exc
        run_as = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
        owner = (pw.pw_uid, pw.pw_gid)
        env = {**os.environ, "HOME": pw.pw_dir, "USER": "postgres", "LOGNAME": "postgres"}
    else:
        owner = None
        env = dict(os.environ)
    env.update({"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "UTC"})
    for var in ("PGDATA", "PGHOST", "PGPORT", "PGUSER", "PGDATABASE", "PGPASSWORD"):
        env.pop(var, None)

    _remove_stale("pg")
    tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}pg-{os.getpid()}-"))
    proc: subprocess.Popen | None = None
    ok = False
    try:
        if owner is not None:
            os.chown(tmp, *owner)
        datadir = tmp / "data"
        log_path = tmp / "postgres.log"

        init = subprocess.run(
            [
                str(bindir / "initdb"),
                "-D",
                str(datadir),
                "--username=postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            **run_as,
        )
        if init.returncode != 0:
            output = (init.stderr or init.stdout).strip()[-2000:]
            raise ServerUnavailable(f"initdb failed (exit {init.returncode}): {output}")

        deadline = time.monotonic() + timeout
        last_err = "not started"
        for _attempt in range(3):  # retry if someone grabs our port meanwhile
            (port,) = _free_ports(1)
            conf = (
                f"\n# lookup-knowledge test server\n"
                f"listen_addresses = '{LOOPBACK}'\n"
                f"port = {port}\n"
                f"unix_socket_directories = '{tmp}'\n"
                "fsync = off\n"
                "synchronous_commit = off\n"
                "full_page_writes = off\n"
                "max_connections = 50\n"
                "shared_buffers = 32MB\n"
            )
            (datadir / "postgresql.auto.conf").write_text(conf)
            with open(log_path, "ab") as log_fh:
                proc = subprocess.Popen(
                    [str(bindir / "postgres"), "-D", str(datadir)],
                    cwd=tmp,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=log_fh,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=_die_with_parent,
                    **run_as,
                )
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    with psycopg.connect(
                        host=LOOPBACK,
                        port=port,
                        user="postgres",
                        dbname="postgres",
                        connect_timeout=2,
                        autocommit=True,
                    ) as conn:
                        conn.execute(f'CREATE DATABASE "{database}"')
                    ok = True
                    break
                except psycopg.OperationalError as exc:
                    last_err = str(exc).strip()
                    time.sleep(0.1)
            if ok:
                break
            if proc.poll() is None:  # timed out while still running
                break
            last_err = f"postgres exited with code {proc.returncode}"
            proc = None
        if not ok:
            raise ServerUnavailable(
                f"PostgreSQL did not start within {timeout:.0f}s ({last_err}); "
                f"log tail:\n{_tail(log_path)}"
            )
        yield f"postgresql+psycopg://postgres@{LOOPBACK}:{port}/{database}"
    finally:
        if proc is not None:
            # SIGINT = "fast" shutdown; SIGKILL the group after the grace period.
            _stop_process_group(proc, signal.SIGINT, grace=10)
        if ok or not keep_on_failure:
            shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# Milvus standalone server (PyPI package "milvus", 2.3.x)

_MILVUS_PORT_KEYS = (
    "proxy_port",
    "proxy_internal_port",
    "root_coord_port",
    "query_coord_port",
    "query_node_port",
    "index_coord_port",
    "index_node_port",
    "data_coord_port",
    "data_node_port",
    "etcd_port",
)
_TEMPLATE_VAR = re.compile(r"\{\{(.*?)\}\}")


def _cache_root() -> Path:
    base = os.environ.get(CACHE_DIR_ENV)
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "lookup-knowledge-tests"


def _milvus_package() -> types.ModuleType:
    try:
        import milvus  # the PyPI "milvus" server bundle, not pymilvus/milvus_lite
    except ImportError as exc:
        raise ServerUnavailable(
            f"Python package 'milvus' (Milvus 2.3 standalone server) is not installed: {exc}"
        ) from exc
    pkg_dir = Path(str(milvus.__file__)).parent
    if not (pkg_dir / "data" / "bin" / "milvus.lzma").exists() or not hasattr(
        milvus, "_initialize_data_files"
    ):
        raise ServerUnavailable(
            f"installed 'milvus' package at {pkg_dir} does not bundle a Milvus server binary"
        )
    return milvus


def _milvus_binaries(milvus: types.ModuleType) -> Path:
    """Unpack the bundled binaries once per version into the cache; return the bin dir."""
    version = getattr(milvus, "__version__", "unknown")
    base = _cache_root() / f"milvus-server-{version}"
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # serialise concurrent test processes
        try:
            # Idempotent: compares an md5 of each .lzma with the one stored next
            # to the unpacked file, so it only decompresses on first use.
            milvus._initialize_data_files(str(base))
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    bindir = base / "bin"
    if not os.access(bindir / "milvus", os.X_OK):
        raise ServerUnavailable(f"could not unpack the Milvus binary into {bindir}")
    return bindir


def _render_milvus_config(milvus: types.ModuleType, values: dict[str, Any]) -> str:
    """Fill the package's config template ({{ key(type): default }} placeholders)."""
    template = (Path(str(milvus.__file__)).parent / "data" / "config.yaml.template").read_text()

    def repl(m: re.Match) -> str:
        text = m.group(1).strip()
        key, _, default = text.partition(":")
        key = key.split("(")[0].strip()
        if key in values:
            val = values[key]
            return ("true" if val else "false") if isinstance(val, bool) else str(val)
        default = default.strip()
        if not default:
            raise ServerUnavailable(f"Milvus config template needs a value for {key!r}")
        return default

    text = _TEMPLATE_VAR.sub(repl, template)
    text = _set_yaml_values(text, values.get("config_overrides") or {})
    # Every component advertises 127.0.0.1 (template leaves "ip:" empty, which
    # would mean "first non-loopback address").
    text = re.sub(r"(?m)^(\s+)ip:[ \t]*(#.*)?$", rf"\g<1>ip: {LOOPBACK}", text)
    # Embedded etcd: its own config file so it listens on our loopback ports
    # instead of the fixed 2379/2380 (would clash with a second server).
    text = re.sub(
        r"(?m)^etcd:\n",
        f"etcd:\n  config:\n    path: {values['etcd_config_path']}\n",
        text,
        count=1,
    )
    return text


def _set_yaml_values(text: str, overrides: dict) -> str:
    """Replace the values of existing ``a.b.c: value`` keys in a simple YAML text."""
    if not overrides:
        return text
    out: list[str] = []
    path: list[str] = []
    for line in text.splitlines():
        m = re.match(r"^( *)([A-Za-z0-9_]+):(.*)$", line)
        if m and not line.lstrip().startswith("#"):
            level = len(m.group(1)) // 2
            path = [*path[:level], m.group(2)]
            dotted = ".".join(path)
            if dotted in overrides:
                val = overrides[dotted]
                val = ("true" if val else "false") if isinstance(val, bool) else val
                line = f"{m.group(1)}{m.group(2)}: {val}"
        out.append(line)
    return "\n".join(out) + "\n"


_NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _http_ok(url: str) -> bool:
    try:
        with _NO_PROXY_OPENER.open(url, timeout=2) as resp:  # never via a proxy
            return resp.status == 200 and b"OK" in resp.read()
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _milvus_client_ok(uri: str) -> str | None:
    """None when a pymilvus client can talk to the server, else the error text."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        return None  # nothing better to check with
    try:
        client = MilvusClient(uri=uri, timeout=5)
        try:
            client.list_collections()
        finally:
            with contextlib.suppress(Exception):
                client.close()
        return None
    except Exception as exc:  # any failure means "not ready yet"
        return f"{type(exc).__name__}: {exc}"


@contextlib.contextmanager
def start_milvus_server(
    *,
    timeout: float = 180.0,
    keep_on_failure: bool = False,
    extra_env: dict | None = None,
    config_overrides: dict | None = None,
) -> Iterator[str]:
    """Yield the URI (``http://127.0.0.1:PORT``) of a private Milvus 2.3 standalone server.

    Uses ``$LOOKUP_KNOWLEDGE_TEST_MILVUS_URI`` as-is when set.  Otherwise needs
    the PyPI package ``milvus``; runs ``milvus run standalone`` (embedded etcd,
    local storage, rocksmq) with a fresh temp data dir and free ports, waits
    for /healthz and a working pymilvus client, and on exit kills the
    server's whole process group and removes the data dir.  Raises
    :class:`ServerUnavailable` if the package is missing or the server is not
    ready within ``timeout`` s.

    ``config_overrides`` sets existing milvus.yaml keys by dotted path, e.g.
    ``{"common.gracefulTime": 1000}``; ``extra_env`` adds environment
    variables for the server process; ``keep_on_failure`` keeps the data dir
    (logs) when startup fails.
    """
    external = os.environ.get(MILVUS_URI_ENV)
    if external:
        yield external
        return

    milvus = _milvus_package()
    started = time.monotonic()
    deadline = started + timeout
    try:
        bindir = _milvus_binaries(milvus)
    except ServerUnavailable:
        raise
    except Exception as exc:
        raise ServerUnavailable(f"could not unpack Milvus server binaries: {exc!r}") from exc

    _remove_stale("milvus")
    tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}milvus-{os.getpid()}-"))
    alias = f"lk{os.getpid()}-{uuid.uuid4().hex[:8]}"
    proc: subprocess.Popen | None = None
    ok = False
    try:
        (tmp / "configs").mkdir()
        (tmp / "logs").mkdir()
        (tmp / "data").mkdir()
        ports = _free_ports(len(_MILVUS_PORT_KEYS) + 2)
        values: dict[str, Any] = dict(
            zip(_MILVUS_PORT_KEYS, ports[: len(_MILVUS_PORT_KEYS)], strict=True)
        )
        etcd_peer_port, metrics_port = ports[-2:]
        etcd_cfg = tmp / "configs" / "embedEtcd.yaml"
        etcd_cfg.write_text(
            f"listen-client-urls: http://{LOOPBACK}:{values['etcd_port']}\n"
            f"advertise-client-urls: http://{LOOPBACK}:{values['etcd_port']}\n"
            f"listen-peer-urls: http://{LOOPBACK}:{etcd_peer_port}\n"
            f"initial-advertise-peer-urls: http://{LOOPBACK}:{etcd_peer_port}\n"
            f"initial-cluster: default=http://{LOOPBACK}:{etcd_peer_port}\n"
            "quota-backend-bytes: 4294967296\n"
            "auto-compaction-mode: revision\n"
            "auto-compaction-retention: '1000'\n"
        )
        values.update(
            etcd_config_path=str(etcd_cfg),
            etcd_log_level="warn",
            etcd_log_path=str(tmp / "logs" / "etcd.log"),
            etcd_data_dir=str(tmp / "data" / "etcd.data"),
            local_storage_dir=str(tmp / "data"),
            rocksmq_data_dir=str(tmp / "data" / "rocksmq"),
            system_log_path=str(tmp / "logs"),
            config_overrides=config_overrides,
        )
        (tmp / "configs" / "milvus.yaml").write_text(_render_milvus_config(milvus, values))
        glog = Path(str(milvus.__file__)).parent / "data" / "glog.conf"
        if glog.exists():
            shutil.copy(glog, tmp / "configs" / "glog.conf")

        env = dict(os.environ)
        env.update(
            DEPLOY_MODE="STANDALONE",
            METRICS_PORT=str(metrics_port),
            MILVUSCONF=str(tmp / "configs"),
            LD_LIBRARY_PATH=os.pathsep.join(
                p for p in (str(bindir), os.environ.get("LD_LIBRARY_PATH", "")) if p
            ),
        )
        env.update(extra_env or {})
        stdout_log = tmp / "logs" / "milvus-stdout.log"
        stderr_log = tmp / "logs" / "milvus-stderr.log"
        with open(stdout_log, "wb") as out, open(stderr_log, "wb") as err:
            proc = subprocess.Popen(
                [str(bindir / "milvus"), "run", "standalone", "-alias", alias],
                cwd=tmp,  # Milvus 2.3 reads ./configs/milvus.yaml
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # own process group: killed as a whole
                preexec_fn=_die_with_parent,
            )

        uri = f"http://{LOOPBACK}:{values['proxy_port']}"
        health = f"http://{LOOPBACK}:{metrics_port}/healthz"
        last_err = "no answer on /healthz"
        while time.monotonic() < deadline and proc.poll() is None:
            if _http_ok(health):
                err_text = _milvus_client_ok(uri)
                if err_text is None:
                    ok = True
                    break
                last_err = err_text
            time.sleep(0.2)
        if not ok:
            state = (
                f"exited with code {proc.returncode}"
                if proc.poll() is not None
                else f"not ready within {timeout:.0f}s ({last_err})"
            )
            raise ServerUnavailable(
                f"Milvus server {state}; stderr tail:\n{_tail(stderr_log)}\n"
                f"stdout tail:\n{_tail(stdout_log)}"
            )
        yield uri
    finally:
        if proc is not None:
            _stop_process_group(proc, signal.SIGTERM, grace=3)
        # Milvus as root keeps a pid file in /run/milvus (else /tmp/milvus).
        for rundir in ("/run/milvus", "/tmp/milvus"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(rundir, f"standalone-{alias}.pid"))
        if ok or not keep_on_failure:
            shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# Milvus Lite's gRPC server (PyPI package "milvus-lite", 3.x: ``milvus-lite server``)


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((LOOPBACK, port)) == 0


def _milvus_lite_server_command() -> list[str]:
    try:
        import milvus_lite.cmdline  # noqa: F401 - the "server" subcommand lives there
    except ImportError as exc:
        raise ServerUnavailable(f"milvus-lite has no server command here: {exc}") from exc
    return [sys.executable, "-m", "milvus_lite.cmdline", "server"]


@contextlib.contextmanager
def start_milvus_lite_server(*, timeout: float = 60.0) -> Iterator[str]:
    """Yield the URI (``http://127.0.0.1:PORT``) of a private ``milvus-lite server``.

    Uses ``$LOOKUP_KNOWLEDGE_TEST_MILVUS_LITE_URI`` as-is when set. Otherwise runs
    ``milvus-lite server --data-dir D --host 127.0.0.1 --port P`` on a free port with a fresh
    temp data dir, waits for a working pymilvus client, and on exit kills its process group and
    removes the data dir. Raises :class:`ServerUnavailable` when milvus-lite has no server
    command or the server is not ready within ``timeout`` s.
    """
    external = os.environ.get(MILVUS_LITE_URI_ENV)
    if external:
        yield external
        return
    command = _milvus_lite_server_command()
    _remove_stale("milvus-lite")
    tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}milvus-lite-{os.getpid()}-"))
    proc: subprocess.Popen | None = None
    try:
        (port,) = _free_ports(1)
        log = tmp / "server.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [
                    *command,
                    "--data-dir",
                    str(tmp / "data"),
                    "--host",
                    LOOPBACK,
                    "--port",
                    str(port),
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # own process group: killed as a whole
                preexec_fn=_die_with_parent,
            )
        uri = f"http://{LOOPBACK}:{port}"
        deadline = time.monotonic() + timeout
        last_err: str | None = "no answer"
        while time.monotonic() < deadline and proc.poll() is None:
            # A client's connect blocks for its whole timeout before the port listens.
            last_err = _milvus_client_ok(uri) if _port_open(port) else "port not listening"
            if last_err is None:
                break
            time.sleep(0.1)
        if last_err is not None:
            state = (
                f"exited with code {proc.returncode}"
                if proc.poll() is not None
                else f"not ready within {timeout:.0f}s ({last_err})"
            )
            raise ServerUnavailable(f"milvus-lite server {state}; log tail:\n{_tail(log)}")
        yield uri
    finally:
        if proc is not None:
            _stop_process_group(proc, signal.SIGTERM, grace=3)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # manual check: python tests/servers.py [postgres|milvus|milvus-lite]
    which: Sequence[str] = sys.argv[1:] or ["postgres", "milvus", "milvus-lite"]
    for name in which:
        starter = {
            "postgres": start_postgres,
            "milvus": start_milvus_server,
            "milvus-lite": start_milvus_lite_server,
        }[name]
        t0 = time.monotonic()
        try:
            with starter() as url:
                print(f"{name}: {url} ready in {time.monotonic() - t0:.1f}s", flush=True)
        except ServerUnavailable as exc:
            print(f"{name}: unavailable: {exc.reason}")
        print(f"{name}: stopped after {time.monotonic() - t0:.1f}s total", flush=True)
