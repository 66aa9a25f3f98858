"""Raw HTML in markdown read as the text it renders: tags dropped, table rows as markdown rows.

Markdown allows raw HTML, and documentation uses it: generated API references are tables of
``<tr><td>`` rows, MDX pages centre images with ``<div style={{textAlign: 'center'}}>``,
version marks are ``<span class="...">``. A reader sees the text; left in, the tags, their
attributes and their styling fill chunks, the embedder's window and the agent's message with
characters that say nothing. :func:`html_as_text` keeps the text and drops the markup:

- a tag is dropped, its attributes and styling with it (JSX ``{{...}}`` values included);
  ``<script>``, ``<style>`` and ``<svg>`` are dropped with their content;
- a ``<table>`` becomes a markdown table: one row a line, cells separated by `` | ``, a
  delimiter row after the first (a table inside a cell is read inline: rows separated by
  ``;``, cells by ``,``);
- block tags (``<p>``, ``<div>``, ``<br>``, ``<li>``, ...) break lines, ``<li>`` starts a
  ``- `` item and ``<h2>Title</h2>`` is a ``## Title`` heading; inside a markdown table row
  they are read as spaces and ``; `` so the row stays one line;
- character references (``&lt;``, ``&#124;``, ``&nbsp;``) are decoded.

Code is code: fenced blocks and inline code spans are left as written. Only markup is read
as markup: a placeholder (``<cluster-name>``, ``<CLUSTER>``, ``<table name>``), an autolink
(``<https://...>``) or an element name without attributes that never closes stays as text,
and so does a tag that does not end within :data:`MAX_TAG_CHARS` characters or a paragraph.
Every step is linear in the text (a 2 MB generated table is read in one pass).

Example:
    >>> print(html_as_text(
    ...     '<table><tr><th>Name</th><th>Type</th></tr>\\n'
    ...     '<tr><td style="width: 64px">ttl</td><td>int &amp; more</td></tr></table>\\n'
    ...     'Set <code>ttl</code> in `<td>`.<br/>Done.'))
    | Name | Type |
    | --- | --- |
    | ttl | int & more |
    <BLANKLINE>
    Set ttl in `<td>`.
    Done.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right

from langchain_lookup_knowledge.knowledge.markdown_text import fenced_lines

__all__ = ["MAX_SPAN", "MAX_TAG_CHARS", "html_as_text"]

MAX_TAG_CHARS = 4000
"""Longest tag read as one (a longer ``<...`` run, an unclosed quote in it, is text)."""


def _names(words: str) -> frozenset[str]:
    return frozenset(words.split())


MAX_SPAN = 64
"""Most columns one cell is read to span (a hostile ``colspan`` writes no more empty cells)."""

_HTML_ELEMENTS = _names(
    """a abbr acronym address area article aside audio b base bdi bdo big blockquote body br
    button canvas caption center cite code col colgroup data datalist dd del details dfn
    dialog dir div dl dt em embed fieldset figcaption figure font footer form frame frameset
    h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins kbd label legend li
    link main map mark marquee menu meta meter nav nobr noscript object ol optgroup option
    output p param picture pre progress q rp rt ruby s samp script search section select
    slot small source span strike strong style sub summary sup svg table tbody td template
    textarea tfoot th thead time title tr track tt u ul var video wbr"""
)
_BARE = _names(
    """blockquote br center dd details div dl dt em hr kbd li nobr ol p span strong sub summary
    sup tbody td tfoot th thead tr ul wbr"""
)
"""Elements read as markup even bare and unclosed (``<br>``, a ``<td>`` without ``</td>``)."""
_DROP_CONTENT = ("script", "style", "svg")
_LINE_BREAKS = _names(
    """address article aside blockquote body br caption center dd details dialog dir div dl dt
    fieldset figcaption figure footer form frameset head header hgroup hr html legend main
    menu nav ol p pre section summary table tbody tfoot thead tr ul"""
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_CELLS = frozenset(("td", "th"))

_NAME = r"[A-Za-z][A-Za-z0-9]*(?:[-:.][A-Za-z0-9]+)*"
_BRACES = r"\{[^{}]*+(?:\{[^{}]*+\}[^{}]*+)*+\}"
# Possessive and atomic throughout, each branch starting with its own character: a run that is
# no tag fails without backtracking, and stops at the first "<" outside quotes and braces.
_TAG = re.compile(
    rf"""<(?:/(?P<end>{_NAME})\s*+>"""
    rf"""|(?P<start>{_NAME})(?=[\s/>])(?P<attrs>(?:[^<>"'{{}}/]++|"[^"]*+"|'[^']*+'|{_BRACES}"""
    rf"""|/(?!>))*+)(?P<close>/?)>)"""
)
_ASSIGNED = re.compile(r"""[\w:.-]\s*=|\{""")
_LABEL = re.compile(r"""\blabel\s*=\s*(?:"([^"]+)"|'([^']+)')""")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_SPECIAL = re.compile(r"[<&`]")
_BACKTICKS = re.compile(r"`+")
_BLANK_LINE = re.compile(r"\n[ \t]*(?:\r?\n)")
_CLOSING = re.compile(rf"</({_NAME})\s*>")
_WHITESPACE = re.compile(r"\s+")
_PIPE = re.compile(r"(?<!\\)\|")
_MARK = "\x00"
"""Written where a tag was dropped outside a table: a line left with nothing else is removed."""
_MARK_BETWEEN_WORDS = re.compile("(?<=\\S)[ \t]+\x00+[ \t]+(?=\\S)")


def _span(attrs: str, name: str, limit: int) -> int:
    """A cell's ``rowspan`` or ``colspan`` (1 when absent or not a number; at most ``limit``)."""
    found = re.search(rf"""\b{name}\s*=\s*["']?\s*(\d{{1,6}})""", attrs, re.IGNORECASE)
    return min(max(int(found.group(1)), 1), limit) if found else 1


def _is_component(name: str) -> bool:
    """A JSX component's name (``ResourceCard``): capitalised, with a lower-case letter."""
    return name[0].isupper() and any(c.islower() for c in name) and "-" not in name


class _Reader:
    """One pass over one run of markdown prose (no fenced code), writing its text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.out: list[str] = []
        self.tail = "\n"  # the last character written (a new block starts at a line start)
        self.tail_visible = ""  # the last character written that is not a space
        self.pending = ""  # inline separator or block prefix waiting for the next text
        self.pending_block = False
        self.heading: list[str] | None = None
        self.heading_level = 0
        self.table_depth = 0
        self.row: list[tuple[str, int, int]] | None = None  # cells: text, rowspan, colspan
        self.cell_spans = (1, 1)
        self.cell_pending = ""  # a separator before the cell's next text (a list, a table)
        self.cell_filled = False  # the open cell holds text
        self.spans: dict[int, tuple[str, int]] = {}  # column -> text, rows it still covers
        self.cell: list[str] | None = None
        self.rows_written = 0
        self.line_start = 0
        self.scanned = 0
        self.row_line = False
        self.line_known = False
        self.tail2 = "\n\n"
        self.line_blank = True  # nothing but spaces written since the last line end
        closings: dict[str, list[int]] = {}
        for match in _CLOSING.finditer(text):
            closings.setdefault(match.group(1).lower(), []).append(match.start())
        self.closings = closings
        runs = [(m.start(), m.end() - m.start()) for m in _BACKTICKS.finditer(text)]
        self.run_index = {start: index for index, (start, _) in enumerate(runs)}
        self.runs = runs
        closer: list[int | None] = [None] * len(runs)
        last: dict[int, int] = {}
        for index in range(len(runs) - 1, -1, -1):
            closer[index] = last.get(runs[index][1])
            last[runs[index][1]] = index
        self.closer = closer
        self.blank_lines = [m.start() for m in _BLANK_LINE.finditer(text)]

    # -- where we are -------------------------------------------------------------------

    def _advance(self, pos: int) -> None:
        """Track the line ``pos`` is on (and whether it is a markdown table row)."""
        if pos < self.scanned:
            return
        newline = self.text.rfind("\n", self.scanned, pos)
        self.scanned = pos
        if newline < 0 and self.line_known:
            return
        if newline >= 0:
            self.line_start = newline + 1
        self.line_known = True
        line = self.text[self.line_start : self.line_start + 64].lstrip(" \t>")
        self.row_line = line.startswith("|")

    def _closes_after(self, name: str, pos: int) -> int | None:
        """Where the first ``</name>`` after ``pos`` starts, if any."""
        found = self.closings.get(name)
        if not found:
            return None
        index = bisect_right(found, pos)
        return found[index] if index < len(found) else None

    @property
    def inline(self) -> bool:
        """Inside a markdown table row: nothing may break the line."""
        return self.row_line and self.table_depth == 0

    # -- writing ------------------------------------------------------------------------

    def _emit(self, piece: str) -> None:
        if not piece:
            return
        self.out.append(piece)
        visible = piece.replace(_MARK, "")
        if visible:
            line_end = visible.rfind("\n")
            if line_end >= 0:
                self.line_blank = not visible[line_end + 1 :].strip()
            elif visible.strip():
                self.line_blank = False
            self.tail = visible[-1]
            self.tail2 = (self.tail2 + visible)[-2:]
            stripped = visible.rstrip(" \t")
            if stripped:
                self.tail_visible = stripped[-1]

    def _newline(self) -> None:
        """Go to a line start (a line holding only indentation is one)."""
        if not self.line_blank:
            self._emit("\n")

    def write(self, piece: str) -> None:
        """Text of the document, to its cell, heading or line."""
        if not piece:
            return
        if self.heading is not None:
            self.heading.append(piece)
        elif self.table_depth:
            self._table_text(piece)
        elif self.pending_block:
            self._block_text(piece)
        elif self.pending:
            self._inline_text(piece)
        else:
            self._emit(piece)

    def _table_text(self, piece: str) -> None:
        if self.cell is not None:
            if piece.strip():
                if self.cell_pending and self.cell_filled:
                    self.cell.append(self.cell_pending)
                self.cell_pending, self.cell_filled = "", True
            self.cell.append(piece)
        elif self.row is not None:
            if piece.strip():
                self.cell, self.cell_filled = [piece], True
        elif piece.strip():  # a caption, text between rows: a line of its own
            self._newline()
            self._emit(_WHITESPACE.sub(" ", piece).strip() + "\n")

    def _block_text(self, piece: str) -> None:
        body = piece.lstrip(" \t")
        while body.startswith(("\n", "\r")):  # the source breaks the line itself
            newline = body.index("\n") + 1
            self._emit(body[:newline])
            piece = body[newline:]
            body = piece.lstrip(" \t")
        if not body:
            if self.tail == "\n":
                self._emit(piece)  # the indentation of the next line
            return
        indent = piece[: len(piece) - len(body)] if self.tail == "\n" else ""
        self._newline()
        self._emit(indent + self.pending + body)
        self.pending, self.pending_block = "", False

    def _inline_text(self, piece: str) -> None:
        if not piece.strip():
            return
        body = piece.lstrip()
        if piece.lstrip(" \t").startswith(("\n", "\r")) or body.startswith("|"):
            self._emit(piece)  # the row or the cell ends here: no separator
        elif self.tail_visible in ("|", ""):
            self._emit(body if self.tail in " \t" else " " + body)
        else:
            self._trim_tail()
            self._emit(self.pending + body)
        self.pending = ""

    def _trim_tail(self) -> None:
        """Drop the spaces at the end of what is written (a separator goes there)."""
        while self.out:
            last = self.out[-1].replace(_MARK, "").rstrip(" \t")
            if last:
                self.out[-1] = last
                self.tail = last[-1]
                return
            self.out.pop()
        self.tail = "\n"

    def block_break(self, prefix: str = "") -> None:
        """A line break before the next text (with ``prefix``: a list item's ``- ``)."""
        if self.heading is not None:
            self.heading.append(" ")
        elif self.table_depth:
            if self.cell is not None:
                self.cell.append(" ")
                if prefix:
                    self.cell_pending = "; "
        elif self.inline:
            self.pending = "; " if prefix else (self.pending or " ")
        else:
            self.pending_block = True
            self.pending = prefix or self.pending

    # -- tables -------------------------------------------------------------------------

    def _end_cell(self) -> None:
        self.cell_pending = ""
        if self.cell is not None and self.row is not None:
            text = _PIPE.sub(r"\\|", _WHITESPACE.sub(" ", "".join(self.cell)).strip())
            self.row.append((text, *self.cell_spans))
        self.cell = None

    def _row_cells(self, row: list[tuple[str, int, int]]) -> list[str]:
        """The cells of a row, with those of the rows above that span it (``rowspan``) in
        their columns and an empty cell for each further column a cell spans."""
        cells: list[str] = []
        queue = iter(row)
        left = len(row)
        last_spanned = max(self.spans, default=-1)
        while left or len(cells) <= last_spanned:
            column = len(cells)
            spanned = self.spans.pop(column, None)
            if spanned is not None:
                cells.append(spanned[0])
                if spanned[1] > 1:
                    self.spans[column] = (spanned[0], spanned[1] - 1)
                continue
            if not left:
                cells.append("")
                continue
            text, rowspan, colspan = next(queue)
            left -= 1
            if rowspan > 1:
                self.spans[column] = (text, rowspan - 1)
            cells.extend([text] + [""] * (colspan - 1))
        return cells

    def _end_row(self) -> None:
        self._end_cell()
        row, self.row = self.row, None
        if not row:
            return
        cells = self._row_cells(row)
        if self.line_blank:
            self._trim_tail()  # a row is not indented
        self._newline()
        self._emit("| " + " | ".join(cell or " " for cell in cells) + " |\n")
        if self.rows_written == 0:
            self._emit("| " + " | ".join("---" for _ in cells) + " |\n")
        self.rows_written += 1

    def _table_tag(self, name: str, is_end: bool, attrs: str) -> None:
        """A table's own tag, inside a table read as one."""
        inner = self.table_depth > 1
        if name == "table":
            if is_end:
                self.table_depth -= 1
                if self.table_depth == 0:
                    self._end_row()
                    self.spans.clear()
                    self._emit(_MARK)
                    self.pending_block = True
            else:
                self.table_depth += 1
                self.cell_pending = "; "
            return
        if inner:  # read inline: rows separated by "; ", cells by ", "
            if not is_end:
                self.cell_pending = "; " if name == "tr" or self.cell_pending == "; " else ", "
            return
        if name == "tr":
            self._end_row()
            if not is_end:
                self.row = []
        elif name in _CELLS:
            self._end_cell()
            if not is_end:
                if self.row is None:
                    self.row = []
                self.cell, self.cell_filled = [], False
                self.cell_spans = (
                    _span(attrs, "rowspan", 100_000),
                    _span(attrs, "colspan", MAX_SPAN),
                )

    def _start_table(self) -> None:
        if self.tail2 != "\n\n" and not (self.line_blank and self.tail2.startswith("\n")):
            self._newline()
            self._emit("\n")
        self.table_depth = 1
        self.rows_written = 0

    # -- tags ---------------------------------------------------------------------------

    def tag(self, match: re.Match[str]) -> int:
        """Read the tag ``match`` found; where the reading goes on (-1: it is text)."""
        end_name = match.group("end")
        name = end_name or match.group("start")
        lower = name.lower()
        pos = match.start()
        if lower not in _HTML_ELEMENTS and not _is_component(name):
            return -1
        self._advance(pos)
        if end_name is None:
            attrs = match.group("attrs")
            markup = (
                bool(match.group("close"))
                or _ASSIGNED.search(attrs) is not None
                or (not attrs.strip() and lower in _BARE)
                or self._closes_after(lower, pos) is not None
            )
            if not markup:
                return -1
            if lower in _DROP_CONTENT and not match.group("close"):
                closing = self._closes_after(lower, match.end() - 1)
                if closing is not None:
                    self._dropped()
                    return self.text.index(">", closing) + 1
        attrs = match.group("attrs") or ""
        self._element(lower, end_name is not None, pos, _is_component(name), attrs)
        return match.end()

    def _dropped(self) -> None:
        if not self.table_depth and not self.inline and self.heading is None:
            self._emit(_MARK)

    def _element(self, name: str, is_end: bool, pos: int, component: bool, attrs: str) -> None:
        if self.table_depth and (name in ("table", "tr") or name in _CELLS):
            self._table_tag(name, is_end, attrs)
            return
        if (
            name == "table"
            and not is_end
            and not self.inline
            and self.heading is None
            and self._closes_after("table", pos) is not None
        ):
            self._dropped()
            self._start_table()
            return
        self._dropped()
        label = _LABEL.search(attrs) if (component or name == "div") and not is_end else None
        if label is not None:  # a tab of TiDB's <SimpleTab>: <div label="AWS KMS">
            self.block_break()
            self.write(f"**{label.group(1) or label.group(2)}**")
            self.block_break()
        elif name in _HEADINGS and not self.inline and not self.table_depth:
            self._heading(name, is_end, pos)
        elif name == "li" and not is_end:
            self.block_break("- ")
        elif component or name in _LINE_BREAKS or name in _CELLS or name == "li":
            self.block_break()

    def _heading(self, name: str, is_end: bool, pos: int) -> None:
        if not is_end and self.heading is None and self._closes_after(name, pos) is not None:
            self.heading, self.heading_level = [], _HEADINGS[name]
            return
        if is_end and self.heading is not None:
            words = _WHITESPACE.sub(" ", "".join(self.heading)).strip()
            self.heading = None
            if words:
                self.pending_block, self.pending = True, ""
                self.write("#" * self.heading_level + " " + words)
        self.block_break()

    # -- the pass -----------------------------------------------------------------------

    def code_span(self, pos: int) -> int:
        """Where the code span opening at ``pos`` ends (-1: these backticks are text)."""
        index = self.run_index[pos]
        closer = self.closer[index]
        if closer is None:
            return -1
        close_start, length = self.runs[closer]
        blank = bisect_right(self.blank_lines, pos - 1)
        if blank < len(self.blank_lines) and self.blank_lines[blank] < close_start:
            return -1
        return close_start + length

    def entity(self, match: re.Match[str]) -> str:
        decoded = html.unescape(match.group())
        if decoded == "\xa0":
            return " "
        if decoded == "|":
            self._advance(match.start())
            return "\\|" if self.row_line or self.table_depth else "|"
        return decoded

    def read(self) -> str:
        text = self.text
        pos = 0
        while True:
            found = _SPECIAL.search(text, pos)
            if found is None:
                self.write(text[pos:])
                break
            at = found.start()
            self.write(text[pos:at])
            char = text[at]
            after = -1
            if char == "`":
                run_end = _BACKTICKS.match(text, at).end()  # type: ignore[union-attr]
                after = self.code_span(at)
                self.write(text[at : after if after >= 0 else run_end])
                pos = after if after >= 0 else run_end
                continue
            if at and text[at - 1] == "\\":
                self.write(char)
                pos = at + 1
                continue
            if char == "&":
                entity = _ENTITY.match(text, at)
                if entity is not None:
                    self.write(self.entity(entity))
                    pos = entity.end()
                    continue
            else:
                tag = _TAG.match(text, at)
                if (
                    tag is not None
                    and tag.end() - at <= MAX_TAG_CHARS
                    and _BLANK_LINE.search(text, at, tag.end()) is None
                ):
                    after = self.tag(tag)
            if after < 0:
                self.write(char)
                pos = at + 1
            else:
                pos = after
        if self.heading is not None:
            words, self.heading = "".join(self.heading), None
            self.write(words)
        if self.table_depth:
            self._end_row()
            self.table_depth = 0
        return _without_marks("".join(self.out))


def _without_marks(text: str) -> str:
    """``text`` without the marks of dropped tags: a line left blank by them is removed when a
    blank line is next to it, trailing spaces of a marked line are dropped."""
    if _MARK not in text:
        return text
    lines = text.split("\n")
    kept: list[str] = []
    previous_blank = True
    removed_last = False
    for line in lines:
        if _MARK in line:
            line = _MARK_BETWEEN_WORDS.sub(" ", line).replace(_MARK, "").rstrip(" \t")
            if not line.strip():
                if not previous_blank:
                    kept.append("")
                previous_blank, removed_last = True, True
                continue
        elif not line.strip() and previous_blank and removed_last:
            continue
        kept.append(line)
        previous_blank, removed_last = not line.strip(), False
    if text.endswith("\n") and kept and kept[-1] != "":
        kept.append("")
    return "\n".join(kept)


def html_as_text(body: str) -> str:
    """``body`` with its raw HTML read as text (see the module docstring).

    Example:
        >>> html_as_text('<div align="center">Kept</div>\\n```\\n<div>code</div>\\n```\\n')
        'Kept\\n```\\n<div>code</div>\\n```\\n'
    """
    if ("<" not in body and "&" not in body) or _MARK in body:
        return body
    out: list[str] = []
    prose: list[str] = []
    for line, code in fenced_lines(body.splitlines(keepends=True)):
        if code:
            if prose:
                out.append(_prose_as_text("".join(prose)))
                prose.clear()
            out.append(line)
        else:
            prose.append(line)
    if prose:
        out.append(_prose_as_text("".join(prose)))
    return "".join(out)


def _prose_as_text(text: str) -> str:
    if "<" not in text and "&" not in text:
        return text
    read = _Reader(text).read()
    return read + "\n" if text.endswith("\n") and not read.endswith("\n") else read
