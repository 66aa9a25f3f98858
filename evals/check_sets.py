"""Check the question sets in ``evals/`` against the knowledge bases they are about (stdlib only).

Every ``rel`` of every line must name exactly one markdown document of its knowledge base, the way
``lookup-knowledge eval queries`` names documents: the file stem (name without folder and suffix,
``langchain_lookup_knowledge.evaluation.runner.stem``). A stem shared by two files of the same
knowledge base (``_index``, ``README``) is refused: a hit on either would count.

A line with an ``answer`` (the how-to sets) must find it in one of its ``rel`` documents,
whitespace and case aside, the way ``benchmarks/howto_shown.py`` looks for it in the tool message.

Out-of-scope lines (``rel: []``) carry ``kb``, ``near_miss`` and ``checked``; their ``absent`` terms
are grepped again here (case-insensitive, every markdown file of the knowledge base, frontmatter
included): a term that now occurs in a document fails the check.

The dev/test split is checked too: each ``<set>_dev.jsonl`` / ``<set>_test.jsonl`` pair must be
exactly what :func:`split` makes of their union, so nobody moves a question between them by hand.

No question of a tuning file (every file but the test and holdout files) is an exact or near
duplicate (:func:`near_duplicate`) of a question in another set file, test files included, or of an
earlier line of its own file. A near duplicate of a test question is reported without the test
question: test files are blind. Supplementary dev sets (``<set>_dev2.jsonl``, ``_dev3``...: dev
only, no test half) also need a ``style`` on every in-scope line.

Usage (from the repository root)::

    python evals/check_sets.py                      # check every set; data from ../shared/data
    python evals/check_sets.py --data /path/to/data
    python evals/check_sets.py --split SOURCE.jsonl --name tidb_zh  # tidb_zh_{dev,test}.jsonl

Exit status 0 when every check passes, 1 otherwise (each problem printed with file and line).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
from collections import defaultdict
from difflib import SequenceMatcher
from functools import cache, lru_cache
from pathlib import Path, PurePosixPath

EVALS = Path(__file__).resolve().parent

#: Knowledge base name -> folder under the data root (what ``lookup-knowledge ingest`` is given).
KNOWLEDGE_BASES = {
    "runbooks_en": "runbooks-en/content/runbooks",
    "runbooks_zh": "runbooks-zh/content.zh/runbooks",
    "tidb_zh": "tidb-docs-zh",
    "apisix_en": "apisix-docs/docs/en",
    "apisix_zh": "apisix-docs/docs/zh",
}

#: The seed of the dev/test shuffle. Changing it re-splits every set: never do that after anyone
#: has measured on a test split.
SPLIT_SEED = 20261201

MARKDOWN_SUFFIXES = (".md", ".markdown")

#: ``style`` values a line may carry (README "Format").
STYLES = ("symptom", "task", "concept")

#: Supplementary dev-only sets: ``<set>_dev2.jsonl``, ``<set>_dev3.jsonl``...
SUPPLEMENTARY = re.compile(r"_dev\d+\.jsonl$")

#: Files nobody reads while tuning: their questions are never printed.
BLIND_SUFFIXES = ("_test.jsonl", "_holdout.jsonl")

#: Two questions are near duplicates when their word sets (CJK as character pairs) overlap this much
#: (Jaccard) or their lower-cased texts are this similar (difflib ratio). The dev files of the first
#: sets, written independently, stay well below both (closest pairs: Jaccard 0.40, ratio 0.67).
NEAR_DUPLICATE_JACCARD = 0.5
NEAR_DUPLICATE_RATIO = 0.75


def kb_of_file(name: str) -> str | None:
    """The knowledge base a question file is about, from its name (``None``: per line ``kb``)."""
    if name.startswith("out_of_scope"):
        return None
    for kb in sorted(KNOWLEDGE_BASES, key=len, reverse=True):
        if name.startswith(kb + "_"):
            return kb
    raise ValueError(f"{name}: file name does not start with a knowledge base name or out_of_scope")


def is_supplementary(name: str) -> bool:
    """A dev-only set added after the split sets (``tidb_zh_dev2.jsonl``)."""
    return bool(SUPPLEMENTARY.search(name))


def is_blind(name: str) -> bool:
    """A test or holdout file (its questions are not printed)."""
    return name.endswith(BLIND_SUFFIXES)


@cache
def question_terms(question: str) -> frozenset[str]:
    """Lower-cased words and identifiers, and each pair of adjacent CJK characters."""
    text = question.lower()
    terms = set(re.findall(r"[a-z0-9_.\-]+", text))
    for run in re.findall(r"[\u4e00-\u9fff]+", text):
        terms.update(run[i : i + 2] for i in range(max(1, len(run) - 1)))
    return frozenset(terms)


@lru_cache(maxsize=64)
def _matcher_against(text: str) -> SequenceMatcher[str]:
    """A matcher with ``text`` as its second sequence (difflib indexes that one once)."""
    matcher: SequenceMatcher[str] = SequenceMatcher(None)
    matcher.set_seq2(text)
    return matcher


def near_duplicate(a: str, b: str) -> bool:
    """Whether two questions are the same question, or nearly (see NEAR_DUPLICATE_*).

    >>> near_duplicate("pod keeps crashing and restarting", "Pod keeps  crashing and restarting!")
    True
    >>> near_duplicate("pod keeps crashing and restarting", "etcd has no leader")
    False
    """
    text_a, text_b = " ".join(a.lower().split()), " ".join(b.lower().split())
    if text_a == text_b:
        return True
    terms_a, terms_b = question_terms(a), question_terms(b)
    union = terms_a | terms_b
    if union and len(terms_a & terms_b) / len(union) >= NEAR_DUPLICATE_JACCARD:
        return True
    shorter, total = min(len(text_a), len(text_b)), len(text_a) + len(text_b)
    if not total or 2 * shorter / total < NEAR_DUPLICATE_RATIO:  # ratio() cannot reach it
        return False
    matcher = _matcher_against(text_a)
    matcher.set_seq1(text_b)
    return matcher.quick_ratio() >= NEAR_DUPLICATE_RATIO and matcher.ratio() >= NEAR_DUPLICATE_RATIO


def check_near_duplicates(path: Path, others: dict[str, list[str]]) -> list[str]:
    """Lines of ``path`` that repeat or nearly repeat a question of another file (``others``: file
    name -> questions) or an earlier line of ``path``."""
    problems = []
    earlier: list[tuple[int, str]] = []
    for row in read_lines(path):
        where = f"{path.name}:{row['_line']}"
        q = str(row.get("q", ""))
        for name, questions in sorted(others.items()):
            if name == path.name:
                continue
            for other in questions:
                if near_duplicate(q, other):
                    shown = "not shown: test files are blind" if is_blind(name) else repr(other)
                    problems.append(f"{where}: near duplicate of a question in {name} ({shown})")
        for line, other in earlier:
            if near_duplicate(q, other):
                problems.append(f"{where}: near duplicate of line {line} ({other!r})")
        earlier.append((row["_line"], q))
    return problems


def stem(source: str) -> str:
    """File name without folder and suffix (as the evaluation names documents)."""
    return PurePosixPath(source).stem


def markdown_files(root: Path) -> list[Path]:
    """Markdown files under ``root`` as the loader walks them (hidden parts skipped)."""
    out = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix.lower() in MARKDOWN_SUFFIXES:
            out.append(path)
    return out


class KnowledgeBase:
    """Stems and lower-cased texts of one knowledge base folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.by_stem: dict[str, list[str]] = defaultdict(list)
        self.texts: dict[str, str] = {}
        for path in markdown_files(root):
            source = path.relative_to(root).as_posix()
            self.by_stem[stem(source)].append(source)
            self.texts[source] = path.read_text(encoding="utf-8", errors="replace").lower()

    def problem_with(self, rel: str) -> str | None:
        sources = self.by_stem.get(stem(rel), [])
        if not sources:
            return f"rel {rel!r} names no document of {self.root}"
        if len(sources) > 1:
            return f"rel {rel!r} is ambiguous in {self.root}: {sources}"
        if not body_of(self.texts[sources[0]]).strip():
            return f"rel {rel!r} ({sources[0]}) has no text after its frontmatter"
        return None

    def answers(self, answer: str, rel: list[str]) -> bool:
        """Whether ``answer`` occurs in one of the ``rel`` documents, whitespace and case aside
        (as ``benchmarks/howto_shown.py`` compares it with the tool message)."""
        needle = " ".join(answer.lower().split())
        sources = [s for r in rel for s in self.by_stem.get(stem(r), [])]
        return bool(needle) and any(needle in " ".join(self.texts[s].split()) for s in sources)

    def containing(self, term: str) -> list[str]:
        needle = term.lower()
        return [source for source, text in self.texts.items() if needle in text]


