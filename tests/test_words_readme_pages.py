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
import inspect
import json
import os
import re
import subprocess
import sys
import typing
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import inplace_recipes as ir
from docs_modules import import_docs_module

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
pytest_plugins = ["pytester"]


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
    """``max_examples=`` arguments of a test's ``@settings`` (in its decorators, or in a
    module-level settings object) in ``path`` that are not ``examples(n)`` calls."""
    tree = ast.parse(path.read_text())
    places: list[ast.AST] = [
        d
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef)
        for d in node.decorator_list
    ]
    places += [n.value for n in tree.body if isinstance(n, ast.Assign)]
    bad = []
    for place in places:
        for node in ast.walk(place):
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
    t = torch.zeros(3)
    with torch.autograd._unsafe_preserve_version_counter(t):
        t.add_(1)  # counted, then put back
    assert t._version == 0
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


# -- leaf-tensors.md: what a leaf's results are ------------------------------------------------


def _no_argument_results(a: torch.Tensor) -> Iterator[tuple[str, torch.Tensor]]:
    """Every tensor that a public ``torch.Tensor`` method or property taking no argument
    returns for ``a`` (in-place methods left out)."""
    for name in dir(torch.Tensor):
        if name.startswith("_") or name.endswith("_") or name in ("grad", "data"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got = getattr(a, name)
                got = got() if callable(got) else got
            except Exception:  # noqa: BLE001, S112 - a method that needs arguments: not this set
                continue
        for out in got if isinstance(got, tuple | list) else [got]:
            if isinstance(out, torch.Tensor) and out is not a:
                yield name, out


@pytest.mark.parametrize("dtype", [torch.float64, torch.complex128])
def test_a_result_of_a_leaf_is_a_non_leaf_unless_its_op_has_no_derivative(
    dtype: torch.dtype,
) -> None:
    """leaf-tensors.md, over every no-argument method of torch.Tensor: a result computed from
    a leaf that requires grad has a grad_fn, unless it does not require grad (an integer or
    boolean result, ``histc``, ``detach()``): then it is a leaf; under no_grad every one is."""
    a = torch.rand(3, 3, dtype=dtype, requires_grad=True)
    results = list(_no_argument_results(a))
    assert len(results) > 100
    no_derivative = set()
    for name, out in results:
        if out.requires_grad:
            assert not out.is_leaf, name
            assert out.grad_fn is not None, name
        else:
            assert out.is_leaf, name
            assert out.grad_fn is None, name
            no_derivative.add(name)
    assert {"isnan", "detach"} <= no_derivative
    if dtype == torch.float64:
        assert {"argmax", "histc"} <= no_derivative
    with torch.no_grad():
        assert all(out.is_leaf for _, out in _no_argument_results(a))
    assert all(out.is_leaf for _, out in _no_argument_results(torch.rand(3, 3, dtype=dtype)))


# -- errors.md: a custom Function that marks an input dirty -----------------------------------


def _dirty_function(returns: Callable[[torch.Tensor], Any]) -> type[torch.autograd.Function]:
    class Doubles(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return returns(x)

        @staticmethod
        def backward(ctx: Any, *grads: torch.Tensor) -> torch.Tensor:
            return grads[0] * 2

    return Doubles


#: What forward may return, and whether x itself is among it / x alone.
DIRTY_RETURNS: dict[str, tuple[Callable[[torch.Tensor], Any], bool, bool]] = {
    "x": (lambda x: x, True, True),
    "(x,)": (lambda x: (x,), True, True),
    "x.view_as(x)": (lambda x: x.view_as(x), False, False),
    "x.clone()": (lambda x: x.clone(), False, False),
    "(x, x * 1)": (lambda x: (x, x * 1), True, False),
    "(x * 1, x)": (lambda x: (x * 1, x), True, False),
    "(x, x)": (lambda x: (x, x), True, False),
    "(x, 3)": (lambda x: (x, 3), True, False),
    "(x, None)": (lambda x: (x, None), True, False),
}


@pytest.mark.parametrize("view", [False, True], ids=["a tensor", "a view"])
@pytest.mark.parametrize("returned", list(DIRTY_RETURNS))
def test_mark_dirty_needs_x_among_the_outputs_and_alone_when_it_is_a_view(
    returned: str, view: bool
) -> None:
    """errors.md and explain(): autograd needs x itself among the outputs, and, when x is a
    view, x as the only output; over each form of what forward returns."""
    returns, among, alone = DIRTY_RETURNS[returned]
    base = torch.rand(4, requires_grad=True) * 1
    x = base[:2] if view else base
    works = alone if view else among
    if works:
        _dirty_function(returns).apply(x)
        return
    with pytest.raises(RuntimeError, match=r"marked as dirty|cannot return more than one Tensor"):
        _dirty_function(returns).apply(x)


# -- errors.md: in-place writes under a grad transform ----------------------------------------

_CAPTURED = torch.zeros(3)

#: Where the function writes, under grad/vjp/jvp: (the write, refused with which error or None)
TRANSFORM_WRITES: dict[str, tuple[Callable[[torch.Tensor], object], dict[str, str | None]]] = {
    "a captured tensor, a constant": (
        lambda x: _CAPTURED.add_(1),
        dict.fromkeys(("grad", "vjp", "jvp"), "mutate a captured Tensor"),
    ),
    "a captured tensor, the input": (
        lambda x: _CAPTURED.add_(x),
        dict.fromkeys(("grad", "vjp", "jvp"), "mutate a captured Tensor"),
    ),
    "a tensor it made": (lambda x: torch.zeros(3).add_(x), dict.fromkeys(("grad", "vjp", "jvp"))),
    "a tensor it computed": (lambda x: (x * 1).add_(1), dict.fromkeys(("grad", "vjp", "jvp"))),
    "its input": (
        lambda x: x.add_(1),
        {"grad": "a leaf Variable that requires grad", "vjp": "a leaf Variable", "jvp": None},
    ),
}
_TRANSFORMS: dict[str, Callable[[Callable[[torch.Tensor], torch.Tensor]], object]] = {
    "grad": lambda f: torch.func.grad(f)(torch.ones(3)),
    "vjp": lambda f: torch.func.vjp(f, torch.ones(3)),
    "jvp": lambda f: torch.func.jvp(f, (torch.ones(3),), (torch.ones(3),)),
}


@pytest.mark.parametrize("transform", list(_TRANSFORMS))
@pytest.mark.parametrize("where", list(TRANSFORM_WRITES))
def test_under_a_grad_transform_a_captured_tensor_refuses_a_write(
    where: str, transform: str
) -> None:
    write, refused = TRANSFORM_WRITES[where]

    def f(x: torch.Tensor) -> torch.Tensor:
        write(x)
        return (x * 1).sum()

    message = refused[transform]
    if message is None:
        _TRANSFORMS[transform](f)
        return
    with pytest.raises(RuntimeError, match=message):
        _TRANSFORMS[transform](f)


# -- errors.md: a full backward hook on every module ------------------------------------------


def _relu_model() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(3, 3), torch.nn.ReLU(inplace=True), torch.nn.Linear(3, 1)
    )


def test_model_apply_hooks_every_module_and_an_in_place_relu_then_fails() -> None:
    """errors.md: a hook on every module (model.apply) puts one on ReLU(inplace=True),
    whose write then fails; the same model without hooks runs."""
    model = _relu_model()
    model.apply(lambda m: m.register_full_backward_hook(lambda *grads: None))
    assert all(m._backward_hooks for m in model.modules())
    with pytest.raises(RuntimeError, match="Output 0 of BackwardHookFunction is a view"):
        model(torch.ones(2, 3, requires_grad=True))
    _relu_model()(torch.ones(2, 3, requires_grad=True)).sum().backward()


# -- index.md: which recipe best_recipe picks, and what the recipes take ----------------------


def _write_kind_cases() -> list[tuple[str, Any, Any]]:
    from test_recommend import CASES

    return CASES


@pytest.mark.parametrize("case", _write_kind_cases(), ids=lambda c: c[0])
def test_under_a_transform_best_recipe_puts_index_put_in_clones_place(
    case: tuple[str, Any, Any],
) -> None:
    """index.md: inside torch.func.vmap, best_recipe picks what it picks outside, with
    index_put where that does not work under transforms (clone + setitem); the pick then
    writes what a loop of clone + setitem writes. Over each write kind's cases."""
    from inplace_recipes._pick import PREFERENCES, write_kind
    from inplace_recipes.recipes import RECORDS

    label, index, value = case
    x = torch.rand(4, 5)
    value = value.detach() if isinstance(value, torch.Tensor) else value
    outside = ir.best_recipe(x, index, value)
    picked: list[str] = []

    def write(xb: torch.Tensor, vb: Any) -> torch.Tensor:
        picked.append(ir.best_recipe(xb, index, vb))
        return ir.RECIPES[picked[-1]](xb, index, vb)

    def reference(xb: torch.Tensor, vb: Any) -> torch.Tensor:
        y = xb.clone()
        y[index] = vb
        return y

    if isinstance(value, torch.Tensor) and value.numel() > 1:  # a batched value
        values = torch.stack([value + b for b in range(3)])
        got = torch.func.vmap(write, in_dims=(None, 0))(x, values)
        want = torch.stack([reference(x, v) for v in values])
    else:  # a batched x
        xs = torch.stack([x + b for b in range(3)])
        got = torch.func.vmap(write, in_dims=(0, None))(xs, value)
        want = torch.stack([reference(xb, value) for xb in xs])
    expected = outside if RECORDS[outside].under_transforms else "index_put"
    assert set(picked) == {expected}, (label, outside, picked)
    torch.testing.assert_close(got, want)
    assert write_kind(x, index) in PREFERENCES


def test_the_cases_cover_every_write_kind() -> None:
    from inplace_recipes._pick import PREFERENCES, write_kind

    x = torch.rand(4, 5)
    kinds = {write_kind(x, index) for _, index, _ in _write_kind_cases()}
    kinds |= {"value_grad"}  # write_kind reads the index; a value that requires grad makes it
    assert kinds == set(PREFERENCES)


def test_index_put_scatter_and_setitem_keep_one_duplicate_write_and_give_every_value_a_gradient() -> (
    None
):
    """index.md: with an index tensor that repeats a position, index_put, scatter (the recipes
    whose duplicates follow the kernel's order) and torch's setitem keep one of the values,
    yet every value gets a gradient."""
    from inplace_recipes.recipes import RECORDS

    kernel_order = {n for n, r in RECORDS.items() if r.duplicates == "kernel order"}
    assert kernel_order == {"index_put", "scatter"}

    def setitem(x: torch.Tensor, index: Any, value: Any) -> torch.Tensor:
        y = x.clone()
        y[index] = value
        return y

    writers = {**{n: ir.RECIPES[n] for n in kernel_order}, "setitem": setitem}
    for name, writer in writers.items():
        x = torch.zeros(4, requires_grad=True)
        value = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = writer(x, torch.tensor([1, 1, 1]), value)
        assert out[1].item() in value.tolist(), name  # one of the writes
        assert out.sum().item() == out[1].item(), name
        (out * torch.arange(1.0, 5.0)).sum().backward()
        assert value.grad is not None, name
        assert bool((value.grad != 0).all()), (name, value.grad)


#: One index of each kind the README lists, and what select_scatter does with it.
INDEX_FORMS: dict[str, tuple[Any, bool]] = {
    "an int": (1, True),
    "a slice": (slice(1, 3), True),
    "...": ((..., 0), True),
    "None": ((None, 0), True),
    "a mask": (torch.tensor([True, False, True, False]), False),
    "an index tensor": (torch.tensor([0, 2]), False),
    "a list": ([0, 2], False),
    "a NumPy array": (np.array([0, 2]), False),
    "a Python bool": (True, False),
}


@pytest.mark.parametrize("form", list(INDEX_FORMS))
def test_select_scatter_takes_only_ints_slices_ellipsis_and_none(form: str) -> None:
    """index.md: select_scatter takes only ints, slices, ``...`` and None (its record's
    basic indices), and masked_fill writes one value: each recipe's record says the same."""
    from inplace_recipes import NotApplicable
    from inplace_recipes.recipes import RECORDS

    index, takes = INDEX_FORMS[form]
    x = torch.zeros(4, 3)
    if takes:
        ir.RECIPES["select_scatter"](x, index, 1.0)
    else:
        with pytest.raises(
            NotApplicable, match=re.escape("takes only ints, slices, '...' and None")
        ):
            ir.RECIPES["select_scatter"](x, index, 1.0)
    assert RECORDS["select_scatter"].index_kinds == {"basic"}
    assert [n for n, r in RECORDS.items() if r.single_value] == ["masked_fill"]


# -- the pages' examples are doctests -----------------------------------------------------------

_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|:{3,})[ \t]*(\{[\w-]+\}|[\w-]*)", re.MULTILINE)
#: The fences a page may open: the doctest builder's, and the ones that show no example.
_FENCES_WITHOUT_EXAMPLES = {"{include}", "{toctree}", "{error-answer}", "{container}", ""}


