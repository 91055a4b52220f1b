"""Every sentence with a general word is held by a test that checks the whole set it names.

``docs/general_words.py`` finds the sentences (pages, gallery text, README,
``explain()``'s texts); ``docs/general_words/*.json`` name the tests that check
each. A new or reworded sentence with "every", "only", "never", ... fails here
until its entry names a check (or the sentence is narrowed to what is checked).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from docs_modules import import_docs_module

general_words = import_docs_module("general_words")
ROOT = Path(__file__).resolve().parents[1]


def _explain_texts() -> list[tuple[str, str]]:
    """``explain()``'s words for every section, as users read them."""
    from inplace_recipes.error_reference import ERRORS

    texts = []
    for kind in ERRORS:
        parts = [getattr(kind, field, "") for field in ("why", "fix", "title")]
        texts.append((f"explain:{kind.slug}", "\n\n".join(p for p in parts if isinstance(p, str))))
    return texts


def _found() -> dict[tuple[str, str], object]:
    return {s.key: s for s in general_words.sentences(_explain_texts())}


def _test_exists(test_id: str) -> bool:
    """``tests/test_x.py::test_name`` (a parametrized id may follow in brackets)."""
    path, _, name = test_id.partition("::")
    name = name.split("[")[0]
    file = ROOT / path
    if not file.exists() or not name:
        return False
    tree = ast.parse(file.read_text())
    return any(
        isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
        for node in ast.walk(tree)
    )


def test_every_general_sentence_has_a_check() -> None:
    listed = general_words.inventory()
    missing = [f"{source}: {text}" for source, text in _found() if (source, text) not in listed]
    assert not missing, f"{len(missing)} sentences with a general word and no check:\n" + "\n".join(
        missing
    )


def test_no_entry_outlives_its_sentence() -> None:
    found = _found()
    stale = [
        f"{source}: {text}"
        for source, text in general_words.inventory()
        if (source, text) not in found
    ]
    assert not stale, "entries whose sentence is gone (reworded or removed):\n" + "\n".join(stale)


def test_every_check_named_exists() -> None:
    bad = [
        f"{source}: {test}"
        for (source, _), tests in general_words.inventory().items()
        for test in tests or ["(none)"]
        if not _test_exists(test)
    ]
    assert not bad, "checks that do not exist:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Every recipe is exact. Some are fast.", ["Every recipe is exact."]),
        ("It works.\n\n```python\nx = all(y)\n```\n", []),  # code is checked where it runs
        (
            "Not even `fill_` refuses. It is the slowest one.",
            ["Not even `fill_` refuses.", "It is the slowest one."],
        ),
        ("Nothing general here.", []),
        ("It returns ``None`` when `all()` is true.", []),  # inline code is not prose
    ],
)
def test_the_finder_finds_what_it_must(text: str, found: list[str]) -> None:
    assert [s.text for s in general_words.split(text, "x.md")] == found
