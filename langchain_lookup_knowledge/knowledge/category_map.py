"""Categories from a side file: a TSV or CSV table mapping each file's path to its category.

Some knowledge bases keep their sections outside the files (a docs site's sidebar, a table of
contents). ``lookup-knowledge ingest DIR --categories FILE`` reads such a table: a header row with
a ``path`` column (relative to DIR) and a category column (``category`` if there is one, else the
second column, or the one named by ``--category-column``). A file's own frontmatter category
still wins; files the table does not name (or names with an empty cell) keep their folder. A row
that cannot name a file of DIR (too few cells, no path, an absolute path or a ``..`` segment) is
ignored and listed with its line number and reason (:func:`read_category_map`).

Example:
    >>> import tempfile, pathlib
    >>> table = pathlib.Path(tempfile.mkdtemp()) / "toc.tsv"
    >>> _ = table.write_text("path\\ttoc_section\\nbackup.md\\tOperations\\nfaq.md\\t\\n")
    >>> load_category_map(table)
    {'backup.md': 'Operations'}
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from langchain_lookup_knowledge.errors import ConfigurationError

__all__ = ["CategoryMap", "IgnoredRow", "load_category_map", "read_category_map"]


@dataclass(frozen=True)
class IgnoredRow:
    """A row of a categories file that gives no file a category, and why."""

    line: int
    path: str
    reason: str


@dataclass
class CategoryMap:
    """``{relative posix path: category}`` and the rows that were ignored."""

    mapping: dict[str, str] = field(default_factory=dict)
    ignored: list[IgnoredRow] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # the line of each mapped path

    def unmatched(self, files: set[str]) -> list[IgnoredRow]:
        """The mapped rows whose path is none of ``files`` (relative posix paths)."""
        return [
            IgnoredRow(self.lines[path], path, "names no markdown file of the folder")
            for path in self.mapping
            if path not in files
        ]


PATH_COLUMN = "path"


def load_category_map(file: str | Path, column: str | None = None) -> dict[str, str]:
    """``{relative posix path: category}`` from a TSV/CSV table with a header row.

    Raises:
        ConfigurationError: as :func:`read_category_map`.
    """
    return read_category_map(file, column).mapping


def _path_problem(raw: str) -> str | None:
    if not raw:
        return "no path"
    if raw.startswith("/") or PurePosixPath(raw).is_absolute():
        return "an absolute path: paths are relative to the ingested folder"
    if ".." in PurePosixPath(raw).parts:
        return "a '..' segment leads outside the ingested folder"
    if PurePosixPath(raw.removeprefix("./")).as_posix() == ".":
        return "names the folder itself, not a file"
    return None


def read_category_map(file: str | Path, column: str | None = None) -> CategoryMap:
    """The categories of a TSV/CSV table with a header row, and the rows it ignored.

    Example:
        >>> import tempfile, pathlib
        >>> table = pathlib.Path(tempfile.mkdtemp()) / "toc.tsv"
        >>> _ = table.write_text("path\\tsection\\nok.md\\tOps\\n../x.md\\tOps\\nshort.md\\n")
        >>> [(row.line, row.path) for row in read_category_map(table).ignored]
        [(3, '../x.md'), (4, 'short.md')]

    Raises:
        ConfigurationError: the file is missing or unreadable, has no ``path`` column, or has
            no such category column (the message names the file and the columns it has).
    """
    path = Path(file).expanduser()
    if not path.is_file():
        raise ConfigurationError(f"categories file not found: {path}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"categories file {path}: cannot read it ({exc})") from None
    first_line = text.split("\n", 1)[0]
    delimiter = "\t" if "\t" in first_line or "," not in first_line else ","
    rows = list(csv.reader(text.splitlines(), delimiter=delimiter))
    if not rows:
        raise ConfigurationError(f"categories file {path} is empty: it needs a header row")
    header = [h.strip() for h in rows[0]]
    if PATH_COLUMN not in header:
        raise ConfigurationError(
            f"categories file {path} has no {PATH_COLUMN!r} column (columns: {', '.join(header)})"
        )
    if column is not None:
        if column not in header:
            raise ConfigurationError(
                f"categories file {path} has no column {column!r} (columns: {', '.join(header)})"
            )
        category_at = header.index(column)
    elif "category" in header:
        category_at = header.index("category")
    else:
        others = [i for i, name in enumerate(header) if name != PATH_COLUMN]
        if not others:
            raise ConfigurationError(f"categories file {path} has no category column")
        category_at = others[0]
    path_at = header.index(PATH_COLUMN)
    result = CategoryMap()
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue  # a blank line
        raw = row[path_at].strip() if len(row) > path_at else ""
        if len(row) <= max(path_at, category_at):
            need = max(path_at, category_at) + 1
            cells = f"{len(row)} cell{'' if len(row) == 1 else 's'}"
            reason = f"{cells}, the path and category columns need {need}"
            result.ignored.append(IgnoredRow(line, raw, reason))
            continue
        problem = _path_problem(raw)
        if problem is not None:
            result.ignored.append(IgnoredRow(line, raw, problem))
            continue
        source = PurePosixPath(raw.removeprefix("./")).as_posix()
        category = row[category_at].strip()
        if category:
            result.mapping[source] = category
            result.lines[source] = line
    return result