def _markdown_pages() -> list[Path]:
    pages = [ROOT / "docs" / "index.md", *sorted((ROOT / "docs").glob("*.md"))]
    return sorted(set(pages) | set((ROOT / "docs" / "concepts").glob("*.md")))


@pytest.mark.parametrize("page", _markdown_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_on_the_markdown_pages_is_a_doctest(page: Path) -> None:
    """concepts/index.md, the README: each example on a page is run by Sphinx's doctest
    builder. Every fenced block is a ``{doctest}`` (or shows no example), no plain ``>>>``
    paragraph is left outside one, and conf.py tests plain ``>>>`` blocks too."""
    text = page.read_text()
    opened = [m.group(2) for m in _FENCE_OPEN.finditer(text)]
    odd = [f for f in opened if f not in {"{doctest}", *_FENCES_WITHOUT_EXAMPLES}]
    assert not odd, f"{page.name}: fences that the doctest builder does not run: {odd}"
    assert re.search(r"^\s{4,}>>>", text, re.MULTILINE) is None, "an indented, untested example"
    conf = (ROOT / "docs" / "conf.py").read_text()
    assert 'doctest_test_doctest_blocks = "default"' in conf
    assert '"sphinx.ext.doctest"' in conf


def _api_docstrings() -> Iterator[tuple[str, str]]:
    """The docstrings the API page renders: each public module's, and its ``__all__`` names'
    (a class's methods too)."""
    import importlib

    api_modules = import_docs_module("api_modules")
    for module_name in ("inplace_recipes", *(f"inplace_recipes.{m}" for m in api_modules.MODULES)):
        module = importlib.import_module(module_name)
        yield module_name, module.__doc__ or ""
        for attr in getattr(module, "__all__", ()):
            obj = getattr(module, attr)
            yield f"{module_name}.{attr}", getattr(obj, "__doc__", None) or ""
            if isinstance(obj, type):
                for member, value in vars(obj).items():
                    if not member.startswith("_") and getattr(value, "__doc__", None):
                        yield f"{module_name}.{attr}.{member}", value.__doc__


def _untested_examples(doc: str) -> list[str]:
    """``>>>`` lines that a doctest builder skips: inside a ``::`` literal block or a code
    directive, where reST shows them as text."""
    lines = inspect.cleandoc(doc).splitlines()
    skipped, literal_indent = [], None
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if literal_indent is not None and line.strip() and indent <= literal_indent:
            literal_indent = None
        if line.rstrip().endswith("::") or ".. code-block::" in line or ".. code::" in line:
            literal_indent = indent
        elif literal_indent is not None and line.lstrip().startswith(">>>"):
            skipped.append(f"line {i + 1}: {line.strip()}")
    return skipped


def test_every_example_on_the_api_page_is_a_doctest_block() -> None:
    """api.md: every example below (the docstrings autodoc renders) is a doctest block, which
    conf.py's ``doctest_test_doctest_blocks`` makes the doctest builder run."""
    docs = list(_api_docstrings())
    assert sum(">>>" in d for _, d in docs) >= 30
    skipped = {name: bad for name, d in docs if (bad := _untested_examples(d))}
    assert not skipped, skipped
    literal = "Add.\n\n    Example::\n\n        >>> 1 + 1\n        2\n"
    assert _untested_examples(literal) == ["line 5: >>> 1 + 1"]


# -- README: the package, its measurements, its indices ---------------------------------------


def test_the_readme_names_every_recipe_and_clone_takes_every_kind_of_index() -> None:
    """README: the package's list of alternatives names each recipe; clone + setitem takes
    every kind of index (its record, and torch's setitem over each form the README lists)."""
    from inplace_recipes._index_reading import Kind
    from inplace_recipes.recipes import RECORDS

    sentence = _readme_sentence("- **`inplace_recipes`**, a small package of")
    listed = sentence.split("`x[index] = value` (")[1].split(";")[0].split(", ")
    labels = {
        "mask": "mask blend",
        "where": "`torch.where`",
        "clone": "clone + setitem",
        "scatter": "scatter",
    }
    assert sorted(listed) == sorted(labels.get(n, f"`{n}`") for n in ir.RECIPES)
    assert RECORDS["clone"].index_kinds == set(typing.get_args(Kind))
    for form, (index, _) in INDEX_FORMS.items():
        x = torch.zeros(4, 3)
        want = x.clone()
        want[index] = 1.0
        assert torch.equal(ir.RECIPES["clone"](x, index, 1.0), want), form


def test_the_committed_run_times_every_recipe_forward_and_backward(
    bench_results: dict[str, Any],
) -> None:
    """README: the measurements hold forward and backward time of every recipe against the
    in-place write, eager and under torch.compile, with the bytes saved for backward."""
    timed = {
        (r["entry"], r["mode"])
        for r in bench_results["records"]
        if r["applicable"]
        and r["forward"]
        and r["forward_backward"]
        and r["ratio_forward_backward"]
        and r["saved_bytes"] is not None
    }
    for name in [*ir.RECIPES, "inplace"]:
        for mode in ("eager", "compile"):
            assert (name, mode) in timed, (name, mode)


def _parts(index: Any) -> list[Any]:
    return list(index) if isinstance(index, tuple) else [index]


def _is_advanced(part: Any) -> bool:
    return isinstance(part, torch.Tensor | np.ndarray | list)


#: The README's kinds of index ("ints, slices, ..., None, masks, index tensors, (nested) lists,
#: NumPy arrays and all of them mixed"), as tests over a drawn index's parts.
README_INDEX_KINDS: dict[str, Callable[[Any], bool]] = {
    "ints": lambda i: any(
        isinstance(p, int | np.integer) and not isinstance(p, bool) for p in _parts(i)
    ),
    "slices": lambda i: any(isinstance(p, slice) for p in _parts(i)),
    "...": lambda i: any(p is Ellipsis for p in _parts(i)),
    "None": lambda i: any(p is None for p in _parts(i)),
    "masks": lambda i: any(
        isinstance(p, torch.Tensor) and p.dtype == torch.bool for p in _parts(i)
    ),
    "index tensors": lambda i: any(
        isinstance(p, torch.Tensor) and p.dtype != torch.bool for p in _parts(i)
    ),
    "nested lists": lambda i: any(
        isinstance(p, list) and any(isinstance(q, list) for q in p) for p in _parts(i)
    ),
    "NumPy arrays": lambda i: any(isinstance(p, np.ndarray) for p in _parts(i)),
    "mixed": lambda i: (
        isinstance(i, tuple)
        and any(map(_is_advanced, i))
        and any(isinstance(p, slice | int) for p in i)
    ),
}


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize("kind", list(README_INDEX_KINDS))
def test_the_property_tests_draw_every_kind_of_index_the_readme_lists(kind: str) -> None:
    """README ("Indices mean what torch's setitem makes of them: ... and all of them mixed"):
    the strategy that the property tests of every recipe and at() draw from
    (tests/test_recipes.py, tests/test_setitem_corners.py) draws each kind."""
    from hypothesis import Phase, find
    from hypothesis import settings as hypothesis_settings

    from strategies import cases

    predicate = README_INDEX_KINDS[kind]
    found = find(
        cases(torch_forms=True, duplicates=True),
        lambda case: predicate(case.index),
        settings=hypothesis_settings(
            max_examples=5000, database=None, deadline=None, phases=[Phase.generate]
        ),
    )
    assert predicate(found.index)
    readme = _readme_sentence("Indices mean what torch's setitem makes of them")
    assert kind.split()[-1].strip(".") in readme, kind


# -- README: the audit ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(UNCOUNTED))
def test_the_audit_does_not_see_apply_map_or_map2(name: str) -> None:
    """README: the audit does not see apply_, map_ and map2_ (no dispatch, no version count):
    each write on sigmoid's saved output changes backward's answer, and the audit reports no
    harmful write. When the audit learns to see them, take them off the README."""
    from inplace_recipes import audit
    from inplace_recipes.auditing._records import HARMFUL

    writes = {
        "apply_": lambda h: h.detach().apply_(lambda v: 0.5),
        "map_": lambda h: h.detach().map_(torch.zeros(3), lambda a, b: 0.5),
        "map2_": lambda h: h.detach().map2_(torch.zeros(3), torch.zeros(3), lambda a, b, c: 0.5),
    }
    assert set(writes) == UNCOUNTED
    x = torch.linspace(-1, 1, 3).requires_grad_()
    with audit() as report:
        h = x.sigmoid()
        writes[name](h)
        h.sum().backward()
    s = torch.sigmoid(x.detach())
    assert not torch.allclose(x.grad, s * (1 - s)), "backward used the new values"
    assert [r for r in report.to_records() if r["consequence"] in HARMFUL] == [], report
    assert f"`{name}`" in _readme_sentence("`print(ir.compare_gradients(x, 0, 42.0))`")


_SCRIPTS_UNDER_THOROUGH = """
import json, sys
sys.path[:0] = [{tests!r}]
import conftest, test_audit_unchanged as t
marks = t.test_gallery_scripts_run_as_without_the_audit.pytestmark
(paths,) = [m.args[1] for m in marks if m.name == "parametrize"]
print(json.dumps({{"run": sorted(p.name for p in paths), "all": sorted(p.name for p in t.SCRIPTS),
                  "compiling": sorted(t.COMPILING)}}))
"""


def test_under_thorough_the_audit_runs_every_script_but_those_that_show_compile() -> None:
    """README: the tests compare every gallery script but the three that show what
    torch.compile does with and without the audit under HYPOTHESIS_PROFILE=thorough (a sample
    by default); each of the three runs torch.compile'd code."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "thorough"}
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPTS_UNDER_THOROUGH.format(tests=str(TESTS))],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["run"] == sorted(set(got["all"]) - set(got["compiling"]))
    assert len(got["compiling"]) == 3  # the README's "the three"
    for name in got["compiling"]:
        (path,) = (ROOT / "recipes").rglob(name)
        assert "torch.compile(" in path.read_text(), name
    sentence = _readme_sentence("The audit does not change the program it watches")
    assert "every one under `HYPOTHESIS_PROFILE=thorough`" in sentence
    assert "scripts but the three that show what `torch.compile` does" in sentence


def test_fixtures_are_not_audited(pytester: pytest.Pytester) -> None:
    """README: only the test's own call is audited, not its fixtures: a harmful write in a
    fixture passes under --inplace-audit, the same write in the test's body fails."""
    pytester.makepyfile(
        test_fixture_write="""
        import pytest, torch

        def _harm():
            x = torch.ones(3, requires_grad=True)
            h = torch.sigmoid(x)
            h.data.mul_(2)
            h.sum().backward()

        @pytest.fixture
        def harmed():
            _harm()

        def test_in_the_fixture(harmed):
            pass

        def test_in_the_body():
            _harm()
        """
    )
    result = pytester.runpytest_subprocess("-p", "inplace_recipes.pytest_plugin", "--inplace-audit")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*wrong gradients*", "FAILED *::test_in_the_body*"])
    assert "Only the test's own call is audited, not its fixtures." in _page_text("README.md")


# -- README: nox, the site's two editions, the committed runs, the wheel -----------------------


def _nox_sessions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("nox.session" in ast.unparse(d) for d in node.decorator_list)
    }


