"""The committed comparisons describe the tree as it is: the pin, the releases, the cases.

``docs/measurements/releases/torch-*.json`` (``nox -s releases``) and
``docs/measurements/peers.json`` (``nox -s peers``) are made by sessions too heavy
for every CI run; these tests fail, naming the command, when they go stale.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from docs_modules import import_docs_module

releases = import_docs_module("releases")
peers = import_docs_module("peers")

ROOT = Path(__file__).resolve().parents[1]


def _noxfile_releases() -> list[str]:
    """``OTHER_TORCH_RELEASES`` as the noxfile sets it (read, not imported: nox is not here)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(getattr(t, "id", None) == "OTHER_TORCH_RELEASES" for t in targets):
                assert node.value is not None
                return list(ast.literal_eval(node.value))
    raise AssertionError("noxfile.py sets no OTHER_TORCH_RELEASES")


@pytest.fixture(scope="module")
def runs() -> dict:
    return releases.load_results()


def test_pin_is_read_from_pyproject(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\ndependencies = ["numpy", "torch>=9"]\n\n'
        '[dependency-groups]\ntest = ["torch==1.0"]\npin = ["numpy", "torch==9.1.2"]\n'
    )
    assert releases.pinned_torch(pyproject) == "9.1.2"
    assert releases.supported_torch(pyproject) == ">=9"
    # an exact dependency of the package is not the docs' pin: it is what #22 removed
    pyproject.write_text('[project]\ndependencies = ["torch==9.1.2"]\n')
    with pytest.raises(ValueError, match="pins no torch release"):
        releases.pinned_torch(pyproject)
    pyproject.write_text('[project]\ndependencies = ["torch"]\n')
    with pytest.raises(ValueError, match="no torch dependency with a version range"):
        releases.supported_torch(pyproject)


def test_the_package_installs_beside_every_tested_release(runs: dict) -> None:
    """The package asks for a range, not the pin: its lower bound is the oldest tested release.

    Every release the comparison runs on is inside the range, and the lower
    bound has a committed run, so no untested torch is promised below it.
    """
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    supported = SpecifierSet(releases.supported_torch())
    tested = [releases.pinned_torch(), *_noxfile_releases()]
    assert all(Version(release) in supported for release in tested), (supported, tested)
    lower = [Version(spec.version) for spec in supported if spec.operator in (">=", ">")]
    assert lower, f"torch{supported} has no lower bound"
    assert str(max(lower)) in runs, f"the lower bound {max(lower)} has no committed run"
    assert str(max(lower)) == min(runs, key=Version), "a committed run is older than the bound"
    assert not any(spec.operator == "==" for spec in supported), "the package pins torch"


def test_release_runs_are_fresh(runs: dict) -> None:
    reasons = releases.stale_reasons(runs, releases.pinned_torch(), _noxfile_releases())
    assert not reasons, f"{'; '.join(reasons)}. Refresh with: {releases.REFRESH}"


def test_each_run_names_the_pin_it_was_made_under(runs: dict) -> None:
    pin = releases.pinned_torch()
    for release, run in runs.items():
        assert run["provenance"]["pin"] == pin, (
            f"torch-{release}.json was made when the pin was {run['provenance']['pin']}, "
            f"now it is {pin}. Refresh with: {releases.REFRESH}"
        )
        assert run["provenance"]["torch"].startswith(release)


def test_a_changed_claim_makes_a_run_stale(runs: dict) -> None:
    pin = releases.pinned_torch()
    old = copy.deepcopy(runs)
    old[pin]["fingerprints"]["claims"] = "0" * 16
    assert any("claims" in reason for reason in releases.stale_reasons(old, pin))
    assert any("2.99.0" in r for r in releases.stale_reasons(runs, pin, ["2.99.0"]))


