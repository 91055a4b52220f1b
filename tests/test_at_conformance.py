"""The peers' ``at[]`` tests, run through ``inplace_recipes.at``.

Upstream (the cases themselves are data in ``tests/at_cases.py``):

- jax-ml/jax ``tests/lax_numpy_indexing_test.py`` at
  cec06d116c05f0d52adfceee3d3b730fdbcb0ce5, ``IndexedUpdateTest`` (static,
  advanced and mixed indexing, out-of-bounds modes, duplicates, gradients)
  and the batching bug tests ``testIndexApplyBatchingBug``,
  ``testIndexUpdateScalarBug``, ``testGradOfVmapOfScatter`` (below, as code);
- data-apis/array-api-extra ``tests/main/test_at.py`` at
  693b257ed3903045fcd5f5fc0cb8d0f07f783581.

Values are checked against NumPy's answer (``ufunc.at``, setitem). For float
cases the gradients to ``x`` and to the values are checked against plain
torch on the positions ``x[index]`` selects (``torch.arange(n).view(shape)
[index]``), applying the updates one by one; with a ``mode``, against
``torch.autograd.gradcheck``.

Cases that are not run as upstream wrote them, and why:

- Negative slice steps (``TORCH_DIFFERS``, 270 cases): torch has none; the
  test asserts that ``at()`` raises torch's ``ValueError`` instead.
- Mixed basic and advanced indices where torch lays out ``x[index]``
  differently from NumPy (``(0, :, array)``): the values are rearranged to
  torch's layout by position before the call, and ``get`` is compared with
  plain torch's ``x[index]``.
- NumPy index arrays are passed as torch tensors (``torch.from_numpy``).
- array-api-extra's ``copy=``, ``xp=`` and device tests, and JAX's
  ``indices_are_sorted``/``unique_indices``/``wrap_negative_indices=False``
  flags, have no counterpart in ``at()`` (it always copies, is torch only and
  keeps ``x``'s device); they are not ported.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest
import torch

from at_cases import AT_CASES, TORCH_DIFFERS, AtCase
from inplace_recipes._at import at

_OPS = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "power": torch.pow,
    "min": torch.minimum,
    "max": torch.maximum,
}


def torch_index(index: Any) -> Any:
    if isinstance(index, tuple):
        return tuple(torch_index(i) for i in index)
    if isinstance(index, np.ndarray):
        return torch.from_numpy(index.copy())
    return index


def positions(shape: tuple[int, ...], index: Any) -> torch.Tensor:
    """Plain torch: the flat position of each element of ``x[index]``."""
    return torch.arange(int(np.prod(shape, dtype=np.int64))).view(shape)[index]


def torch_values(case: AtCase, index: Any) -> Any:
    """``case.values`` as torch takes them, rearranged to torch's layout of
    ``x[index]`` where it differs from NumPy's (the k-th update of a position
    stays its k-th)."""
    if not isinstance(case.values, np.ndarray):
        return case.values
    values = torch.from_numpy(case.values.copy())
    np_pos = np.arange(case.x.size).reshape(case.x.shape)[case.index]
    t_pos = positions(case.x.shape, index)
    if tuple(np_pos.shape) == tuple(t_pos.shape) and np.array_equal(np_pos, t_pos.numpy()):
        return values
    spread = np.broadcast_to(case.values, np_pos.shape)
    queue: dict[int, list[Any]] = defaultdict(list)
    for p, v in zip(np_pos.reshape(-1).tolist(), spread.reshape(-1).tolist(), strict=True):
        queue[p].append(v)
    taken = [queue[p].pop(0) for p in t_pos.reshape(-1).tolist()]
    return torch.tensor(taken, dtype=values.dtype).view(t_pos.shape)


def reference(op: str, x: torch.Tensor, pos: torch.Tensor, values: Any) -> torch.Tensor:
    """Plain torch, element by element: the updates in order (``set``: setitem)."""
    if op == "get":
        return x.reshape(-1)[pos]
    if op == "set":
        y = x.clone()
        y.view(-1)[pos.reshape(-1)] = (
            torch.as_tensor(values, dtype=x.dtype).expand(pos.shape).reshape(-1)
        )
        return y
    if op in ("min", "max"):  # no in-place form: the value is cast to x's dtype
        values = torch.as_tensor(values, dtype=x.dtype)
    spread = (
        torch.broadcast_to(values, pos.shape).reshape(-1).unbind()
        if isinstance(values, torch.Tensor)
        else [values] * pos.numel()
    )
    out = list(x.reshape(-1).unbind())
    for p, v in zip(pos.reshape(-1).tolist(), spread, strict=True):
        out[p] = _OPS[op](out[p], v)
    return torch.stack(out).view(x.shape) if out else x.clone()


def run(case: AtCase, x: torch.Tensor, index: Any, values: Any) -> torch.Tensor:
    ref = at(x)[index]
    if case.op == "get":
        return ref.get(mode=case.mode)  # type: ignore[arg-type]
    return getattr(ref, case.op)(values, mode=case.mode)  # type: ignore[no-any-return]


def _ids(case: AtCase) -> str:
    return case.id


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence:UserWarning")
@pytest.mark.parametrize("case", AT_CASES, ids=_ids)
def test_case(case: AtCase) -> None:
    index = torch_index(case.index)
    x = torch.from_numpy(case.x.copy())
    before = x.clone()
    if case.id in TORCH_DIFFERS:  # negative slice steps: torch raises, so must at()
        values = case.values
        if isinstance(values, np.ndarray):
            values = torch.from_numpy(values.copy())
        with pytest.raises(ValueError, match="step must be greater than zero"):
            run(case, x, index, values)
        return
    if case.error is not None:
        match = "cast|promote|dtype" if case.error is Exception else None
        with pytest.raises(case.error, match=match):
            run(case, x, index, torch_values(case, index) if case.mode is None else case.values)
        assert torch.equal(x, before)
        return
    assert case.expected is not None
    values = torch_values(case, index) if case.mode is None else case.values
    if isinstance(values, np.ndarray):
        values = torch.from_numpy(values.copy())
    got = run(case, x, index, values)
    assert torch.equal(x, before), "at() changed x"
    if case.op == "get" and case.mode is None:
        want = reference("get", x, positions(case.x.shape, index), None)
        assert torch.equal(got, want)
        assert sorted(got.reshape(-1).tolist()) == sorted(case.expected.reshape(-1).tolist())
    else:
        assert got.dtype == x.dtype
        np.testing.assert_allclose(got.numpy(), case.expected, rtol=2e-6, atol=1e-12)
    if x.is_floating_point() and case.op != "get":
        check_gradients(case, x, index, values)


def check_gradients(case: AtCase, x: torch.Tensor, index: Any, values: Any) -> None:
    """Gradients to x and to the values, against plain torch on the positions
    (gradcheck where a ``mode`` moves or drops positions)."""
    value_is_tensor = isinstance(values, torch.Tensor) and values.is_floating_point()
    xd = x.detach().double().requires_grad_(True)
    vd = values.detach().double().requires_grad_(True) if value_is_tensor else values
    if case.mode is not None:
        inputs = (xd, vd) if value_is_tensor else (xd,)
        fn = (
            (lambda a, b: run(case, a, index, b))
            if value_is_tensor
            else (lambda a: run(case, a, index, values))
        )
        assert torch.autograd.gradcheck(fn, inputs)
        return
    pos = positions(case.x.shape, index)
    out = run(case, xd, index, vd)
    want = reference(case.op, xd, pos, vd)
    torch.testing.assert_close(out, want, equal_nan=True)
    weights = torch.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).view(out.shape)
    leaves = (xd, vd) if value_is_tensor else (xd,)
    got = torch.autograd.grad((out * weights).sum(), leaves, allow_unused=True)
    expected = torch.autograd.grad((want * weights).sum(), leaves, allow_unused=True)
    for g, w, leaf in zip(got, expected, leaves, strict=True):
        zero = torch.zeros_like(leaf)
        torch.testing.assert_close(zero if g is None else g, zero if w is None else w)


# -- JAX's batching bug tests, and the ones that need code ------------------------------


def test_index_apply_batching_bug() -> None:
    """JAX testIndexApplyBatchingBug (jax-ml/jax#16655): apply under vmap."""
    arr = torch.tensor([[1, 2, 3, 4, 5, 6]])
    ind = torch.tensor([3])
    func = lambda a, i: at(a)[i].apply(lambda t: t - 1)
    expected = torch.stack([func(a, i) for a, i in zip(arr, ind, strict=True)])
    assert torch.equal(torch.func.vmap(func)(arr, ind), expected)
    assert torch.equal(expected, torch.tensor([[1, 2, 3, 3, 5, 6]]))


def test_index_update_scalar_bug() -> None:
    """JAX testIndexUpdateScalarBug (jax-ml/jax#14923)."""
    a = torch.arange(10.0)
    assert torch.equal(at(a)[0].apply(torch.cos), at(a)[0].set(1.0))


def test_grad_of_vmap_of_scatter() -> None:
    """JAX testGradOfVmapOfScatter (jax-ml/jax#25878): jacrev of get(mode="clip")."""
    f = lambda x, i: at(x)[i].get(mode="clip")
    x = torch.tensor([1.0])
    i = torch.tensor([1])  # out of bounds
    expected = torch.tensor([[1.0]])
    assert torch.equal(torch.func.jacrev(f)(x, i), expected)
    assert torch.equal(torch.func.jacrev(torch.func.vmap(f, (None, 0)))(x, i), expected)


def test_alternate_index_syntax_errors() -> None:
    """array-api-extra test_alternate_index_syntax: a missing or second index
    raises (array-api-extra: ValueError; at(): TypeError, naming the fix)."""
    a = torch.tensor([1, 2, 3])
    assert torch.equal(at(a, 0).set(4), torch.tensor([4, 2, 3]))
    assert torch.equal(at(a)[0].set(4), torch.tensor([4, 2, 3]))
    with pytest.raises(TypeError, match="index first"):
        at(a).set(4)
    with pytest.raises(TypeError, match="index once"):
        at(a, 0)[0]


def test_mul_jvp_with_repeated_indices_is_exact() -> None:
    """JAX testIndexMulGradFailsIfNotUnique: JAX refuses this jvp; at() computes it."""
    y = torch.ones(10, dtype=torch.long)
    f = lambda x, z: at(x)[y].multiply(z)
    x = torch.rand(100, dtype=torch.float64) + 0.5
    z = torch.rand(10, dtype=torch.float64) + 0.5
    tx, tz = torch.rand_like(x), torch.rand_like(z)
    _, got = torch.func.jvp(f, (x, z), (tx, tz))
    want = tx.clone()
    want[1] = tx[1] * z.prod() + x[1] * z.prod() * (tz / z).sum()
    torch.testing.assert_close(got, want)


def test_the_suite_is_not_empty() -> None:
    """The counts the closing note reports."""
    runnable = [c for c in AT_CASES if c.id not in TORCH_DIFFERS]
    assert len(AT_CASES) > 1500
    assert len(runnable) > 1400


def _has_array(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, np.ndarray) for i in items)


NUMPY_INDEXED = [
    c for c in AT_CASES if _has_array(c.index) and c.op in ("set", "get") and c.mode is None
]


@pytest.mark.parametrize("case", NUMPY_INDEXED, ids=_ids)
def test_numpy_index_as_torch_reads_it(case: AtCase) -> None:
    """The NumPy index itself, not a tensor: torch's setitem/getitem answer or
    its error (torch reads a 0-d boolean NumPy array differently from NumPy)."""
    x = torch.from_numpy(case.x.copy())
    values = case.values
    if isinstance(values, np.ndarray):
        values = torch.from_numpy(values.copy())
    try:
        if case.op == "get":
            want = x[case.index]
        else:
            want = x.clone()
            want[case.index] = torch_values(case, torch_index(case.index))
    except (IndexError, RuntimeError, ValueError) as exc:
        with pytest.raises(type(exc)):
            run(case, x, case.index, values)
        return
    got = run(case, x, case.index, torch_values(case, torch_index(case.index)))
    assert torch.equal(got, want)