def _calls(node: ast.AST) -> set[str]:
    return {ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)}


def test_every_nox_session_but_build_and_releases_installs_the_pin() -> None:
    """README: the pin dependency group is what every nox session installs, but ``build``
    (the wheel beside another torch) and ``releases`` (one environment per release)."""
    sessions = _nox_sessions()
    assert len(sessions) >= 10
    (install,) = [
        n for n in ast.parse((ROOT / "noxfile.py").read_text()).body
        if isinstance(n, ast.FunctionDef) and n.name == "install"
    ]  # fmt: skip
    assert "('pin', *groups)" in ast.unparse(install)  # install() puts the pin group first
    without = sorted(name for name, node in sessions.items() if "install" not in _calls(node))
    assert without == ["build", "releases"]
    sentence = _readme_sentence("The site, its doctests and the tests are verified")
    assert all(f"`{name}`" in sentence for name in without)


def test_every_page_links_to_its_twin_in_the_other_language() -> None:
    """README: every page of both editions carries the language switch, and it links to the
    same page (its ``pagename``) in the other edition."""
    conf = ast.parse((ROOT / "docs" / "conf.py").read_text())
    (sidebars,) = [
        ast.literal_eval(n.value)
        for n in conf.body
        if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "html_sidebars"
    ]
    assert list(sidebars) == ["**"]  # one sidebar for every page
    assert "sidebar/lang-switch.html" in sidebars["**"]
    switch = (ROOT / "docs" / "_templates" / "sidebar" / "lang-switch.html").read_text()
    links = re.findall(r'href="([^"]+)"', switch)
    assert links == [
        "{{ root }}../{{ pagename }}{{ file_suffix }}",
        "{{ root }}zh_CN/{{ pagename }}{{ file_suffix }}",
    ]