def body_of(text: str) -> str:
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            return text[end + 4 :]
    return text


def read_lines(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            row = json.loads(line)
            row["_line"] = number
            rows.append(row)
    return rows


def stratum(row: dict) -> str:
    """Rows are split within their stratum so dev and test see the same mix."""
    return f"{row.get('kb', '')}|{row.get('near_miss', '')}|{row.get('style', '')}"


def split(rows: list[dict], seed: int = SPLIT_SEED) -> tuple[list[dict], list[dict]]:
    """Deterministic dev/test split: within each stratum, questions sorted by the SHA-256 of their
    text, shuffled with ``random.Random(seed + stratum)``; the first ceil(n/2) go to dev.
    Each half keeps the source order of its questions."""
    groups: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        groups[stratum(row)].append(index)
    dev_idx: set[int] = set()
    for key, indices in sorted(groups.items()):
        ordered = sorted(indices, key=lambda i: hashlib.sha256(rows[i]["q"].encode()).hexdigest())
        random.Random(f"{seed}:{key}").shuffle(ordered)
        dev_idx.update(ordered[: (len(ordered) + 1) // 2])
    dev = [row for i, row in enumerate(rows) if i in dev_idx]
    test = [row for i, row in enumerate(rows) if i not in dev_idx]
    return dev, test


def dump(rows: list[dict]) -> str:
    clean = [{k: v for k, v in row.items() if not k.startswith("_")} for row in rows]
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in clean)


def check_file(path: Path, kbs: dict[str, KnowledgeBase]) -> list[str]:
    problems = []
    fixed_kb = kb_of_file(path.name)
    seen: set[str] = set()
    for row in read_lines(path):
        where = f"{path.name}:{row['_line']}"
        q = str(row.get("q", "")).strip()
        if not q:
            problems.append(f"{where}: empty q")
        if q.lower() in seen:
            problems.append(f"{where}: duplicate question {q!r}")
        seen.add(q.lower())
        style = row.get("style")
        if style is not None and style not in STYLES:
            problems.append(f"{where}: style {style!r} is not one of {', '.join(STYLES)}")
        rel = row.get("rel")
        if not isinstance(rel, list):
            problems.append(f"{where}: rel must be a list")
            continue
        kb_name = fixed_kb or row.get("kb")
        if kb_name not in kbs:
            problems.append(f"{where}: unknown kb {kb_name!r}")
            continue
        kb = kbs[kb_name]
        if fixed_kb is None:
            if rel:
                problems.append(f"{where}: an out-of-scope line must have rel []")
            if not isinstance(row.get("near_miss"), bool):
                problems.append(f"{where}: near_miss must be true or false")
            if not str(row.get("checked", "")).strip():
                problems.append(f"{where}: checked must say what was grepped")
            absent = row.get("absent")
            if not isinstance(absent, list) or not absent:
                problems.append(f"{where}: absent must list the grepped terms")
                continue
            for term in absent:
                hits = kb.containing(str(term))
                if hits:
                    problems.append(f"{where}: absent term {term!r} occurs in {hits[:3]}")
        else:
            if not rel:
                problems.append(f"{where}: an in-scope line needs at least one rel")
            if style is None and is_supplementary(path.name):
                problems.append(f"{where}: a line of a supplementary set needs a style")
            for r in rel:
                problem = kb.problem_with(str(r))
                if problem:
                    problems.append(f"{where}: {problem}")
            answer = row.get("answer")
            if answer is not None and not kb.answers(str(answer), [str(r) for r in rel]):
                problems.append(f"{where}: answer {answer!r} occurs in none of its rel documents")
    return problems


def check_split(dev_path: Path, test_path: Path) -> list[str]:
    dev, test = read_lines(dev_path), read_lines(test_path)
    dev_q = {row["q"] for row in dev}
    overlap = dev_q & {row["q"] for row in test}
    if overlap:
        return [f"{dev_path.name}/{test_path.name}: {len(overlap)} questions in both halves"]
    # The union, in a canonical order (dev and test are each in source order; the split keeps
    # that order, so interleaving is lost: re-split the union sorted by text and compare halves).
    union = sorted(dev + test, key=lambda row: row["q"])
    re_dev, _ = split(union)
    if {row["q"] for row in re_dev} != dev_q:
        return [f"{dev_path.name}/{test_path.name}: not the seeded split of their union"]
    return []


def data_root(explicit: str | None) -> Path:
    candidates: list[str | None] = [explicit] if explicit else []
    candidates += [os.environ.get("LOOKUP_EVAL_DATA")]
    candidates += [str(EVALS.parent.parent / "shared" / "data")]
    candidates += [str(EVALS.parent.parent.parent / "shared" / "data")]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise SystemExit("data folder not found: pass --data or set LOOKUP_EVAL_DATA")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="the shared data folder (default ../shared/data)")
    parser.add_argument("--split", metavar="SOURCE", help="split SOURCE into NAME_{dev,test}")
    parser.add_argument("--name", help="set name for --split (e.g. tidb_zh)")
    args = parser.parse_args(argv)

    if args.split:
        if not args.name:
            parser.error("--split needs --name")
        rows = read_lines(Path(args.split))
        # Canonical order: sorted by text, so the split does not depend on how the source was
        # ordered, and check_split can re-derive it from the union.
        rows.sort(key=lambda row: row["q"])
        dev, test = split(rows)
        (EVALS / f"{args.name}_dev.jsonl").write_text(dump(dev), encoding="utf-8")
        (EVALS / f"{args.name}_test.jsonl").write_text(dump(test), encoding="utf-8")
        print(f"{args.name}: {len(dev)} dev, {len(test)} test")

    root = data_root(args.data)
    kbs = {}
    for name, folder in KNOWLEDGE_BASES.items():
        if not (root / folder).is_dir():
            print(f"missing knowledge base {name}: {root / folder}", file=sys.stderr)
            return 1
        kbs[name] = KnowledgeBase(root / folder)

    problems: list[str] = []
    counts = []
    paths = sorted(EVALS.glob("*.jsonl"))
    questions = {path.name: [str(row.get("q", "")) for row in read_lines(path)] for path in paths}
    for path in paths:
        problems += check_file(path, kbs)
        if not is_blind(path.name):
            # Each pair of tuning files once (this file against those after it); blind files always.
            later = {n: q for n, q in questions.items() if is_blind(n) or n > path.name}
            problems += check_near_duplicates(path, later)
        counts.append(f"{path.name}: {len(read_lines(path))}")
        if path.name.endswith("_dev.jsonl"):
            test_path = path.with_name(path.name[: -len("_dev.jsonl")] + "_test.jsonl")
            if test_path.exists():
                problems += check_split(path, test_path)
    print("\n".join(counts))
    for problem in problems:
        print("PROBLEM", problem)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
