"""Sphinx configuration: MyST pages, the recipes gallery, autodoc and doctests.

Every script in ``recipes/`` is executed (``filename_pattern``); nothing is
loaded from another host, so the site builds and reads offline.
"""

from __future__ import annotations

import doctest
import sys
from importlib.metadata import version as _version
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # for gallery_reset and the page generators

import answer_table
import api_modules
import concept_graphs

project = "inplace-recipes"
author = "inplace-recipes developers"
copyright = "inplace-recipes developers"
release = _version("inplace-recipes")
version = ".".join(release.split(".")[:2])

extensions = [
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.viewcode",
    "sphinx_copybutton",
    "zh_edition",  # the Chinese edition's cards, figure captions and theme strings
    "error_patterns",  # docs/error_patterns.py: the error box's patterns and scripts
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "_generated",  # included by other pages, not pages of their own
    "locale",  # translation catalogues and the translators' glossary
    "measurements",  # the committed runs the pages read, and how they were made
    "sg_execution_times.rst",
    "auto_recipes/**sg_execution_times.rst",
    "**.ipynb",
]

# -- MyST ------------------------------------------------------------------
# substitution: the generated pages' figures (answer_table.FIGURES), so that a
# sentence keeps one wording, and one translation, whatever its numbers.
myst_enable_extensions = ["colon_fence", "substitution"]
myst_heading_anchors = 3

# -- HTML ------------------------------------------------------------------
html_theme = "furo"
html_title = f"inplace-recipes {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {"navigation_with_keys": True}
html_show_sourcelink = False
# Furo's sidebar with the language switcher under the project's name.
templates_path = ["_templates"]
html_sidebars = {
    "**": [
        "sidebar/scroll-start.html",
        "sidebar/brand.html",
        "sidebar/lang-switch.html",
        "sidebar/search.html",
        "sidebar/navigation.html",
        "sidebar/scroll-end.html",
    ]
}

# -- translations ------------------------------------------------------------
# The Chinese edition: `nox -s docs` builds it with -D language=zh_CN from the
# same sources and executed gallery output; only the prose comes from the
# catalogues in locale/ (one per page, no line numbers, so that an edit
# elsewhere on a page does not touch them). `nox -s translations` updates them.
locale_dirs = ["locale/"]
gettext_compact = False
gettext_location = False
gettext_uuid = False

# -- autodoc ---------------------------------------------------------------
autodoc_default_options = {"members": True, "member-order": "bysource"}
autodoc_typehints = "description"
autodoc_preserve_defaults = True

# -- doctest ---------------------------------------------------------------
# Run before each page's doctests: torch, the package (as ``ir``) and every
# name of its documented modules that does not start with ``_`` (their
# docstrings use them unqualified, as their own module sees them).
doctest_global_setup = f"""
import importlib

import torch

import inplace_recipes
import inplace_recipes as ir

for _name in ("", *{api_modules.MODULES!r}):
    _module = importlib.import_module(("inplace_recipes." + _name).rstrip("."))
    globals().update({{_n: _v for _n, _v in vars(_module).items() if not _n.startswith("_")}})
torch.manual_seed(0)
"""
# Sphinx's default flags include IGNORE_EXCEPTION_DETAIL, which would accept any
# message after the exception type: the pages promise exact messages, so leave it out.
doctest_default_flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1
doctest_test_doctest_blocks = "default"  # plain >>> blocks are tests too

# -- sphinx-gallery ----------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../recipes",
    "gallery_dirs": "auto_recipes",
    "filename_pattern": r".*\.py",  # execute every script
    "ignore_pattern": r"__init__\.py",
    "subsection_order": [
        "../recipes/by_recipe",
        "../recipes/patterns",
        "../recipes/tools",
        "../recipes/situations",
    ],
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib", "gallery_reset.reset_torch"),
    "reset_modules_order": "before",
    "image_scrapers": ("matplotlib",),
    "only_warn_on_example_error": False,
    "abort_on_example_error": True,
    "run_stale_examples": False,
    "remove_config_comments": True,
    "download_all_examples": False,
    "show_signature": False,
    "min_reported_time": 1,
    # "Pages that use ..." mini-galleries on the API page
    "doc_module": ("inplace_recipes",),
    "backreferences_dir": "gen_modules/backreferences",
    # The execution-times pages load jQuery and DataTables from a CDN: not written.
    "write_computation_times": False,
}

# -- copybutton --------------------------------------------------------------
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_exclude = ".linenos, .gp, .go"

# -- pages generated at build time ---------------------------------------
#: Gallery scripts that read committed data: re-run them when the data is newer
#: than their last run (sphinx-gallery itself only notices a changed script).
DATA_DEPENDENCIES = {
    "by_recipe/plot_select_scatter.py": HERE / "measurements" / "bench" / "cpu-full.json",
    "by_recipe/plot_mask.py": HERE / "measurements" / "bench" / "cpu-full.json",
    "tools/plot_performance.py": HERE / "measurements" / "bench" / "cpu-full.json",
    # folders: the runs replace their files, which changes the folder's time stamp
    "tools/plot_releases.py": HERE / "measurements" / "releases",
    "tools/plot_at.py": HERE / "measurements" / "peers.json",
}
for _script, _data in DATA_DEPENDENCIES.items():
    _stamp = HERE / sphinx_gallery_conf["gallery_dirs"] / f"{_script}.md5"
    if _stamp.exists() and _stamp.stat().st_mtime < _data.stat().st_mtime:
        _stamp.unlink()

answer_table.write(HERE / "_generated")
myst_substitutions = dict(answer_table.FIGURES)
concept_graphs.write(HERE / "_generated")
api_modules.write(HERE / "_generated")