def _runs(data: Any) -> Iterator[dict[str, Any]]:
    """The runs of a committed file: each object that carries a ``provenance``."""
    if isinstance(data, dict):
        if "provenance" in data:
            yield data
        else:
            for value in data.values():
                yield from _runs(value)


#: What the README says a run's provenance holds, and the keys that hold it.
PROVENANCE = {
    "versions": ("torch",),
    "date": ("date",),
    "commit": ("git_commit",),
    "machine": ("platform",),
    "the exact command": ("command",),
    "how long it took": ("seconds",),
}


def test_every_committed_run_is_a_json_file_with_its_provenance() -> None:
    """README: every run the pages and tests read is a JSON file under docs/measurements/,
    with its provenance inside it; the modules that read them look nowhere else."""
    files = sorted((ROOT / "docs" / "measurements").rglob("*.json"))
    assert len(files) >= 5
    for path in files:
        runs = list(_runs(json.loads(path.read_text())))
        assert runs, f"{path.name} holds no run with a provenance"
        for run in runs:
            for what, keys in PROVENANCE.items():
                assert all(run["provenance"].get(k) for k in keys), (path.name, what)
    sentence = _readme_sentence("Every run the pages and tests read is a JSON file")
    assert all(what in sentence for what in PROVENANCE)
    for reader in ("committed.py", "peers.py", "releases.py"):
        source = (ROOT / "docs" / reader).read_text()
        assert "MEASUREMENTS" in source or "measurements" in source, reader


