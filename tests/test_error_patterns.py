"""The error box's patterns are explain()'s table, exported as the box reads them."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from inplace_recipes._error_kinds import Cause, Wording
from inplace_recipes.error_reference import ERRORS, ErrorKind

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_the_exported_patterns_are_explains_table(error_patterns: ModuleType) -> None:
    exported = [(row["slug"], row["pattern"]) for row in error_patterns.patterns()]
    assert exported == [(kind.slug, kind.pattern.replace("(?P<", "(?<")) for kind in ERRORS]


def test_the_written_script_defines_the_same_table(
    error_patterns: ModuleType, tmp_path: Path
) -> None:
    path = error_patterns.write(tmp_path / "_static")
    assert path.name == "error-patterns.js"
    written = error_patterns.read(path.read_text(encoding="utf-8"))
    assert written == error_patterns.table()
    assert [k["slug"] for k in written["kinds"]] == [kind.slug for kind in ERRORS]
    for row, kind in zip(written["kinds"], ERRORS, strict=True):
        assert row["wordings"] == [w.pattern.replace("(?P<", "(?<") for w in kind.wordings]
        assert [c["fix"] for c in row["causes"]] == [c.fix for c in kind.causes]
        assert row["why"] == kind.why


def test_named_groups_are_exported_as_javascript_writes_them(error_patterns: ModuleType) -> None:
    saved = error_patterns.table()["kinds"][[k.slug for k in ERRORS].index("saved-tensor-modified")]
    assert all("(?<now>" in d["pattern"] and "(?P<" not in d["pattern"] for d in saved["details"])


@pytest.mark.parametrize("pattern", [r"(?P=op)", r"(?i)leaf", r"leaf\Z", r"(?#note)x", r"a++"])
def test_python_only_syntax_is_refused_not_exported(
    error_patterns: ModuleType, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    kind = ErrorKind(
        "leaf", "t", "why", (Wording("2.13", pattern, "x"),), (Cause("c", "s", "f", "o"),)
    )
    monkeypatch.setattr(error_patterns, "ERRORS", (kind,))
    with pytest.raises(ValueError, match="Python-only syntax"):
        error_patterns.table()


def test_the_box_is_on_the_error_reference_and_the_landing_page() -> None:
    for page in ("errors.md", "index.md"):
        text = (DOCS / page).read_text()
        assert text.count(":::::{container} error-box\n") == 1, page
        for name in ("label", "submit", "none"):
            assert f":::{{container}} error-box-{name}\n" in text, (page, name)
    conf = (DOCS / "conf.py").read_text()
    assert '"error_patterns",' in conf
    assert (DOCS / "_static" / "error-box.js").exists()
