"""Walk a knowledge folder: every markdown file parsed, or skipped with a named reason.

The walk never leaves the ingested folder: a symbolic link whose target resolves outside it is
skipped by name (a committed link to ``~/.aws/credentials`` must not be served to an agent),
links inside it are followed only when asked, and link loops, FIFOs and other special files are
skipped by name, never opened.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from langchain_lookup_knowledge.core.display import safe_name
from langchain_lookup_knowledge.errors import ConfigurationError
from langchain_lookup_knowledge.knowledge.documents import (
    KnowledgeDocument,
    UnreadableFileError,
    parse_document,
)

MARKDOWN_SUFFIXES = (".md", ".markdown")
MAX_SOURCE_BYTES = 1000
"""Longest source path (UTF-8 bytes): the primary key ``<source>#<ordinal>`` is a VARCHAR(1024)."""


@dataclass(frozen=True)
class SkippedFile:
    """A file that was not indexed, and why (shown to the user by name)."""

    source: str
    reason: str


@dataclass
class FolderWalk:
    """What a walk found: the files to read, and what it skipped by name."""

    files: list[Path] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def display_name(rel: str) -> str:
    r"""``rel`` printable: bytes that are not UTF-8 (kept by the OS as surrogates) as ``\xNN``.

    Example:
        >>> display_name("caf\udce9.md")
        'caf\\xe9.md'
    """
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def check_source_prefix(prefix: str) -> str:
    """The namespace a source prefix names (slashes at either end dropped), or an error.

    A prefix is put before every source path of a folder, and the evidence key is
    ``<source>#<ordinal>``: a ``.`` or ``..`` segment (a source that reads as outside its
    namespace), an empty segment, a ``#``, a backslash or a control character is refused.

    Raises:
        ConfigurationError: the prefix and what is wrong with it.

    Example:
        >>> check_source_prefix("/team-a/runbooks/")
        'team-a/runbooks'
        >>> try:
        ...     check_source_prefix("../etc")
        ... except ConfigurationError as exc:
        ...     print(exc)
        source prefix '../etc': a '..' segment is not allowed; use a name like team-a/runbooks
    """
    namespace = prefix.strip("/")
    segments = namespace.split("/") if namespace else []
    problem = None
    if safe_name(namespace) != namespace:
        problem = "a control character (newline, escape sequence) is not allowed"
    elif "#" in namespace or "\\" in namespace:
        problem = "a '#' is not allowed" if "#" in namespace else "a backslash is not allowed"
    elif any(part in (".", "..") for part in segments):
        problem = f"a {'..' if '..' in segments else '.'!r} segment is not allowed"
    elif "" in segments:
        problem = "an empty segment (//) is not allowed"
    if problem is not None:
        msg = f"source prefix '{safe_name(prefix)}': {problem}; use a name like team-a/runbooks"
        raise ConfigurationError(msg)
    return namespace


def _is_markdown(name: str) -> bool:
    return name.lower().endswith(MARKDOWN_SUFFIXES)


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def walk_knowledge_folder(root: Path, *, follow_links_inside: bool = False) -> FolderWalk:
    """Markdown files under ``root`` in a stable order, and what was skipped (by name).

    Hidden files and folders are ignored. Symbolic links: a target outside ``root`` is never
    followed; one inside is followed only with ``follow_links_inside``; loops and broken
    links are skipped. FIFOs, sockets and devices named like markdown are skipped unopened.
    A name that is not UTF-8 is skipped (it cannot be a source name).

    Example:
        >>> walk = walk_knowledge_folder(Path("docs"))  # doctest: +SKIP
        >>> [s.reason for s in walk.skipped]  # doctest: +SKIP
        ['symlink to a target outside the knowledge folder (not followed)']
    """
    root = root.resolve()
    walk = FolderWalk()
    _walk(root, root, "", walk, follow_links_inside, {root})
    return walk


