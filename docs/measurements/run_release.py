"""Run the site's checks on the torch that is installed; write one JSON file.

``nox -s releases`` calls this in one virtual environment per torch release:

    python docs/measurements/run_release.py --output docs/measurements/releases/torch-2.14.1.json

It records, with the run's provenance:

- every example of the error reference page (``docs/errors.md``): the message or
  output torch gives now, whether it matches the page, and what
  ``inplace_recipes.explain`` makes of it;
- every claim of ``inplace_recipes.claims`` (``verify_all()``);
- every cell of ``inplace_recipes.compatibility_matrix()``;
- every test of the conformance suites (pytest, JUnit XML), with ``CI=true``
  so Hypothesis draws the same examples on every release.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime
import doctest
import importlib
import io
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import torch

import inplace_recipes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/: the site's tooling
import releases

from inplace_recipes.claims import verify_all
from inplace_recipes.error_reference import explain
from inplace_recipes.matrix import compatibility_matrix

ROOT = releases.ROOT
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def _explained(message: str) -> str:
    try:
        explanation = explain(message)
    except Exception as error:  # noqa: BLE001 - an unrecognised message is a finding
        return f"not recognised ({type(error).__name__})"
    return explanation.slug or "not recognised"


def _doctest_globals() -> dict[str, Any]:
    """What docs/conf.py's ``doctest_global_setup`` gives every page: torch, ``ir`` and
    every public name of the modules the API page lists."""
    tree = ast.parse((ROOT / "docs" / "api_modules.py").read_text())
    modules = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MODULES"
    )
    namespace: dict[str, Any] = {"torch": torch, "ir": inplace_recipes}
    namespace["inplace_recipes"] = inplace_recipes
    for name in modules:
        module = importlib.import_module(f"inplace_recipes.{name}")
        namespace.update({n: getattr(module, n) for n in getattr(module, "__all__", ())})
    return namespace


def run_error_page() -> list[dict[str, Any]]:
    """Every example of the error page in one namespace, as Sphinx's doctest runs them."""
    namespace = _doctest_globals()
    torch.manual_seed(0)
    checker = doctest.OutputChecker()
    records = []
    for example in releases.error_examples():
        out = io.StringIO()
        exception = None
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                exec(compile(example.source, "<errors.md>", "single"), namespace)  # noqa: S102
            except Exception as error:  # noqa: BLE001 - the page's repros raise on purpose
                exception = traceback.format_exception_only(type(error), error)[-1]
        got = out.getvalue()
        if example.exc_msg is not None:
            observed = (exception or got).strip()
            matches = exception is not None and checker.check_output(
                example.exc_msg, exception, example.flags
            )
        else:
            observed = (got + (exception or "")).strip()
            matches = exception is None and checker.check_output(example.want, got, example.flags)
        record = {
            "section": example.section,
            "source": example.source.strip(),
            "expected": (example.exc_msg or example.want).strip(),
            "expected_exception": example.exc_msg is not None,
            "observed": _ADDRESS.sub("0x...", observed),
            "matches": bool(matches),
        }
        if example.exc_msg is not None:
            record["explained_as"] = _explained(observed)
        records.append(record)
    return records


def run_conformance() -> dict[str, Any]:
    """The conformance suites under pytest; one record per test."""
    files = list(releases.CONFORMANCE_FILES)
    present = [name for name in files if (ROOT / name).exists()]
    if not present:
        return {"files": [], "missing": files, "tests": [], "totals": {}, "returncode": None}
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={report}",
                *present,
            ],
            cwd=ROOT,
            env={**os.environ, "CI": "true"},
            capture_output=True,
            text=True,
            check=False,
        )
        tests = []
        for case in ET.parse(report).getroot().iter("testcase"):
            outcome, message = "passed", ""
            for child in case:
                if child.tag in ("failure", "error", "skipped"):
                    outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[
                        child.tag
                    ]
                    message = (child.get("message") or "").strip().splitlines()
                    message = message[0][:300] if message else ""
            tests.append(
                {
                    "id": f"{case.get('classname')}::{case.get('name')}",
                    "outcome": outcome,
                    "message": message,
                }
            )
    totals: dict[str, int] = {}
    for test in tests:
        totals[test["outcome"]] = totals.get(test["outcome"], 0) + 1
    return {
        "files": present,
        "missing": [name for name in files if name not in present],
        "returncode": done.returncode,
        "summary": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "",
        "totals": totals,
        "tests": tests,
    }


def _git_commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "HEAD")
    return commit + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def run(command: str) -> dict[str, Any]:
    """Every part, timed, with the provenance of the run."""
    start = time.perf_counter()
    seconds = {}
    parts: dict[str, Any] = {}

    t = time.perf_counter()
    parts["errors"] = {"examples": run_error_page()}
    seconds["errors"] = time.perf_counter() - t

    t = time.perf_counter()
    parts["claims"] = {"records": verify_all()}
    seconds["claims"] = time.perf_counter() - t

    t = time.perf_counter()
    matrix = compatibility_matrix()
    parts["matrix"] = {"setup": matrix.setup, "cells": matrix.to_records()}
    seconds["matrix"] = time.perf_counter() - t

    t = time.perf_counter()
    parts["conformance"] = run_conformance()
    seconds["conformance"] = time.perf_counter() - t

    import numpy  # the conformance suites need it; recorded for provenance

    provenance = {
        "release": torch.__version__.split("+")[0],
        "torch": torch.__version__,
        "torch_git": torch.version.git_version,
        "torch_cuda": torch.version.cuda,
        "cuda_available": torch.cuda.is_available(),
        "pin": releases.pinned_torch(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "command": command,
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "total_seconds": round(time.perf_counter() - start, 1),
    }
    return {"provenance": provenance, "fingerprints": releases.fingerprints(), **parts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True, help="the JSON file to write")
    args = parser.parse_args()
    command = "python docs/measurements/run_release.py --output " + str(args.output)
    result = run(command)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    # Write beside it, then rename: the folder's time stamp tells the docs build to re-run the page.
    partial = args.output.with_suffix(".partial")
    partial.write_text(json.dumps(result, indent=1) + "\n")
    partial.replace(args.output)
    prov = result["provenance"]
    sys.stdout.write(
        f"torch {prov['torch']}: {prov['seconds']} s -> {args.output}\n"
        f"{releases.side_by_side({prov['release']: result}, prov['release']).summary()}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