_OPENED = """
import importlib, pkgutil, sys
opened = []
sys.addaudithook(lambda event, args: event == "open" and opened.append(str(args[0])))
import torch, inplace_recipes as ir
for module in pkgutil.walk_packages(ir.__path__, "inplace_recipes."):
    importlib.import_module(module.name)
x = torch.zeros(4, 4, requires_grad=True)
for index in [(1, 2), 1, (slice(None), 1), x.detach() > 0, torch.tensor([0, 2])]:
    name = ir.best_recipe(x, index, 0.0)
    ir.RECIPES[name](x, index, 0.0)
    ir.at(x)[index].set(1.0)
print("\\n".join(opened))
"""


def test_the_installed_package_reads_no_committed_run() -> None:
    """README: none of the committed runs is in the wheel, and the package needs none: the
    wheel holds src/inplace_recipes only, no data file, and importing every module of the
    package and picking and running recipes opens nothing under docs/ or tests/."""
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(
        r'\[tool\.hatch\.build\.targets\.wheel\]\npackages = \["src/inplace_recipes"\]', pyproject
    )
    package = ROOT / "src" / "inplace_recipes"
    assert not [p for p in package.rglob("*") if p.suffix in (".json", ".csv", ".npz", ".pt")]
    done = subprocess.run(
        [sys.executable, "-c", _OPENED], capture_output=True, text=True, check=True, cwd=TESTS
    )
    outside = [
        p for p in done.stdout.splitlines() if p.startswith((str(ROOT / "docs"), str(TESTS)))
    ]
    assert outside == []
    assert "docs/measurements" not in "".join(done.stdout.splitlines())


