"""The project's entry points: ``nox`` runs every check; ``nox -s docs`` builds the site."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import nox

nox.needs_version = ">=2024.10.9"
nox.options.default_venv_backend = "virtualenv"
nox.options.reuse_venv = "yes"
# Every check, in an order where each one's inputs exist: the browser test
# reads the site that `docs` built.
nox.options.sessions = ["lint", "tests", "doctest", "docs", "browser", "bench"]

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
BUILD = ROOT / "docs" / "_build"
#: The doctest builder must run at least this many examples over the site.
MIN_DOCTESTS = 60


def install(session: nox.Session, *groups: str) -> None:
    """Install the package (editable, so doctests of src/ import it) and dependency groups."""
    requirements = [
        req for group in groups for req in nox.project.dependency_groups(PYPROJECT, group)
    ]
    session.install(*requirements, "-e", ".")


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff (lint and format check) over the tree; mypy over src/."""
    install(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session
def tests(session: nox.Session) -> None:
    """pytest: property tests, gradient checks, docstring doctests of src/ and the README."""
    install(session, "test")
    session.run(
        "pytest",
        "--doctest-modules",
        "--doctest-glob=README.md",
        "tests",
        "src/inplace_recipes",
        "README.md",
        "-m",
        "not browser",
        *session.posargs,
    )


def sphinx(session: nox.Session, builder: str, *extra: str) -> None:
    """sphinx-build with warnings as errors; never ``-j``: gallery scripts share one process."""
    session.run(
        "sphinx-build", "-W", "--keep-going", "-b", builder, "docs", str(BUILD / builder), *extra
    )


#: The Chinese edition: built from the same sources into this folder of the site.
ZH_CN = BUILD / "html" / "zh_CN"


@nox.session
def docs(session: nox.Session) -> None:
    """Build the site in English and Chinese, executing every script in recipes/ once.

    Warnings are errors. The Chinese build reuses the gallery output of the
    English one (sphinx-gallery does not re-run unchanged scripts) and fails,
    before it starts, when a catalogue is out of step with the English pages.
    """
    install(session, "docs")
    sphinx(session, "html", *session.posargs)
    session.log(f"The site is at {BUILD / 'html' / 'index.html'}")
    sphinx(session, "gettext")
    # The catalogues, and a Chinese caption for every figure the English build drew.
    session.run(
        "python", "docs/translations.py", "check",
        "--templates", str(BUILD / "gettext"), "--figures", "docs",
    )  # fmt: skip
    session.run(
        "sphinx-build", "-W", "--keep-going", "-b", "html", "-D", "language=zh_CN",
        "-d", str(BUILD / "doctrees-zh_CN"), "docs", str(ZH_CN),
    )  # fmt: skip
    session.log(f"The Chinese edition is at {ZH_CN / 'index.html'}")


@nox.session(default=False)
def translations(session: nox.Session) -> None:
    """Bring docs/locale/zh_CN in step with the English pages, ready to translate.

    New messages arrive empty, changed ones fuzzy (with the old translation);
    ``nox -s docs`` fails until each is translated (see docs/locale/zh_CN/glossary.md).
    """
    install(session, "docs")
    session.install("sphinx-intl>=2.2")
    sphinx(session, "gettext")
    session.run(
        "sphinx-intl", "update", "--pot-dir", str(BUILD / "gettext"), "--language", "zh_CN",
        "--locale-dir", "docs/locale", "--line-width", "0", "--no-obsolete",
    )  # fmt: skip
    session.run("python", "docs/translations.py", "prune")


@nox.session
def doctest(session: nox.Session) -> None:
    """Sphinx's doctest builder over every page, recipe text cell and docstring."""
    install(session, "docs")
    sphinx(session, "doctest", "-D", "plot_gallery=0", *session.posargs)
    # Sphinx prints a summary per page; report the site's total and hold it to the floor.
    summary = (BUILD / "doctest" / "output.txt").read_text()
    totals = re.findall(r"^\s+(\d+) tests?$", summary, flags=re.MULTILINE)
    ran = int(totals[-1]) if totals else 0
    session.log(f"The doctest builder ran {ran} examples, none failed")
    if ran < MIN_DOCTESTS:
        session.error(f"only {ran} doctest examples ran; the site promises at least {MIN_DOCTESTS}")


@nox.session
def browser(session: nox.Session) -> None:
    """Open the built site in headless Chromium; fail on console errors or broken pages."""
    if not (BUILD / "html" / "index.html").exists():
        session.error("Build the site first: nox -s docs")
    # Debian's Chromium, and a CJK font so that the Chinese edition shows text, not boxes.
    missing = [
        package
        for package, present in [
            ("chromium", shutil.which("chromium") is not None),
            (
                "fonts-noto-cjk",
                Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc").exists(),
            ),
        ]
        if not present
    ]
    if missing:
        apt = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", external=True, env=apt)
        session.run("apt-get", "install", "-y", *missing, external=True, env=apt)
    install(session, "browser")
    session.run("pytest", "-m", "browser", "tests", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """Quick benchmark (under two minutes): prints the overhead table.

    Fails (``--check``) when a recipe counts more than 1.10x the instructions
    of its raw one-liner, or ``at()`` more than 1.05x the recipe it picks.

    The committed full run (see benchmarks/README.md): ``nox -s bench -- --full
    --threads 1 --device cpu --output benchmarks/results/cpu-full.json``.
    """
    if shutil.which("valgrind") is None:  # instruction counts (callgrind)
        apt = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", external=True, env=apt)
        session.run("apt-get", "install", "-y", "valgrind", external=True, env=apt)
    session.install("-e", ".[bench]")  # torch, tqdm, matplotlib
    args = session.posargs or ["--quick", "--check", "--output", str(BUILD / "bench-quick.json")]
    session.run("python", "-m", "inplace_recipes", "bench", *args)


@nox.session
def matrix(session: nox.Session) -> None:
    """Print the compatibility matrix of every recipe and ``at[]``."""
    install(session)
    session.run("python", "-m", "inplace_recipes", "matrix", *session.posargs)


@nox.session(default=False)
def build(session: nox.Session) -> None:
    """Build the sdist and wheel."""
    session.install("build")
    session.run("python", "-m", "build")


#: Torch releases compared with the pin on the "Other torch releases" page
#: (comparisons/releases/); the pin itself is read from pyproject.toml.
OTHER_TORCH_RELEASES = ["2.14.1", "2.15.0"]
#: The peers `nox -s peers` compares `at[]` with (comparisons/peers.json).
PEER_PACKAGES = ["jax==0.10.2", "jaxlib==0.10.2", "array-api-extra==0.11.5"]


@nox.session(default=False, venv_backend="none")
def releases(session: nox.Session) -> None:
    """Run the error page, claims, matrix and conformance suites on each torch release.

    One virtual environment per release (.nox/torch-X, a CUDA build takes 5.5 GB);
    writes comparisons/releases/torch-X.json. ``nox -s releases -- 2.15.0`` runs
    the releases named instead; ``--delete-venvs`` removes each environment after
    its run (see comparisons/README.md for time and disk).
    """
    pin = next(
        d.split("==")[1] for d in PYPROJECT["project"]["dependencies"] if d.startswith("torch==")
    )
    delete = "--delete-venvs" in session.posargs
    chosen = [arg for arg in session.posargs if arg != "--delete-venvs"]
    requirements = nox.project.dependency_groups(PYPROJECT, "test")
    for release in chosen or [pin, *OTHER_TORCH_RELEASES]:
        venv = ROOT / ".nox" / f"torch-{release}"
        python = venv / "bin" / "python"
        if not python.exists():
            session.run(sys.executable, "-m", "venv", str(venv))
        # A machine-wide pip constraint may cap torch (this project's machine
        # holds torch<=2.14.1, the releases on its disk): the session exists to
        # install other releases, so each one is installed without it.
        env = {} if release == pin else {"PIP_CONSTRAINT": os.devnull}
        session.run(
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            f"torch=={release}",
            "numpy",
            *requirements,
            env=env,
        )
        session.run(str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", ".")
        output = ROOT / "comparisons" / "releases" / f"torch-{release}.json"
        session.run(str(python), "tools/run_release.py", "--output", str(output.relative_to(ROOT)))
        if delete and release != pin:
            shutil.rmtree(venv)


@nox.session(default=False)
def peers(session: nox.Session) -> None:
    """Run the at[] conformance cases through JAX, array-api-extra and inplace_recipes.

    Writes comparisons/peers.json, which the at[] page reads.
    """
    install(session, "test")
    session.install(*PEER_PACKAGES)
    session.run(
        "python", "tools/run_peers.py", "--output", "comparisons/peers.json", *session.posargs
    )