def _walk(
    root: Path,
    folder: Path,
    prefix: str,
    walk: FolderWalk,
    follow_links_inside: bool,
    ancestors: set[Path],
) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        walk.skipped.append(
            SkippedFile(display_name(prefix) or ".", f"cannot list folder: {exc.strerror or exc}")
        )
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        rel = f"{prefix}{entry.name}"
        path = Path(entry.path)
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            if _is_markdown(entry.name) or entry.is_dir(follow_symlinks=False):
                walk.skipped.append(SkippedFile(display_name(rel), "file name is not UTF-8"))
            continue
        try:
            if entry.is_symlink():
                _visit_link(root, path, rel, walk, follow_links_inside, ancestors)
            elif entry.is_dir(follow_symlinks=False):
                real = path.resolve()
                _walk(root, path, f"{rel}/", walk, follow_links_inside, ancestors | {real})
            elif _is_markdown(entry.name):
                mode = entry.stat(follow_symlinks=False).st_mode
                if stat.S_ISREG(mode):
                    walk.files.append(path)
                else:
                    walk.skipped.append(SkippedFile(rel, f"{_special_kind(mode)}, not read"))
        except OSError as exc:
            walk.skipped.append(SkippedFile(rel, f"cannot read: {exc.strerror or exc}"))


def _visit_link(
    root: Path,
    path: Path,
    rel: str,
    walk: FolderWalk,
    follow_links_inside: bool,
    ancestors: set[Path],
) -> None:
    try:
        target = path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a loop so
        walk.skipped.append(SkippedFile(rel, "symlink loop, not followed"))
        return
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            walk.skipped.append(SkippedFile(rel, "symlink loop, not followed"))
        elif _is_markdown(rel):
            walk.skipped.append(SkippedFile(rel, "broken symlink (its target does not exist)"))
        return
    is_dir = target.is_dir()
    if not is_dir and not _is_markdown(rel):
        return  # not something the walk would read anyway
    if not target.is_relative_to(root):
        walk.skipped.append(
            SkippedFile(rel, "symlink to a target outside the knowledge folder, not followed")
        )
        return
    if not follow_links_inside:
        walk.skipped.append(
            SkippedFile(
                rel,
                "symlink, not followed (links inside the folder are followed with "
                "follow_links=True / --follow-links)",
            )
        )
        return
    if is_dir:
        if target in ancestors:
            walk.skipped.append(SkippedFile(rel, "symlink loop, not followed"))
            return
        _walk(root, path, f"{rel}/", walk, follow_links_inside, ancestors | {target})
        return
    mode = target.stat().st_mode
    if stat.S_ISREG(mode):
        walk.files.append(path)
    else:
        walk.skipped.append(SkippedFile(rel, f"symlink to {_special_kind(mode)}, not read"))


def iter_markdown_files(root: Path) -> Iterator[Path]:
    """Markdown files under ``root`` in a stable order (see :func:`walk_knowledge_folder`)."""
    yield from walk_knowledge_folder(root).files


def load_document(
    path: Path,
    root: Path,
    max_bytes: int,
    categories: Mapping[str, str] | None = None,
    source_prefix: str = "",
) -> KnowledgeDocument | SkippedFile:
    """Parse one file, or say why it is skipped (too big, binary, not UTF-8, empty, bad YAML,
    a path too long for the primary key, ...). Nothing a file holds raises.

    ``categories``: a categories file's mapping (relative path -> category), if any.
    ``source_prefix``: put before the relative path in the source name (``team-a/x.md``).
    """
    rel = path.relative_to(root).as_posix()
    source = f"{source_prefix.strip('/')}/{rel}" if source_prefix.strip("/") else rel
    length = len(source.encode("utf-8", "surrogateescape"))
    if length > MAX_SOURCE_BYTES:
        return SkippedFile(
            display_name(source[:120]) + "...",
            f"path too long ({length} bytes > {MAX_SOURCE_BYTES}, the evidence key's limit)",
        )
    try:
        raw = _read_regular_file(path, max_bytes)
    except UnreadableFileError as exc:
        return SkippedFile(source, str(exc))
    except OSError as exc:
        return SkippedFile(source, f"cannot read file: {exc.strerror or exc}")
    try:
        return parse_document(raw, source, (categories or {}).get(rel))
    except UnreadableFileError as exc:
        return SkippedFile(source, str(exc))
    except (RecursionError, MemoryError) as exc:  # never let one file stop the run
        return SkippedFile(source, f"cannot parse ({type(exc).__name__})")


def _read_regular_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of ``path``; it must be a regular file (a FIFO is never waited on)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnreadableFileError(f"{_special_kind(info.st_mode)}, not read")
        if info.st_size > max_bytes:
            raise UnreadableFileError(f"file too large ({info.st_size} bytes > limit {max_bytes})")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(max_bytes + 1)
    finally:
        os.close(fd)
