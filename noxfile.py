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
# Every check, in an order where each one's inputs exist:
# the browser test reads the site that `docs` built. `build` follows `tests`:
# the wheel is checked once the tree itself passes.
nox.options.sessions = ["lint", "tests", "build", "doctest", "docs", "browser", "bench"]

ROOT = Path(__file__).parent
PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
BUILD = ROOT / "docs" / "_build"
#: The committed runs (benchmark, torch releases, peers) and the scripts that make them.
MEASUREMENTS = ROOT / "docs" / "measurements"
#: The doctest builder must run at least this many examples over the site.
MIN_DOCTESTS = 60


def install(session: nox.Session, *groups: str, extras: str = "") -> None:
    """Install the package (editable, so doctests of src/ import it), the pinned torch and groups.

    The package asks only for ``torch>=2.13.0``; the docs and the tests are
    verified on the exact release of the ``pin`` dependency group.
    """
    requirements = [
        req for group in ("pin", *groups) for req in nox.project.dependency_groups(PYPROJECT, group)
    ]
    session.install(*requirements, "-e", f".{extras}")


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

    The committed full run (see docs/measurements/bench/README.md): ``nox -s bench -- --full
    --threads 1 --device cpu --output docs/measurements/bench/cpu-full.json``.
    """
    if shutil.which("valgrind") is None:  # instruction counts (callgrind)
        apt = {"DEBIAN_FRONTEND": "noninteractive"}
        session.run("apt-get", "update", external=True, env=apt)
        session.run("apt-get", "install", "-y", "valgrind", external=True, env=apt)
    install(session, extras="[bench]")  # the pinned torch, tqdm, matplotlib
    args = session.posargs or ["--quick", "--check", "--output", str(BUILD / "bench-quick.json")]
    session.run("python", "-m", "inplace_recipes", "bench", *args)


@nox.session
def matrix(session: nox.Session) -> None:
    """Print the compatibility matrix of every recipe and ``at[]``."""
    install(session)
    session.run("python", "-m", "inplace_recipes", "matrix", *session.posargs)


#: The torch release `nox -s build` installs the wheel beside: not the pin, and
#: on this project's machine it installs from local disk.
BESIDE_TORCH = "2.14.1"
#: The files the installed wheel is checked with (tests/wheel/), copied to a folder
#: outside the tree so that nothing of the source tree can be imported.
WHEEL_CHECKS = ROOT / "tests" / "wheel"
#: The line of tests/wheel/test_planted.py that the audit must report.
PLANTED = "h.data.mul_(0.5)"
#: Prints torch's version and a hash of its installed files' record.
TORCH_IDENTITY = (
    "import hashlib, importlib.metadata as m, torch; "
    "print(torch.__version__, hashlib.sha256(m.distribution('torch').read_text('RECORD').encode())"
    ".hexdigest())"
)


@nox.session
def build(session: nox.Session) -> None:
    """Build the sdist and wheel and check the wheel installed beside another torch release.

    ``twine check`` the two; then, in a fresh virtualenv that already has torch
    :data:`BESIDE_TORCH`, ``pip install`` the wheel, assert that torch was not
    replaced, and run the README's quick tour, the package's doctests, the
    pytest plugin and ``mypy --strict`` on a typed snippet against the
    installed wheel, from a folder outside the tree and with ``python -I`` (so
    neither ``src/`` nor the caller's ``PYTHONPATH`` is imported); every module
    of the wheel is imported there and each public function run once
    (``tests/wheel/every_module.py``).
    """
    session.install("build", "twine")
    dist = BUILD / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("python", "-m", "build", "--outdir", str(dist))
    built = sorted(dist.iterdir())
    session.run("twine", "check", "--strict", *map(str, built))
    (wheel,) = [path for path in built if path.suffix == ".whl"]
    version = wheel.name.split("-")[1]

    venv = BUILD / f"beside-torch-{BESIDE_TORCH}"
    shutil.rmtree(venv, ignore_errors=True)
    session.run(sys.executable, "-m", "venv", str(venv), external=True)
    python = str(venv / "bin" / "python")
    session.run(
        python, "-m", "pip", "install", "--quiet", f"torch=={BESIDE_TORCH}", "numpy", external=True
    )
    before = session.run(python, "-c", TORCH_IDENTITY, silent=True, external=True)
    session.run(
        python, "-m", "pip", "install", f"{wheel}[bench,audit-fix]", "pytest", "mypy", external=True
    )
    after = session.run(python, "-c", TORCH_IDENTITY, silent=True, external=True)
    if before != after or not str(after).startswith(BESIDE_TORCH):
        session.error(f"installing the wheel replaced torch: {before!r} became {after!r}")
    session.log(f"torch {BESIDE_TORCH} stayed in place")

    work = BUILD / "beside-torch-check"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copy(ROOT / "README.md", work / "README.md")
    for path in WHEEL_CHECKS.glob("*.py"):
        shutil.copy(path, work / path.name)
    planted = next(
        n
        for n, line in enumerate((work / "test_planted.py").read_text().splitlines(), 1)
        if PLANTED in line
    )
    # -I: no PYTHONPATH, no user site, no current folder: the wheel, whatever the caller's
    # environment points at (a checkout's src/ on PYTHONPATH would shadow it).
    python_i = [python, "-I"]
    pytest = [*python_i, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir", str(work), "-q"]
    with session.chdir(work):
        session.run(*python_i, "where.py", version, external=True)
        session.run(*python_i, "every_module.py", external=True)
        session.run(*pytest, "--doctest-glob=README.md", "README.md", external=True)
        session.run(*pytest, "--doctest-modules", "--pyargs", "inplace_recipes", external=True)
        session.run(*pytest, "test_planted.py", external=True)  # the plugin is off without its flag
        caught = session.run(
            *pytest,
            "--inplace-audit",
            "test_planted.py",
            success_codes=[1],
            silent=True,
            external=True,
        )
        if "wrong gradients" not in str(caught) or f"test_planted.py:{planted}" not in str(caught):
            session.error(f"pytest --inplace-audit missed the planted write:\n{caught}")
        session.run(*python_i, "-m", "mypy", "--strict", "typed_use.py", external=True)
        wrong = session.run(
            *python_i,
            "-m",
            "mypy",
            "--strict",
            "wrong_use.py",
            success_codes=[1],
            silent=True,
            external=True,
        )
        if "incompatible types" not in str(wrong).lower():
            session.error(f"mypy did not see the package's types:\n{wrong}")
    shutil.rmtree(venv)  # 5.5 GB; kept only when a check failed, to look into


#: Torch releases compared with the pin on the "Other torch releases" page
#: (docs/measurements/releases/); the pin itself is pyproject.toml's `pin` dependency group.
OTHER_TORCH_RELEASES = ["2.14.1", "2.15.0"]
#: The peers `nox -s peers` compares `at[]` with (docs/measurements/peers.json).
PEER_PACKAGES = ["jax==0.10.2", "jaxlib==0.10.2", "array-api-extra==0.11.5"]


@nox.session(default=False, venv_backend="none")
def releases(session: nox.Session) -> None:
    """Run the error page, claims, matrix and conformance suites, then the tests, on each torch.

    One virtual environment per release (.nox/torch-X, a CUDA build takes 5.5 GB);
    writes docs/measurements/releases/torch-X.json. ``nox -s releases -- 2.15.0`` runs
    the releases named instead; ``--delete-venvs`` removes each environment after
    its run (see docs/measurements/README.md for time and disk). A release whose
    tests fail stops the session there; every comparison is written first.
    """
    (pin,) = [
        d.split("==")[1]
        for d in nox.project.dependency_groups(PYPROJECT, "pin")
        if d.startswith("torch==")
    ]
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
        output = MEASUREMENTS / "releases" / f"torch-{release}.json"
        session.run(
            str(python),
            "docs/measurements/run_release.py",
            "--output",
            str(output.relative_to(ROOT)),
        )
    # ... then the package's own test suite on each, once every comparison is
    # written: the suite checks that all of them are fresh, and a release that
    # changes an answer still leaves its comparison to read.
    for release in chosen or [pin, *OTHER_TORCH_RELEASES]:
        venv = ROOT / ".nox" / f"torch-{release}"
        session.run(
            str(venv / "bin" / "python"), "-m", "pytest", "-p", "no:cacheprovider", "tests",
            "-m", "not browser", env={"CI": "true"},
        )  # fmt: skip
        if delete and release != pin:
            shutil.rmtree(venv)


@nox.session(default=False)
def peers(session: nox.Session) -> None:
    """Run the at[] conformance cases through JAX, array-api-extra and inplace_recipes.

    Writes docs/measurements/peers.json, which the at[] page reads.
    """
    install(session, "test")
    session.install(*PEER_PACKAGES)
    session.run(
        "python",
        "docs/measurements/run_peers.py",
        "--output",
        "docs/measurements/peers.json",
        *session.posargs,
    )
