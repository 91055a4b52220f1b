"""The error box's patterns are explain()'s table, exported as the box reads them."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

from inplace_recipes.error_reference import ERRORS, ErrorKind

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def exporter() -> ModuleType:
    """docs/error_patterns.py, imported as conf.py imports it (docs/ on the path)."""
    sys.path.insert(0, str(DOCS))
    try:
        return importlib.import_module("error_patterns")
    finally:
        sys.path.remove(str(DOCS))


def test_the_exported_patterns_are_explains_table(exporter: ModuleType) -> None:
    exported = [(row["slug"], row["pattern"]) for row in exporter.patterns()]
    assert exported == [(kind.slug, kind.pattern) for kind in ERRORS]


def test_the_written_script_defines_the_same_patterns(exporter: ModuleType, tmp_path: Path) -> None:
    path = exporter.write(tmp_path / "_static")
    assert path.name == "error-patterns.js"
    written = exporter.read(path.read_text(encoding="utf-8"))
    assert written == exporter.patterns()
    assert written == [{"slug": kind.slug, "pattern": kind.pattern} for kind in ERRORS]


@pytest.mark.parametrize("pattern", [r"(?P<op>\w+)", r"(?i)leaf", r"leaf\Z", r"(?#note)x"])
def test_python_only_syntax_is_refused_not_exported(
    exporter: ModuleType, monkeypatch: pytest.MonkeyPatch, pattern: str
) -> None:
    monkeypatch.setattr(exporter, "ERRORS", (ErrorKind("leaf", "t", pattern, "why", "fix"),))
    with pytest.raises(ValueError, match="Python-only syntax"):
        exporter.patterns()


def test_the_box_is_on_the_error_reference_and_the_landing_page() -> None:
    for page in ("errors.md", "index.md"):
        text = (DOCS / page).read_text()
        assert text.count(":::::{container} error-box\n") == 1, page
        for name in ("label", "submit", "none"):
            assert f":::{{container}} error-box-{name}\n" in text, (page, name)
    conf = (DOCS / "conf.py").read_text()
    assert '"error_patterns",' in conf
    assert (DOCS / "_static" / "error-box.js").exists()
