"""The Chinese edition: its checker finds every kind of gap, and the catalogues have none.

``nox -s docs`` runs the full check against the messages the English site
has now (``docs/translations.py check --templates``); these tests hold the
checker to its word on small catalogues, and the committed catalogues to the
part of the check that needs no Sphinx build: every message translated, none
fuzzy, the glossary kept.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("translations", ROOT / "docs" / "translations.py")
assert _spec is not None
assert _spec.loader is not None
translations = sys.modules["translations"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(translations)

TERMS = [translations.Term("leaf tensor", "叶子张量"), translations.Term("gradient", "梯度")]


def _write(path: Path, messages: dict[str, str], fuzzy: frozenset[str] = frozenset()) -> None:
    catalog = Catalog(locale="zh_CN" if path.suffix == ".po" else None)
    for msgid, msgstr in messages.items():
        catalog.add(msgid, msgstr, flags=("fuzzy",) if msgid in fuzzy else ())
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0)


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    """A one-page site whose catalogue is complete."""
    pot, po = tmp_path / "pot", tmp_path / "po"
    english = {
        "A leaf tensor has no grad_fn.": "",
        "`x[i] = v`": "",
        "8.77\N{MULTIPLICATION SIGN}": "",
    }
    _write(pot / "concepts" / "leaf.pot", english)
    _write(po / "concepts" / "leaf.po", {"A leaf tensor has no grad_fn.": "叶子张量没有 grad_fn。"})
    return pot, po


def test_a_complete_catalogue_passes(site: tuple[Path, Path]) -> None:
    pot, po = site
    assert translations.catalogue_problems(po, pot, TERMS) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"A leaf tensor has no grad_fn.": ""}, "untranslated"),
        ({"A leaf tensor has no grad_fn.": "A leaf tensor has no grad_fn."}, "untranslated"),
        ({"A leaf tensor has no grad_fn.": "叶张量没有 grad_fn。"}, "glossary"),
        ({"A page that is gone.": "已删除的页面。"}, "no longer on the page"),
    ],
)
def test_each_gap_is_named(site: tuple[Path, Path], change: dict[str, str], problem: str) -> None:
    pot, po = site
    messages = {"A leaf tensor has no grad_fn.": "叶子张量没有 grad_fn。", **change}
    _write(po / "concepts" / "leaf.po", messages)
    found = translations.catalogue_problems(po, pot, TERMS)
    assert any(problem in line for line in found), found


def test_fuzzy_and_missing_are_named(site: tuple[Path, Path]) -> None:
    pot, po = site
    _write(pot / "concepts" / "leaf.pot", {"A leaf tensor has no grad_fn.": "", "New text.": ""})
    _write(
        po / "concepts" / "leaf.po",
        {"A leaf tensor has no grad_fn.": "叶子张量没有 grad_fn。"},
        fuzzy=frozenset({"A leaf tensor has no grad_fn."}),
    )
    found = translations.catalogue_problems(po, pot, TERMS)
    assert any("fuzzy" in line for line in found), found
    assert any("missing: 'New text.'" in line for line in found), found


def test_a_page_without_catalogue_is_named(site: tuple[Path, Path]) -> None:
    pot, po = site
    _write(pot / "errors.pot", {"Every error, explained.": ""})
    assert "errors: no catalogue errors.po" in translations.catalogue_problems(po, pot, TERMS)


def test_the_checker_exits_1_with_the_refresh_command(
    site: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    pot, po = site
    _write(po / "concepts" / "leaf.po", {"A leaf tensor has no grad_fn.": ""})
    assert translations.main(["check", "--templates", str(pot), "--catalogues", str(po)]) == 1
    assert translations.REFRESH in capsys.readouterr().err


def test_the_glossary_fixes_the_terms_the_issue_names() -> None:
    terms = {t.english: t.chinese for t in translations.read_glossary()}
    for english, chinese in {
        "in-place": "原地",
        "leaf tensor": "叶子张量",
        "autograd": "自动微分",
        "computation graph": "计算图",
        "version counter": "版本计数器",
        "view": "视图",
    }.items():
        assert terms[english] == chinese


def test_the_committed_catalogues_are_translated() -> None:
    problems = translations.catalogue_problems(
        translations.CATALOGUES, None, translations.read_glossary()
    )
    assert problems == [], "\n".join(problems[:20])


def test_every_catalogue_belongs_to_a_page() -> None:
    """A catalogue for a page that no longer exists is dead weight (pages: docs/, recipes/)."""
    sources = {p.relative_to(ROOT / "docs").with_suffix("") for p in (ROOT / "docs").rglob("*.md")}
    sources |= {
        Path("auto_recipes") / p.relative_to(ROOT / "recipes").with_suffix("")
        for p in (ROOT / "recipes").rglob("*.py")
    }
    sources |= {
        Path("auto_recipes") / p.parent.relative_to(ROOT / "recipes") / "index"
        for p in (ROOT / "recipes").rglob("README.rst")
    }
    for po in translations.CATALOGUES.rglob("*.po"):
        page = po.relative_to(translations.CATALOGUES).with_suffix("")
        assert page in sources, f"{po} translates no page: delete it"
