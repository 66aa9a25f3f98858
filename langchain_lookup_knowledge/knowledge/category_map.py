"""Categories from a side file: a TSV or CSV table mapping each file's path to its category.

Some knowledge bases keep their sections outside the files (a docs site's sidebar, a table of
contents). ``lookup-knowledge ingest DIR --categories FILE`` reads such a table: a header row with
a ``path`` column (relative to DIR) and a category column (``category`` if there is one, else the
second column, or the one named by ``--category-column``). A file's own frontmatter category
still wins; files the table does not name (or names with an empty cell) keep their folder.

Example:
    >>> import tempfile, pathlib
    >>> table = pathlib.Path(tempfile.mkdtemp()) / "toc.tsv"
    >>> _ = table.write_text("path\\ttoc_section\\nbackup.md\\tOperations\\nfaq.md\\t\\n")
    >>> load_category_map(table)
    {'backup.md': 'Operations'}
"""

from __future__ import annotations

import csv
from pathlib import Path, PurePosixPath

from langchain_lookup_knowledge.errors import ConfigurationError

__all__ = ["load_category_map"]

PATH_COLUMN = "path"


def load_category_map(file: str | Path, column: str | None = None) -> dict[str, str]:
    """``{relative posix path: category}`` from a TSV/CSV table with a header row.

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
    mapping: dict[str, str] = {}
    for row in rows[1:]:
        if len(row) <= max(path_at, category_at):
            continue
        source = PurePosixPath(row[path_at].strip().removeprefix("./")).as_posix()
        category = row[category_at].strip()
        if source and source != "." and category:
            mapping[source] = category
    return mapping
