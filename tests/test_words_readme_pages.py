"""The README's and the reference pages' general words, each checked over the set it names.

``docs/general_words/readme-pages.json`` names, for each sentence with "every",
"only", "never", ... in README.md, docs/*.md, docs/concepts/*.md and
``explain()``'s texts, the tests that check it; the checks that no other test
made are here, one per claim, each enumerating its set from the project's own
tables (the tests' own source, RECIPES, ERRORS, the committed runs, the pages).
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


# -- README: "A property test draws 300 examples, or the fewer it asks examples(n) for" --


def _readme_sentence(start: str) -> str:
    text = re.sub(r"\s+", " ", (ROOT / "README.md").read_text())
    found = re.search(re.escape(start) + r".*?\. ", text)
    assert found, f"README.md no longer says {start!r}"
    return found.group(0)


def _is_given(decorator: ast.expr) -> bool:
    call = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(call, ast.Name) and call.id == "given") or (
        isinstance(call, ast.Attribute) and call.attr == "given"
    )


def property_tests() -> dict[str, ast.FunctionDef]:
    """Every ``@given`` test in ``tests/``, as ``module::name``, found in the source."""
    found = {}
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(map(_is_given, node.decorator_list)):
                found[f"{path.relative_to(TESTS).with_suffix('')}::{node.name}"] = node
    return found


def _fixed_counts(path: Path) -> list[str]:
    """``max_examples=`` arguments in ``path`` that are not ``examples(n)`` calls."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.keyword) and node.arg == "max_examples":
            value = node.value
            if not (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "examples"
            ):
                bad.append(f"{path.name}:{node.lineno}: max_examples={ast.unparse(value)}")
    return bad


_COUNTS = """
import json, sys
sys.path[:0] = [{tests!r}]
import importlib, conftest
from hypothesis import settings
counts = {{}}
for test in {tests_ids!r}:
    module, name = test.split("::")
    fn = getattr(importlib.import_module(module.replace("/", ".")), name)
    own = getattr(fn, "_hypothesis_internal_use_settings", None)
    counts[test] = (own or settings.default).max_examples
print(json.dumps(counts))
"""


