"""The error box and explain() give the same words, from one table, in both editions.

The box's own code (``docs/_static/error-box.js``) runs in node on the table
that ``docs/error_patterns.py`` exports, for every message of the real-message
data sets, every wording's literal messages, their cuts and retypings, and every
message on docs/errors.md;
its answer's lines must be ``explain(message).lines()``, for pastes cut and retyped too
(the box reads their words as ``inplace_recipes._error_words`` does). The Chinese edition's
table carries the catalogue's translation of every text.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from inplace_recipes import explain
from inplace_recipes._error_kinds import ERRORS
from test_explain import SHOWN_PASTES, messages, sections
from test_explain_words import _retypings

ROOT = Path(__file__).resolve().parents[1]
BOX = ROOT / "docs" / "_static" / "error-box.js"
DATA = [
    Path(__file__).parent / "data" / name
    for name in (
        "real_errors.json",
        "fresh_errors.json",
        "unseen_errors.json",
        "unseen2_errors.json",
        "unseen5_errors.json",
        "unseen6_errors.json",
        "unseen7_errors.json",
        "unseen8_errors.json",
    )
]
NODE = shutil.which("node")

_HARNESS = """
const box = require(process.argv[2]);
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = input.messages.map((m) => box.answerOf(input.table, m));
process.stdout.write(JSON.stringify(out));
"""


def _all_messages() -> list[str]:
    literals = [literal for kind in ERRORS for w in kind.wordings for literal in w.literals]
    found = list(literals)
    for section in sections().values():
        found += [m.removesuffix(" ...") for m in messages(section)]
    for path in DATA:
        if path.exists():
            found += [item["message"] for item in json.loads(path.read_text())["items"]]
    found += ["CUDA out of memory", "", "[rank0]: leaf variable has been moved\n[rank0]: into"]
    found += [paste for paste, _ in SHOWN_PASTES]  # a cause the paste shows comes first
    # pastes cut (every fifth character, so mid-word too) and retyped (a third of the ways
    # tests/test_explain_words.py retypes them), as the words read them
    for literal in literals:
        found += [literal[:n] for n in range(1, len(literal), 5)]
        found += _retypings(literal)[::3]
    return found


def box_answers(table: dict, texts: list[str], tmp_path: Path) -> list[dict | None]:
    """``answerOf(table, text)`` of error-box.js, in node, for each text."""
    if NODE is None:
        pytest.fail("node is missing: apt-get install -y nodejs")
    harness = tmp_path / "harness.js"
    harness.write_text(_HARNESS)
    run = subprocess.run(
        [NODE, str(harness), str(BOX)],
        input=json.dumps({"table": table, "messages": texts}),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    answers: list[dict | None] = json.loads(run.stdout)
    return answers


def test_the_box_says_what_explain_says(error_patterns: ModuleType, tmp_path: Path) -> None:
    texts = _all_messages()
    assert len(texts) > 3000
    undecided = 0
    for text, got in zip(texts, box_answers(error_patterns.table(), texts, tmp_path), strict=True):
        explained = explain(text)
        if explained.kind is None and not explained.alternatives:
            assert got is None, text
        else:
            undecided += explained.kind is None
            assert got is not None, text
            also = [kind.slug for kind in explained.alternatives]
            assert (got["slug"], got["lines"], got["alternatives"]) == (
                explained.slug,
                explained.lines(),
                also,
            ), text
    assert undecided  # the box says so too where explain() does not choose


def test_the_chinese_box_shows_the_catalogues_words(
    error_patterns: ModuleType, tmp_path: Path
) -> None:
    translate = error_patterns.catalogue_translation()
    english = error_patterns.table()
    chinese = error_patterns.table(translate)
    untranslated = [
        text
        for slug in [kind.slug for kind in ERRORS]
        for text in error_patterns.section_texts(slug)
        if translate(text) == text and not _is_code(text)
    ]
    untranslated += [t for t in error_patterns.shared_texts() if translate(t) == t]
    assert untranslated == []
    texts = [kind.wordings[0].example for kind in ERRORS]
    for en, zh in zip(
        box_answers(english, texts, tmp_path), box_answers(chinese, texts, tmp_path), strict=True
    ):
        assert en is not None
        assert zh is not None
        assert en["slug"] == zh["slug"]
        assert len(en["lines"]) == len(zh["lines"])
        assert en["lines"][0] != zh["lines"][0]  # the title, in Chinese


def _is_code(text: str) -> bool:
    """A fix: a line of code (and its comment), which the catalogue leaves as it is."""
    return any(text == cause.fix for kind in ERRORS for cause in kind.causes)


def test_every_placeholder_survives_translation(error_patterns: ModuleType) -> None:
    translate = error_patterns.catalogue_translation()
    import re

    for slug in [kind.slug for kind in ERRORS]:
        for text in error_patterns.section_texts(slug):
            names = sorted(re.findall(r"\{\w+\}", text))
            assert sorted(re.findall(r"\{\w+\}", translate(text))) == names, text
    for text in error_patterns.shared_texts():
        names = sorted(re.findall(r"\{\w+\}", text))
        assert sorted(re.findall(r"\{\w+\}", translate(text))) == names, text
