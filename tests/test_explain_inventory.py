"""Every in-place, view and version-counter error string of torch has a section or a reason.

The inventory (``docs/measurements/error-inventory.json``, made by
``docs/measurements/run_error_inventory.py`` from an installed torch's files)
lists the strings of torch 2.13.0, 2.14.1 and 2.15.0; ``docs/error_inventory.py``
says which section of errors.md covers each, or why none does. A release that
adds a string fails here until it has a section with a live repro or a reason;
run under another torch (``nox -s releases``), the installed torch's strings
must be the inventory's for that release.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
import torch

from conftest import import_docs_module

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "measurements" / "run_error_inventory.py"


def pinned_torch() -> str:
    """The pinned torch release (``docs/releases.py`` reads it from pyproject.toml)."""
    release: str = import_docs_module("releases").pinned_torch()
    return release


@pytest.fixture(scope="module")
def inventory() -> ModuleType:
    return import_docs_module("error_inventory")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_error_inventory", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_inventory_covers_the_pin_and_the_other_releases(inventory: ModuleType) -> None:
    runs = inventory.releases()
    assert pinned_torch() in runs
    assert {"2.14.1", "2.15.0"} <= set(runs)
    for release, run in runs.items():
        provenance = run["provenance"]
        assert provenance["torch"].split("+")[0] == release
        assert provenance["command"].startswith("python docs/measurements/run_error_inventory.py")
        assert len(run["entries"]) > 50, release


@pytest.mark.parametrize("release", ["2.13.0", "2.14.1", "2.15.0"])
def test_every_entry_has_a_section_or_a_stated_reason(inventory: ModuleType, release: str) -> None:
    runs = inventory.releases()
    page = inventory.sections()
    missing = []
    for row in inventory.classify(release, runs, pinned_torch()):
        twin_section = row["twin"] and inventory.covering_section(row["twin"], page)
        if not (row["section"] or twin_section or row["reason"]):
            missing.append(row["text"])
    assert missing == [], "give each a section with a live repro on errors.md, or a reason"


def test_every_section_an_entry_names_has_a_live_repro(inventory: ModuleType) -> None:
    page = inventory.sections()
    runs = inventory.releases()
    for row in inventory.classify(pinned_torch(), runs, pinned_torch()):
        if row["section"]:
            assert "Traceback (most recent call last):" in page[row["section"]], row["section"]


def test_no_reason_is_stale(inventory: ModuleType) -> None:
    runs = inventory.releases()
    texts = {e["text"] for run in runs.values() for e in run["entries"]}
    assert sorted(set(inventory.REASONS) - texts) == []
    for text in inventory.REASONS:  # a reason is for an entry no section covers
        assert inventory.covering_section(text, inventory.sections()) is None, text


def test_a_new_release_that_adds_a_string_fails(inventory: ModuleType) -> None:
    runs = inventory.releases()
    pin = pinned_torch()
    later = {"provenance": {}, "entries": [*runs[pin]["entries"], {"text": "Inplace zap refused."}]}
    rows = inventory.classify("9.9.9", {**runs, "9.9.9": later}, pin)
    new = [r for r in rows if not (r["section"] or r["twin"] or r["reason"])]
    assert [r["text"] for r in new] == ["Inplace zap refused."]


@pytest.mark.slow
def test_the_installed_torch_has_the_inventorys_strings(inventory: ModuleType) -> None:
    """Run on another torch, this fails until the script has been run for it."""
    script = _script()
    folder, version, _git = script._torch_dir()
    release = version.split("+")[0]
    runs = inventory.releases()
    assert release in runs, f"run {SCRIPT.relative_to(ROOT)} under torch {version}"
    found = [e["text"] for e in script.inventory(folder)]
    assert found == [e["text"] for e in runs[release]["entries"]]


def test_detach_in_place_of_a_saved_output_does_not_reach_the_saved_tensor_check() -> None:
    """The reason given for "Trying to use a saved tensor that has been detached in-place"."""
    x = torch.ones(3, requires_grad=True)
    h = x.exp()  # exp saves its output
    y = h * 1
    h.detach_()
    y.sum().backward()  # runs: the graph recorded before the detach_() is unchanged
    assert torch.allclose(x.grad, x.exp().detach())


def test_mark_dirty_on_a_tensor_that_is_no_input_does_not_reach_its_check() -> None:
    """The reason given for "ctx.mark_dirty() received a tensor that was not an input"."""

    class MarksItsOwn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # type: ignore[no-untyped-def]
            y = x * 2
            ctx.mark_dirty(y)
            return y

        @staticmethod
        def backward(ctx, grad):  # type: ignore[no-untyped-def]
            return 2 * grad

    with pytest.warns(UserWarning, match=r"ctx.mark_dirty\(\) received a tensor that was not"):
        out = MarksItsOwn.apply(torch.ones(3, requires_grad=True) * 1)
    assert out.tolist() == [2.0, 2.0, 2.0]
