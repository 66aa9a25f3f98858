"""docs/evaluation.md (the evaluation notes the README links to) holds the commands behind the dev,
ablation and tuning figures that moved out of the README's Reproduce block: each of its
``lookup-knowledge`` lines still parses with the real parser (they need ``../shared/data``, so
none runs), and every link between the README and the notes names a heading that exists."""

from __future__ import annotations

import re
import shlex

import pytest

from langchain_lookup_knowledge.cli import build_parser
from tests.conftest import REPO

NOTES = REPO / "docs" / "evaluation.md"
README = REPO / "README.md"


def notes_commands() -> list[list[str]]:
    text = NOTES.read_text(encoding="utf-8")
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
                words = words[1:]  # an environment assignment before the command
            if words[:1] == ["lookup-knowledge"]:
                argv = words[1:]
                for shell in (">", "|", "&&"):
                    argv = argv[: argv.index(shell)] if shell in argv else argv
                commands.append(argv)
    return commands


def test_the_notes_keep_the_commands_of_their_figures():
    assert len(notes_commands()) >= 3


@pytest.mark.parametrize("argv", notes_commands(), ids=lambda a: " ".join(a)[:60])
def test_every_notes_command_parses(argv):
    args = build_parser().parse_args(argv)
    assert callable(args.func)


def _anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)  # a `# comment` is no heading
    heads = re.findall(r"^#+ (.*)$", prose, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize(
    ("source", "target", "prefix"),
    [(README, NOTES, "docs/evaluation.md"), (NOTES, README, "../README.md"), (NOTES, NOTES, "")],
    ids=["readme->notes", "notes->readme", "notes->notes"],
)
def test_links_between_the_readme_and_the_notes_name_existing_headings(source, target, prefix):
    text = source.read_text(encoding="utf-8")
    anchors = _anchors(target.read_text(encoding="utf-8"))
    links = re.findall(rf"\]\({re.escape(prefix)}#([^)\s]+)\)", text)
    if source is README:
        assert links, "the README's compact sections link to the notes"
    missing = sorted(set(links) - anchors)
    assert not missing, f"{source.name} links to headings {target.name} does not have: {missing}"