def test_side_by_side_marks_what_changed(runs: dict) -> None:
    pin = releases.pinned_torch()
    fake = copy.deepcopy(runs[pin])
    fake["provenance"]["release"] = "9.0.0"
    bug, other = [r for r in fake["claims"]["records"] if r["bug"]][:2]
    bug["holds"], bug["observed"] = False, "ClaimBroken: the tangent is right now"
    # a repro that crashes is not a fix: the page must not say so
    other["holds"], other["observed"] = False, "AttributeError: torch.func has no jvp"
    comparison = releases.side_by_side({pin: runs[pin], "9.0.0": fake}, pin)
    rows = {row.label: row for row in comparison.rows["claims"]}
    assert rows[bug["statement"]].values["9.0.0"] == "fixed (the bug is gone)"
    assert rows[other["statement"]].values["9.0.0"].startswith("repro fails: AttributeError")
    assert "<mark>fixed (the bug is gone)</mark>" in comparison.to_html("claims")
    assert not comparison.changes("errors")
    assert {row.label for row in comparison.changes()} == {bug["statement"], other["statement"]}


def test_error_page_examples_are_all_read() -> None:
    examples = releases.error_examples()
    page = releases.ERRORS_PAGE.read_text()
    assert len(examples) == page.count("\n>>> ")
    labels = {line[1:-2] for line in page.splitlines() if line.startswith("(error-")}
    assert labels <= {e.section for e in examples}


def test_baseline_run_matches_the_page(runs: dict) -> None:
    """On the pin, every repro of the error page gives the page's output."""
    run = runs[releases.pinned_torch()]
    wrong = [e["source"] for e in run["errors"]["examples"] if not e["matches"]]
    assert not wrong, f"differ on the pin: {wrong}. Refresh with: {releases.REFRESH}"


def test_peers_results_are_fresh() -> None:
    from at_cases import AT_CASES  # the conformance cases the peers ran

    run = peers.load_peers()
    assert run["cases_fingerprint"] == peers.case_fingerprint(AT_CASES), (
        f"{peers.PEERS_FILE.name} was made on other cases than tests/at_cases.py has. "
        f"Refresh with: {peers.REFRESH}"
    )
    assert run["provenance"]["torch"].split("+")[0] == releases.pinned_torch(), (
        f"{peers.PEERS_FILE.name} was made on another torch than the pin. "
        f"Refresh with: {peers.REFRESH}"
    )


def test_case_fingerprint_is_the_same_without_avx512() -> None:
    """NumPy's answers differ in the last bit with and without AVX-512; the hash must not.

    The committed fingerprint once came from a machine without AVX-512, and
    every machine with it (CI's among them) found peers.json stale.
    """
    code = "from at_cases import AT_CASES; import peers; print(peers.case_fingerprint(AT_CASES))"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            p
            for p in (str(Path(__file__).parent), str(ROOT / "docs"), os.environ.get("PYTHONPATH"))
            if p
        ),
    }
    here = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    # X86_V4 is NumPy's name for the AVX-512 group; disabling it on a machine
    # without AVX-512 changes nothing, so the run compares like with like.
    without = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert here.stdout.strip() == without.stdout.strip()


def test_case_fingerprint_ignores_the_computed_answer() -> None:
    import numpy as np

    from at_cases import AT_CASES

    case = next(c for c in AT_CASES if c.expected is not None and c.expected.dtype.kind == "f")
    nudged = np.nextafter(case.expected, np.inf)  # one ulp: what another CPU may compute
    changed = dataclasses.replace(case, expected=nudged)
    assert peers.case_fingerprint([changed]) == peers.case_fingerprint([case])


def test_case_fingerprint_sees_every_field() -> None:
    import numpy as np

    from at_cases import AT_CASES

    case = AT_CASES[0]
    changed = dataclasses.replace(case, x=np.asarray(case.x) + 1)
    assert peers.case_fingerprint([changed]) != peers.case_fingerprint([case])
    assert peers.canonical(np.array([1, 2], dtype=np.int32)) != peers.canonical(
        np.array([1, 2], dtype=np.int64)
    )