def test_compare_gradients_checks_every_other_recipe_against_clone() -> None:
    """clone-and-detach.md: writing into the clone is the reference recipe every other recipe
    is checked against: compare_gradients' default reference is ``clone``, and it checks each
    recipe of RECIPES against it."""
    signature = inspect.signature(ir.compare_gradients)
    assert signature.parameters["reference"].default == "clone"
    x = torch.rand(3, requires_grad=True) * 1
    report = ir.compare_gradients(x, 0, 42.0)
    assert report.reference == "clone"
    assert list(report.results) == list(ir.RECIPES)


# -- index.md: the views setitem refuses, over more kinds of view -----------------------------


def _more_views() -> dict[str, tuple[Callable[[], torch.Tensor], str | None]]:
    """Views that tests/test_setitem_on_views.py does not take, and the page's words for the
    ones setitem refuses (``split`` with a list of sizes is ``split_with_sizes``)."""
    leaf = lambda: torch.rand(4, 4, requires_grad=True) * 1
    complex_leaf = lambda: torch.rand(4, dtype=torch.complex64, requires_grad=True) * 1
    return {
        "unsqueeze": (lambda: leaf().unsqueeze(0), None),
        "squeeze": (lambda: leaf()[None].squeeze(0), None),
        "permute": (lambda: leaf().permute(1, 0), None),
        "movedim": (lambda: leaf().movedim(0, 1), None),
        "swapaxes": (lambda: leaf().swapaxes(0, 1), None),
        "unflatten": (lambda: leaf().unflatten(1, (2, 2)), None),
        "flatten": (lambda: leaf().flatten(), None),
        "reshape": (lambda: leaf().reshape(16), None),
        "mT": (lambda: leaf().mT, None),
        "imag": (lambda: complex_leaf().imag, None),
        "view_as_complex": (lambda: torch.view_as_complex(leaf()[:, :2].contiguous()), None),
        "alias": (lambda: torch.ops.aten.alias(leaf()), None),
        "hsplit": (lambda: leaf().hsplit(2)[0], None),
        "vsplit": (lambda: leaf().vsplit(2)[0], None),
        "unsafe_split": (lambda: leaf().unsafe_split(2)[0], None),
        "unsafe_chunk": (lambda: leaf().unsafe_chunk(2)[0], None),
        "split with sizes": (lambda: leaf().split([2, 2])[0], "an output of split"),
        "split_with_sizes": (lambda: leaf().split_with_sizes([2, 2])[0], "an output of split"),
    }


@pytest.mark.parametrize("index", ["v[0]", "v[:]", "v[tensor([0])]"])
@pytest.mark.parametrize("name", list(_more_views()))
def test_setitem_refuses_only_the_views_the_landing_page_lists_over_more_kinds(
    name: str, index: str
) -> None:
    from test_setitem_on_views import INDICES, VIEWS, _refuses

    assert not set(_more_views()) & set(VIEWS)
    make, listed = _more_views()[name]
    assert _refuses(make, INDICES[index]) is (listed is not None), (name, index)
    if listed is not None:
        assert "an output of `split`, `chunk` or `unbind`" in _page_text("docs/index.md")
