"""Sentences with a general word, and the checks that hold each one.

A sentence that says "every", "all", "only", "never", "always", "except",
"not even", "none", "fastest" or "slowest" speaks of a whole set: it is
true only if a check enumerates that set. :func:`sentences` finds such
sentences in the site's pages (``docs/**/*.md``, the text of every gallery
script in ``recipes/``), in the README and in ``explain()``'s texts;
``docs/general_words.json`` names, for each, the tests that check it over the
set it names (one file per part of the site, ``docs/general_words/*.json``).
``tests/test_general_words.py`` fails on a sentence with no entry, on an
entry whose sentence is gone, and on a test that does not exist.

>>> [s.text for s in split("Every recipe is exact. Some are fast.", "x.md")]
['Every recipe is exact.']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The inventory, one file per part of the site: ``[{"source", "sentence", "checked_by": [test ids]}]``.
INVENTORY = ROOT / "docs" / "general_words"

#: The general words (issue 29): a sentence with one speaks of a whole set.
GENERAL = re.compile(
    r"\b(every|all|only|never|always|except|not even|none|fastest|slowest)\b", re.IGNORECASE
)
_FENCE = re.compile(r"^(```|:::).*?^\1\s*$", re.MULTILINE | re.DOTALL)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
#: Inline code (``None``, ``all()``) is checked where it runs: its words are not prose's.
_INLINE_CODE = re.compile(r"(`+)[^`]+?\1")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(\"'])")


@dataclass(frozen=True)
class Sentence:
    """One sentence with a general word, and where it is."""

    source: str
    text: str

    @property
    def key(self) -> tuple[str, str]:
        return self.source, self.text


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def split(text: str, source: str) -> list[Sentence]:
    """The sentences of ``text`` (prose, code blocks removed) that hold a general word."""
    text = _HTML_COMMENT.sub(" ", _FENCE.sub(" ", text))
    found = []
    for block in re.split(r"\n\s*\n", text):
        if block.lstrip().startswith((">>>", "...", "|", "    ")):
            continue  # doctests, tables and indented code are checked where they run
        for sentence in _SENTENCE_END.split(_normal(block)):
            if GENERAL.search(_INLINE_CODE.sub(" ", sentence)):
                found.append(Sentence(source, sentence))
    return found


def _gallery_text(path: Path) -> str:
    """A gallery script's prose: its docstring and its comment cells (not code)."""
    source = path.read_text()
    doc = re.match(r'\s*"""(.*?)"""', source, re.DOTALL)
    lines, ignoring = [], False
    for line in source.splitlines():
        if "sphinx_gallery_start_ignore" in line:
            ignoring = True
        elif "sphinx_gallery_end_ignore" in line:
            ignoring = False
        elif line.startswith("# %%"):  # a cell marker: a new block, not prose
            lines.append("")
        elif not ignoring and (line == "#" or line.startswith("# ")):
            lines.append(line[2:])
        elif lines and lines[-1] != "":
            lines.append("")
    return (doc.group(1) if doc else "") + "\n\n" + "\n".join(lines)


def page_sources(root: Path = ROOT) -> Iterator[tuple[str, str]]:
    """``(source, text)`` for the README, every page and every gallery script."""
    yield "README.md", (root / "README.md").read_text()
    for path in sorted((root / "docs").rglob("*.md")):
        relative = path.relative_to(root)
        if relative.parts[1] in ("_build", "locale", "measurements", "_generated"):
            continue
        yield str(relative), path.read_text()
    for path in sorted((root / "recipes").rglob("*.py")):
        yield str(path.relative_to(root)), _gallery_text(path)


def sentences(extra: Iterable[tuple[str, str]] = ()) -> list[Sentence]:
    """Every sentence with a general word in the pages, the README and ``extra``."""
    found: list[Sentence] = []
    for source, text in [*page_sources(), *extra]:
        found.extend(split(text, source))
    return found


def inventory() -> dict[tuple[str, str], list[str]]:
    """``docs/general_words/*.json``: ``(source, sentence) -> test ids``."""
    found: dict[tuple[str, str], list[str]] = {}
    for path in sorted(INVENTORY.glob("*.json")):
        for e in json.loads(path.read_text()):
            found[e["source"], _normal(e["sentence"])] = list(e["checked_by"])
    return found