def _counts_under(profile: str, tests: list[str]) -> dict[str, int]:
    """Each property test's examples under a Hypothesis profile (its modules imported afresh)."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": profile}
    env.pop("CI", None)
    code = _COUNTS.format(tests=str(TESTS), tests_ids=tests)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    counts: dict[str, int] = json.loads(done.stdout.splitlines()[-1])
    return counts


def test_every_property_test_draws_what_the_readme_says_under_each_profile() -> None:
    """The README: 300 examples, or the fewer a test asks ``examples(n)`` for (the range it
    gives), and ten times as many under ``thorough``, in every ``@given`` test of ``tests/``."""
    sentence = _readme_sentence("A property test draws")
    default = int(re.search(r"draws (\d+) examples", sentence).group(1))  # type: ignore[union-attr]
    low, high = map(int, re.search(r"\((\d+) to (\d+),", sentence).groups())  # type: ignore[union-attr]
    assert "ten times as many in every property test" in sentence
    tests = property_tests()
    assert len(tests) >= 20, sorted(tests)
    helpers = [p for p in sorted(TESTS.rglob("*.py")) if p.name != "conftest.py"]  # the profiles
    fixed = [bad for path in helpers for bad in _fixed_counts(path)]
    assert not fixed, "a property test's count that does not scale with the profile:\n" + "\n".join(
        fixed
    )
    under_default = _counts_under("default", list(tests))
    under_thorough = _counts_under("thorough", list(tests))
    for test, count in under_default.items():
        assert count == default or low <= count <= high, (test, count)
        assert under_thorough[test] == 10 * count, (test, count, under_thorough[test])
    asked = [c for c in under_default.values() if c != default]
    assert (min(asked), max(asked)) == (low, high), "the README's range is not the tests' range"


# -- every in-place method of torch.Tensor: which ones count, and which go through ------------

_S = (3, 4)


def _arguments(dtype: torch.dtype) -> dict[str, Callable[[], tuple[Any, ...]]]:
    """The argument lists tried, in order, on each in-place method of a (3, 4) tensor."""
    idx = torch.tensor([0, 2])
    like = lambda: torch.ones(_S, dtype=dtype)
    return {
        "none": lambda: (),
        "number": lambda: (0.5,) if dtype.is_floating_point else (2,),
        "tensor": lambda: (like(),),
        "dim": lambda: (0,),
        "two tensors": lambda: (like(), like()),
        "dim, index, source": lambda: (0, idx, torch.ones(2, 4, dtype=dtype)),
        "dim, index, number": lambda: (0, idx, 1),
        "indices, values": lambda: ((idx,), torch.ones(2, 4, dtype=dtype)),
        "mask, number": lambda: (torch.ones(_S, dtype=torch.bool), 1),
        "mask, source": lambda: (torch.ones(_S, dtype=torch.bool), like()),
        "dim, index tensor, source": lambda: (0, torch.zeros(_S, dtype=torch.long), like()),
        "scatter_reduce": lambda: (0, torch.zeros(_S, dtype=torch.long), like(), "sum"),
        "index_reduce": lambda: (0, idx, torch.ones(2, 4, dtype=dtype), "prod"),
        "put": lambda: (torch.tensor([0, 5]), torch.ones(2, dtype=dtype)),
        "function": lambda: (lambda v: v + 1,),
        "map": lambda: (like(), lambda a, b: a + b),
        "map2": lambda: (like(), like(), lambda a, b, c: a + b + c),
        "matrices": lambda: (torch.ones(3, 2, dtype=dtype), torch.ones(2, 4, dtype=dtype)),
        "batches": lambda: (torch.ones(2, 3, 2, dtype=dtype), torch.ones(2, 2, 4, dtype=dtype)),
        "vectors": lambda: (torch.ones(3, dtype=dtype), torch.ones(4, dtype=dtype)),
        "renorm": lambda: (2, 0, 1.0),
        "strides": lambda: ((6,), (1,)),
        "two dims": lambda: (0, 1),
        "multigammaln": lambda: (1,),
    }


#: In-place methods that take no strided (3, 4) tensor: the sparse ones, and two that
#: want another shape of ``self`` (``addmv_``: a vector; ``baddbmm_``: a batch).
_NOT_ON_A_MATRIX = {"resize_as_sparse_", "sparse_resize_", "sparse_resize_and_clear_"}
_OTHER_SELF = {
    "addmv_": ((3,), lambda d: (torch.ones(3, 2, dtype=d), torch.ones(2, dtype=d))),
    "baddbmm_": ((2, 3, 4), lambda d: (torch.ones(2, 3, 2, dtype=d), torch.ones(2, 2, 4, dtype=d))),
    "float_power_": (_S, lambda d: (2,)),  # float64 only: see _call_on
}


def in_place_methods() -> list[str]:
    """Every public in-place method of ``torch.Tensor`` (its name ends with ``_``)."""
    return [n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_")]


def _plain(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    if dtype.is_floating_point:
        return torch.rand(shape, dtype=dtype) + 0.5
    return torch.randint(1, 5, shape)


@functools.cache
def _call_on_a_plain_tensor(name: str) -> tuple[torch.dtype, tuple[int, ...], str]:
    """The dtype, shape of ``self`` and argument list with which ``name`` runs on a plain tensor."""
    dtypes = (torch.float64,) if name == "float_power_" else (torch.float32, torch.int64)
    for dtype in dtypes:
        if name in _OTHER_SELF:
            shape, _ = _OTHER_SELF[name]
            return dtype, shape, "other self"
        for key, args in _arguments(dtype).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    getattr(_plain(_S, dtype), name)(*args())
                except (RuntimeError, TypeError, ValueError, IndexError):
                    continue
            return dtype, _S, key
    raise AssertionError(f"no argument list fits {name}: add one to _arguments")


@dataclass(frozen=True)
class Outcome:
    """What an in-place method did to a tensor: refused, or wrote (or not) and counted (or not)."""

    refused: bool
    wrote: bool = False
    counted: bool = False


def _version(t: torch.Tensor) -> int | None:
    """``t._version``, or ``None`` for an inference tensor, which has no counter."""
    try:
        return t._version
    except RuntimeError:
        return None


def run_in_place(
    name: str, make: Callable[[tuple[int, ...], torch.dtype], torch.Tensor], through_view: bool
) -> Outcome:
    """Call ``name`` on ``make(shape, dtype)`` (or on a view of all of it): whether torch
    refused, wrote the memory, counted the write in the tensor's version counter."""
    dtype, shape, key = _call_on_a_plain_tensor(name)
    t = make(shape, dtype)
    args = _OTHER_SELF[name][1](dtype) if key == "other self" else _arguments(dtype)[key]()
    target = t[...] if through_view else t
    storage, version = t.untyped_storage(), _version(t)
    before = bytes(storage)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # index_put_ on an expanded tensor is deprecated
        try:
            getattr(target, name)(*args)
        except RuntimeError:
            return Outcome(refused=True)
    after = _version(t)
    counted = version is not None and after is not None and after > version
    return Outcome(refused=False, wrote=bytes(storage) != before, counted=counted)


def _page_text(path: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / path).read_text())


def _explain_why(slug: str) -> str:
    from inplace_recipes.error_reference import ERRORS

    (kind,) = [k for k in ERRORS if k.slug == slug]
    return kind.why


_ON_A_MATRIX = [n for n in in_place_methods() if n not in _NOT_ON_A_MATRIX]


