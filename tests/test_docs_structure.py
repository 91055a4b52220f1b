"""The site's structure: a page per recipe, every script executed, nothing from other hosts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from docs_modules import import_docs_module
from inplace_recipes import RECIPES

committed = import_docs_module("committed")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RECIPES_DIR = ROOT / "recipes"
CONF = (DOCS / "conf.py").read_text()
SCRIPTS = sorted(RECIPES_DIR.rglob("*.py"))


@pytest.mark.parametrize("name", list(RECIPES))
def test_every_recipe_has_a_page(name: str) -> None:
    assert (RECIPES_DIR / "by_recipe" / f"plot_{name}.py").is_file(), (
        f"RECIPES[{name!r}] has no page: add recipes/by_recipe/plot_{name}.py"
    )


def test_every_page_in_by_recipe_is_a_recipe() -> None:
    pages = {p.stem.removeprefix("plot_") for p in (RECIPES_DIR / "by_recipe").glob("*.py")}
    assert pages <= set(RECIPES)


def _conf_value(name: str) -> object:
    tree = ast.parse(CONF)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return ast.unparse(node.value)
    raise KeyError(name)


def test_gallery_executes_every_script() -> None:
    conf = _conf_value("sphinx_gallery_conf")
    assert isinstance(conf, dict)
    pattern = re.compile(conf["filename_pattern"])
    ignore = re.compile(conf.get("ignore_pattern", r"^$"))
    assert SCRIPTS
    for script in SCRIPTS:
        assert pattern.search(str(script)), f"{script} would not be executed"
        assert not ignore.search(script.name), f"{script} is ignored by the gallery"
    assert conf["abort_on_example_error"] is True
    assert conf["only_warn_on_example_error"] is False
    assert conf["run_stale_examples"] is False
    assert conf["examples_dirs"] == "../recipes"
    assert conf["gallery_dirs"] == "auto_recipes"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(RECIPES_DIR)))
def test_recipe_scripts_follow_the_recipe_style(script: Path) -> None:
    text = script.read_text()
    doc = ast.get_docstring(ast.parse(text))
    assert doc, "a module docstring with a title and a summary"
    lines = doc.strip().splitlines()
    assert len(lines) >= 3, "a title and a summary"
    assert set(lines[1]) == {"="}, "a title underlined with ="
    assert "# %%" in text, "cells separated by # %%"
    assert "Learn more" in text, "a closing Learn more list"


def test_no_external_scripts_or_fonts_in_conf() -> None:
    assert "intersphinx" not in CONF
    for name in ("html_js_files", "html_css_files"):
        try:
            files = _conf_value(name)
        except KeyError:
            continue
        assert isinstance(files, list)
        assert not any("://" in str(f) for f in files), f"{name} loads from another host"


def test_doctest_checks_exception_messages() -> None:
    flags = _conf_value("doctest_default_flags")
    assert "IGNORE_EXCEPTION_DETAIL" not in str(flags)
    assert "ELLIPSIS" in str(flags)


@pytest.mark.browser  # runs in the browser session, after `docs` built the site
def test_built_html_loads_nothing_from_other_hosts() -> None:
    html_dir = DOCS / "_build" / "html"
    assert (html_dir / "index.html").exists(), "build the site first: nox -s docs"
    tag = re.compile(r"<(script|link)\b[^>]*?\b(src|href)=[\"'](https?:)?//", re.IGNORECASE)
    for page in html_dir.rglob("*.html"):
        for match in tag.finditer(page.read_text(errors="replace")):
            if (
                match.group(1).lower() == "link"
                and "stylesheet" not in match.group(0)
                and ("preload" not in match.group(0))
            ):
                continue  # plain <link> to another page is not a load
            pytest.fail(f"{page.relative_to(html_dir)} loads {match.group(0)!r}")


def _public_modules() -> set[str]:
    """Every module of the package that no ``_``-prefixed part hides."""
    import pkgutil

    import inplace_recipes

    return {
        info.name.removeprefix("inplace_recipes.")
        for info in pkgutil.walk_packages(inplace_recipes.__path__, "inplace_recipes.")
        if not any(part.startswith("_") for part in info.name.split(".")[1:])
    }


def _listed_on_the_api_page() -> list[str]:
    tree = ast.parse((DOCS / "api_modules.py").read_text())
    return next(
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.AnnAssign | ast.Assign)
        and "MODULES"
        in ast.unparse(node.targets[0] if isinstance(node, ast.Assign) else node.target)
    )


def test_every_public_module_is_on_the_api_page_and_no_other() -> None:
    assert _public_modules() == set(_listed_on_the_api_page())


#: The most names the package's public ``__all__`` may hold, summed over its
#: public modules (issue 27: the documented surface, not every internal).
MOST_PUBLIC_NAMES = 80


def test_the_public_surface_is_small_and_documented() -> None:
    import importlib

    modules = ["inplace_recipes", *(f"inplace_recipes.{m}" for m in sorted(_public_modules()))]
    names = {m: list(getattr(importlib.import_module(m), "__all__", [])) for m in modules}
    total = sum(len(v) for v in names.values())
    assert total <= MOST_PUBLIC_NAMES, f"{total} public names: {names}"
    for module, public in names.items():  # each is real, so the API page's autodoc shows it
        for name in public:
            assert hasattr(importlib.import_module(module), name), f"{module}.{name}"


def _answer_table():  # the docs' own generator, imported as conf.py does
    import importlib
    import sys

    sys.path.insert(0, str(DOCS))
    try:
        return importlib.import_module("answer_table")
    finally:
        sys.path.remove(str(DOCS))


def test_landing_page_answers_both_questions_before_the_table() -> None:
    text = (DOCS / "index.md").read_text()
    lead, table = text.index("_generated/answer_lead.md"), text.index("_generated/answer_table.md")
    assert lead < table
    assert len(text[: text.index("```{include} _generated/answer_lead.md")].splitlines()) < 8


def test_the_lead_quotes_the_committed_run() -> None:
    answer_table = _answer_table()

    results = committed.bench_results()
    lead = answer_table.render_lead()
    inplace = answer_table.measured(results, "inplace")
    clone = answer_table.measured(results, "clone")
    assert inplace
    assert clone
    # figures are MyST substitutions: one wording (and translation), the build's numbers
    assert "{{ inplace_ms }} in place" in lead
    assert "{{ clone_ms }} with clone-and-write" in lead
    assert answer_table.FIGURES["inplace_ms"] == f"{inplace['seconds'] * 1e3:.2f} ms"
    assert answer_table.FIGURES["clone_ms"] == f"{clone['seconds'] * 1e3:.2f} ms"
    first_line = lead.splitlines()[1]
    assert first_line.startswith("`y = "), "Q2 leads with the recommended line"


def test_the_table_is_in_the_benchmarks_order_and_marks_the_extremes() -> None:
    answer_table = _answer_table()
    from inplace_recipes import bench

    results = committed.bench_results()
    order = answer_table.recommendation_order(results)
    assert sorted(order) == sorted(RECIPES)
    rows = re.findall(r"^\* - \{doc\}`(\w+) <", answer_table.render(), re.MULTILINE)
    assert rows == order
    extremes = answer_table._extremes(results)
    # the ranking's slowest, with every recipe inside the noise band of it
    ranked = dict(bench.ranking(results)["element"])
    band = answer_table.noise(results)
    slowest = [n for n, ratio in ranked.items() if ratio * band >= max(ranked.values())]
    assert slowest
    assert all("slowest" in extremes.get(n, "") for n in slowest)
    assert not any("slowest" in m for n, m in extremes.items() if n not in slowest)
