"""How a folder becomes chunks: categories kept outside the files, chunk size and overlap.

Example:
    >>> IngestSettings().chunk_overlap
    150
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["IngestSettings"]


class IngestSettings(BaseModel):
    """Reading, chunking and writing a knowledge folder."""

    model_config = ConfigDict(frozen=True)  # a group read from LookupSettings is a view

    categories_file: Path | None = Field(
        default=None,
        description="TSV/CSV with a 'path' column (relative to the ingested folder) and a "
        "category column: categories kept outside the files (a sidebar, a table of contents).",
    )
    categories_column: str | None = Field(
        default=None,
        description="The categories file's category column (default: 'category', else the "
        "second column).",
    )
    chunk_size: int = Field(
        default=1000,
        ge=200,
        description="Max chunk size (characters); a chunk also fits, with the header the dense "
        "model reads, the embedder's window counted with its tokenizer (a code block may "
        "exceed this size when it fits the window).",
    )
    chunk_overlap: int = Field(
        default=150,
        ge=0,
        description="Overlap between split chunks (characters, whole sentences only).",
    )
    table_row_chunks: bool = Field(
        default=False,
        description="Also index each row of a markdown table (of 3 rows or more, outside code) "
        "as a small chunk of its own: the table's header row and the row, under its section's "
        "breadcrumb, so a question about one option finds its row rather than a table chunk of "
        "ten rows. Part of the chunking signature: changing it re-chunks every document.",
    )
    insert_batch_size: int = Field(default=256, ge=1, description="Rows per Milvus insert.")