def _inference(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    with torch.inference_mode():
        return _plain(shape, dtype)


def _expanded(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    return _plain((1, *shape[1:]), dtype).expand(shape)


#: The in-place methods that write a tensor's memory without counting it (version-counter.md,
#: errors.md): they run a Python function over the elements, outside torch's dispatcher.
UNCOUNTED = {"apply_", "map_", "map2_"}


def test_the_sparse_only_methods_refuse_a_strided_tensor() -> None:
    """The in-place methods the checks below leave out take no strided tensor at all."""
    sparse = {
        "resize_as_sparse_": (torch.zeros(_S).to_sparse(),),
        "sparse_resize_": (_S, 2, 0),
        "sparse_resize_and_clear_": (_S, 2, 0),
    }
    assert set(sparse) == _NOT_ON_A_MATRIX
    for name, args in sparse.items():
        with pytest.raises((RuntimeError, NotImplementedError)):  # NotImplementedError: no kernel
            getattr(torch.zeros(_S), name)(*args)
    assert len(_ON_A_MATRIX) > 150


@pytest.mark.parametrize("through_view", [False, True], ids=["tensor", "view"])
def test_every_in_place_write_moves_the_version_counter_but_apply_map_and_map2(
    through_view: bool,
) -> None:
    """version-counter.md and errors.md: each in-place write into a tensor (or a view of it)
    increments its counter; apply_, map_ and map2_ write without counting, and the pages say so."""
    wrote_uncounted = sorted(
        n
        for n in _ON_A_MATRIX
        if (o := run_in_place(n, lambda s, d: _plain(s, d), through_view)).wrote and not o.counted
    )
    assert wrote_uncounted == sorted(UNCOUNTED)
    for page in ("docs/concepts/version-counter.md", "docs/errors.md"):
        for name in UNCOUNTED:
            assert f"`{name}`" in _page_text(page), (page, name)


@pytest.mark.parametrize("through_view", [False, True], ids=["tensor", "view"])
def test_an_inference_tensor_takes_no_in_place_write_but_apply_map_and_map2(
    through_view: bool,
) -> None:
    """errors.md and explain(): outside inference_mode every in-place write into an inference
    tensor (or a view of it) raises, but for apply_, map_ and map2_, which both name."""
    wrote = sorted(n for n in _ON_A_MATRIX if run_in_place(n, _inference, through_view).wrote)
    assert wrote == sorted(UNCOUNTED)
    section = _page_text("docs/errors.md").split("## Inference tensors")[1].split("## ")[0]
    for name in UNCOUNTED:
        assert f"`{name}`" in section, name
        assert name in _explain_why("inference-tensor"), name


#: The in-place methods that write an expanded tensor (``zeros(1, 4).expand(3, 4)``) in
#: torch 2.13, as errors.md and explain() list them; every other in-place method refuses
#: it or leaves its memory as it was (``t_``, ``unsqueeze_``: shape and strides only).
EXPANDED_WRITES = {
    "fill_", "zero_", "fill_diagonal_", "masked_fill_", "index_fill_", "index_put_",
    "tril_", "triu_", "addmv_", "baddbmm_", "apply_", "map_", "map2_",
}  # fmt: skip


@pytest.mark.parametrize("through_view", [False, True], ids=["tensor", "view"])
def test_an_expanded_tensor_takes_exactly_the_writes_the_page_lists(through_view: bool) -> None:
    wrote = sorted(n for n in _ON_A_MATRIX if run_in_place(n, _expanded, through_view).wrote)
    assert wrote == sorted(EXPANDED_WRITES)
    section = _page_text("docs/errors.md").split("## In-place operation on an expanded")[1]
    listed = section.split("```")[0]
    for name in EXPANDED_WRITES:
        assert f"`{name}`" in listed, name
        assert name in _explain_why("expanded"), name


def _layouts() -> dict[str, Callable[[], torch.Tensor]]:
    dense = lambda: torch.rand(3, 4)
    return {
        "strided": dense,
        "a view": lambda: dense()[1:],
        "sparse_coo": lambda: dense().to_sparse(),
        "sparse_csr": lambda: dense().to_sparse_csr(),
        "sparse_csc": lambda: dense().to_sparse_csc(),
        "sparse_bsr": lambda: dense().to_sparse_bsr((1, 1)),
        "meta": lambda: torch.empty(3, device="meta"),
        "nested": lambda: torch.nested.nested_tensor([torch.rand(2), torch.rand(3)]),
        "made under no_grad": lambda: _under_no_grad(dense),
        "computed": lambda: torch.rand(3, requires_grad=True) * 2,
    }


def _under_no_grad(make: Callable[[], torch.Tensor]) -> torch.Tensor:
    with torch.no_grad():
        return make()


@pytest.mark.filterwarnings("ignore:.*(Sparse CSR|nested tensors).*:UserWarning")
@pytest.mark.parametrize("layout", list(_layouts()))
def test_every_tensor_made_outside_inference_mode_has_a_counter_and_none_made_inside(
    layout: str,
) -> None:
    """version-counter.md and errors.md: a tensor made outside inference mode carries a
    counter that an in-place write moves; the same tensor made inside has none at all."""
    made = _layouts()[layout]()
    version = made._version
    made.detach().mul_(2) if made.layout == torch.strided else made.mul_(2)
    assert made._version == version + 1
    with torch.inference_mode():
        inside = _layouts()[layout]()
    with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
        inside._version  # noqa: B018 - the read is the check
