"""The compatibility matrix: every cell the docs page shows is re-derived here.

For each row and column this module runs the row under the same transform
itself and compares with references built without the matrix code and
without the transform: the write done with plain torch, its Jacobian by
central differences in float64 (writing is linear, so they are exact up to
rounding), gradients as Jacobian-transpose products with the loss's own
gradient, Hessians as ``J^T diag(d2L) J``, ``vmap`` against a Python loop.
The expected status is then "error" when the run raised, "wrong" when it
ran and differed or changed an input, and "works" otherwise; the matrix
must say the same. A torch release that changes a cell changes both.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import pytest
import torch
from torch import Tensor

from inplace_recipes.compare import default_loss
from inplace_recipes.matrix import (
    COLUMNS,
    CompatibilityMatrix,
    compatibility_matrix,
    compile_inputs,
    default_rows,
    main,
)
from inplace_recipes.recipes import RECORDS, NotApplicable, UnsupportedValueError

INDEX = (1, slice(None, None, 2))
SHAPE = (3, 4)
BATCH = 3
ROWS = default_rows()
#: What the matrix promises for its own row, and what torch documents for in-place writes.
PROMISED = {("at[].set", c): "works" for c in COLUMNS if c != "cuda"}


# -- references: plain torch, no autograd through the write ----------------------


def written(x: Tensor, v: Tensor, index: Any = INDEX) -> Tensor:
    y = x.clone()
    y[index] = v
    return y


def jacobians(x: Tensor, v: Tensor, index: Any = INDEX) -> tuple[Tensor, Tensor]:
    """d written / d x and d written / d v, [out, in] each, by central differences in float64."""
    x64, v64 = x.detach().cpu().real.double(), v.detach().cpu().real.double()
    out = []
    for k, which in enumerate((x64, v64)):
        columns = []
        for j in range(which.numel()):
            step = torch.zeros(which.numel(), dtype=torch.float64)
            step[j] = 0.5
            step = step.reshape(which.shape)
            plus = written(x64 + step, v64, index) if k == 0 else written(x64, v64 + step, index)
            minus = written(x64 - step, v64, index) if k == 0 else written(x64, v64 - step, index)
            columns.append(((plus - minus) / 1.0).reshape(-1))
        out.append(torch.stack(columns, dim=1))
    return out[0], out[1]


def loss_derivatives(out: Tensor) -> tuple[Tensor, Tensor]:
    """dL/dout and the diagonal of d2L/dout2 of the matrix's loss, by autograd of the loss alone."""
    leaf = out.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(default_loss(leaf), leaf, create_graph=True)
    real = torch.view_as_real(g) if g.is_complex() else g
    (d2,) = torch.autograd.grad(real.sum(), leaf)
    return g.detach(), (torch.view_as_real(d2)[..., 0] if d2.is_complex() else d2)


def pull_back(jac: Tensor, g: Tensor, shape: torch.Size) -> Tensor:
    """``J^T g`` in ``g``'s dtype (J is 0/1, so each entry is a sum of entries of g)."""
    wide = g.to(torch.complex128 if g.is_complex() else torch.float64).reshape(-1)
    return (jac.to(wide.dtype).T @ wide).reshape(shape).to(g.dtype)


def expected_gradients(x: Tensor, v: Tensor, index: Any = INDEX) -> list[Tensor]:
    x, v = x.cpu(), v.cpu()
    out = written(x, v, index)
    g, _ = loss_derivatives(out)
    jx, jv = jacobians(x, v, index)
    return [out, pull_back(jx, g, x.shape), pull_back(jv, g, v.shape)]


# -- running a row the way a user would ---------------------------------------


def agree(got: Sequence[Tensor], want: Sequence[Tensor]) -> bool:
    """Within assert_close's tolerances for ``got``'s dtype, compared on the CPU."""
    for a, b in zip(got, want, strict=True):
        try:
            torch.testing.assert_close(a.detach().cpu(), b.cpu().to(a.dtype), equal_nan=True)
        except AssertionError:
            return False
    return True


def by_autograd(f: Callable[[Tensor, Tensor], Tensor], x: Tensor, v: Tensor) -> list[Tensor]:
    xl, vl = x.detach().clone().requires_grad_(True), v.detach().clone().requires_grad_(True)
    out = f(xl, vl)
    grads = torch.autograd.grad(default_loss(out), (xl, vl), allow_unused=True)
    return [
        out,
        *(torch.zeros_like(t) if g is None else g for t, g in zip((xl, vl), grads, strict=True)),
    ]


def status_of(column: str, fn: Any, x: Tensor, v: Tensor) -> str:
    """Run ``fn`` under ``column``'s transform in this module's own way and judge it."""

    def f(a: Tensor, b: Tensor) -> Tensor:
        return fn(a, INDEX, b)

    if column == "cuda" and not torch.cuda.is_available():
        return "n/a"
    if column == "cuda":
        x, v = x.cuda(), v.cuda()
    elif column in ("float64", "complex64", "bfloat16", "int64"):
        x, v = x.to(getattr(torch, column)), v.to(getattr(torch, column))
    x, v = x.clone(), v.clone()  # a row that writes into its input spoils no other column
    x_before, v_before = x.clone(), v.clone()
    try:
        with warnings.catch_warnings():  # as the matrix does: torch's performance notices
            warnings.simplefilter("ignore")
            ok = judge(column, f, x, v, fn)
    except NotApplicable:
        return "n/a"
    except Exception:  # noqa: BLE001 - an error is a status
        return "error"
    if not (x.equal(x_before) and v.equal(v_before)):
        return "wrong"
    return "works" if ok else "wrong"


def judge(
    column: str, f: Callable[[Tensor, Tensor], Tensor], x: Tensor, v: Tensor, fn: Any = None
) -> bool:
    if column == "int64":
        x_copy = x.clone()
        return agree([f(x_copy, v)], [written(x, v)]) and x_copy.equal(x)
    if column in ("autograd", "float64", "complex64", "bfloat16", "cuda"):
        return agree(by_autograd(f, x, v), expected_gradients(x, v))
    if column == "double backward":
        xl, vl = x.detach().clone().requires_grad_(True), v.detach().clone().requires_grad_(True)
        gx, gv = torch.autograd.grad(default_loss(f(xl, vl)), (xl, vl), create_graph=True)
        second = torch.autograd.grad(gx.sum() + gv.sum(), (xl, vl), allow_unused=True)
        _, d2 = loss_derivatives(written(x, v))
        jx, jv = jacobians(x, v)
        jac = torch.cat([jx, jv], dim=1)
        hess = jac.T @ (d2.double().reshape(-1, 1) * jac)
        want = hess.sum(0)  # d(sum of every gradient)/d input
        got = torch.cat(
            [
                (torch.zeros_like(t) if s is None else s).reshape(-1)
                for t, s in zip((x, v), second, strict=True)
            ]
        )
        return agree([got], [want])
    if column == "func.grad":

        def loss(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
            out = f(a, b)
            return default_loss(out), out

        (gx, gv), (_, out) = torch.func.grad_and_value(loss, argnums=(0, 1), has_aux=True)(x, v)
        return agree([out, gx, gv], expected_gradients(x, v))
    if column == "functionalize":
        return agree(by_autograd(torch.func.functionalize(f), x, v), expected_gradients(x, v))
    if column == "compile":  # the inputs compile_inputs names; a refused write is skipped
        record = next((r for r in RECORDS.values() if r.function is fn), None)
        try:
            for label, index, value, options in compile_inputs(x, INDEX, v):
                if label != "index" and record and record.refusal(x, index, value):
                    continue
                torch._dynamo.reset()
                call = torch.compile(lambda a, b, i=index: fn(a, i, b), fullgraph=True, **options)
                if not agree(by_autograd(call, x, value), expected_gradients(x, value, index)):
                    return False
            return True
        finally:
            torch._dynamo.reset()
    if column in ("vmap x", "vmap value"):
        gen = torch.Generator().manual_seed(5)
        batched_x = column == "vmap x"
        xs = torch.randn((BATCH, *x.shape), generator=gen) if batched_x else x
        vs = v if batched_x else torch.randn((BATCH, *v.shape), generator=gen)
        dims = (0, None) if batched_x else (None, 0)
        got = by_autograd(torch.func.vmap(f, in_dims=dims), xs, vs)
        outs = torch.stack(
            [written(xs[b] if batched_x else x, v if batched_x else vs[b]) for b in range(BATCH)]
        )
        g, _ = loss_derivatives(outs)
        per = [
            jacobians(xs[b] if batched_x else x, v if batched_x else vs[b]) for b in range(BATCH)
        ]
        gx = [pull_back(jx, g[b], x.shape) for b, (jx, _) in enumerate(per)]
        gv = [pull_back(jv, g[b], v.shape) for b, (_, jv) in enumerate(per)]
        want_x = torch.stack(gx) if batched_x else sum(gx)
        want_v = sum(gv) if batched_x else torch.stack(gv)
        return agree(got, [outs, want_x, want_v])
    jx, jv = jacobians(x, v)
    if column == "jvp":
        gen = torch.Generator().manual_seed(6)
        tx, tv = torch.randn(x.shape, generator=gen), torch.randn(v.shape, generator=gen)
        out, tangent = torch.func.jvp(f, (x, v), (tx, tv))
        want = (jx @ tx.double().reshape(-1) + jv @ tv.double().reshape(-1)).reshape(x.shape)
        return agree([out, tangent], [written(x, v), want])
    if column == "jacfwd":
        got_x, got_v = torch.func.jacfwd(f, argnums=(0, 1))(x, v)
        return agree([got_x.reshape(jx.shape), got_v.reshape(jv.shape)], [jx, jv])
    if column == "hessian":
        h = torch.func.hessian(lambda a, b: default_loss(f(a, b)), argnums=(0, 1))(x, v)
        _, d2 = loss_derivatives(written(x, v))
        jac = torch.cat([jx, jv], dim=1)
        want = jac.T @ (d2.double().reshape(-1, 1) * jac)
        got = torch.cat(
            [
                torch.cat([h[i][j].reshape(t.numel(), s.numel()) for j, s in enumerate((x, v))], 1)
                for i, t in enumerate((x, v))
            ]
        )
        return agree([got], [want])
    raise AssertionError(f"no oracle for column {column!r}")


def inputs_for(fn: Any) -> tuple[Tensor, Tensor]:
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(SHAPE, generator=gen)
    v = torch.randn(x[INDEX].shape, generator=gen)
    try:
        fn(x.clone(), INDEX, v)
    except UnsupportedValueError:  # a recipe that writes one value, as the matrix does
        v = v.reshape(-1)[:1].reshape(())
    except Exception:  # noqa: BLE001, S110 - the cells report it
        pass
    return x, v


@pytest.fixture(scope="session")
def matrix() -> CompatibilityMatrix:
    return compatibility_matrix()


@pytest.mark.slow
def test_shape(matrix: CompatibilityMatrix) -> None:
    assert matrix.rows == list(ROWS)
    assert matrix.cols == list(COLUMNS)
    assert {"jvp", "jacfwd", "hessian"} <= set(matrix.cols)
    assert matrix.seconds < 240


@pytest.mark.slow
@pytest.mark.parametrize("row", list(ROWS))
def test_every_cell_is_what_running_it_gives(matrix: CompatibilityMatrix, row: str) -> None:
    fn = ROWS[row]
    x, v = inputs_for(fn)
    expected = {c: status_of(c, fn, x, v) for c in COLUMNS}
    got = {c: matrix[row, c].status for c in COLUMNS}
    assert got == expected, {c: str(matrix[row, c]) for c in COLUMNS}
    for (r, c), status in PROMISED.items():
        if r == row:
            assert got[c] == status


@pytest.mark.slow
def test_wrong_and_error_cells_say_why(matrix: CompatibilityMatrix) -> None:
    for record in matrix.to_records():
        if record["status"] in ("error", "wrong", "n/a"):
            assert record["detail"], record
    assert "a view of a leaf Variable that requires grad" in matrix["inplace", "autograd"].detail
    assert matrix["inplace", "jvp"].detail == "changed its input x"


@pytest.mark.slow
def test_renderings_agree(matrix: CompatibilityMatrix) -> None:
    records = matrix.to_records()
    assert len(records) == len(ROWS) * len(COLUMNS)
    assert [(r["row"], r["column"]) for r in records] == [(r, c) for r in ROWS for c in COLUMNS]
    text = str(matrix)
    assert "at[].set" in text
    assert "hessian" in text.splitlines()[1]
    md = matrix.to_markdown()
    assert md.splitlines()[0].startswith("|  | autograd |")
    assert json.loads(matrix.to_json())["cells"] == records
    page = matrix._repr_html_()  # what the docs page shows
    assert page.count("<tr>") == 1 + len(ROWS)
    assert page.count("<td ") == len(ROWS) * len(COLUMNS)
    for record in records:
        assert f'<td class="{record["status"].replace("/", "")}">{record["status"]}' in page


class ForwardDropped(torch.autograd.Function):
    """Right result and reverse mode; forward mode loses the tangent of x,
    as torch 2.13's ``scatter_reduce(reduce="prod")`` did for ``at().multiply``."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x: Tensor, v: Tensor) -> Tensor:
        return written(x, v)

    @staticmethod
    def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
        pass

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, Tensor]:
        return written(grad, torch.zeros(())), grad[INDEX]

    @staticmethod
    def jvp(ctx: Any, tx: Tensor, tv: Tensor) -> Tensor:
        return written(torch.zeros_like(tx), tv)


def test_silently_wrong_forward_mode_shows_as_wrong() -> None:
    rows = {"dropped": lambda x, i, v: ForwardDropped.apply(x, v)}
    m = compatibility_matrix(rows, columns=["autograd", "jvp", "jacfwd", "hessian"])
    assert m["dropped", "autograd"].status == "works"
    assert m["dropped", "jvp"].status == "wrong"
    assert m["dropped", "jvp"].detail == "tangent (jvp) differs from clone + setitem"
    assert m["dropped", "jacfwd"].status == "wrong"
    assert m["dropped", "jacfwd"].detail == "Jacobian to x differs from clone + setitem"
    # the Hessian of this loss only uses forward mode on the gradient, which is right
    assert m["dropped", "hessian"].status == status_of(
        "hessian", rows["dropped"], *inputs_for(rows["dropped"])
    )


def set_by_product(x: Tensor, index: Any, value: Tensor) -> Tensor:
    """A write through ``scatter_reduce(reduce="prod")``, as at().multiply used with index tensors."""
    flat = x.reshape(-1)
    where = torch.arange(x.numel()).reshape(x.shape)[index].reshape(-1)
    zeroed = flat.scatter_reduce(0, where, torch.zeros_like(flat[where]), reduce="prod")
    return zeroed.scatter_add(0, where, value.expand(x[index].shape).reshape(-1)).reshape(x.shape)


def test_torch_forward_mode_of_scatter_reduce_prod_shows_as_wrong() -> None:
    """torch 2.13 drops the tangent of scatter_reduce(prod): reverse mode is right, forward is not.

    The matrix must agree with this module's own run of each cell.
    """
    x, v = inputs_for(set_by_product)
    columns = ["autograd", "jvp", "jacfwd", "hessian"]
    m = compatibility_matrix({"product": set_by_product}, columns=columns)
    assert {c: m["product", c].status for c in columns} == {
        c: status_of(c, set_by_product, x, v) for c in columns
    }
    assert m["product", "autograd"].status == "works"
    _, tangent = torch.func.jvp(lambda a: set_by_product(a, INDEX, v), (x,), (torch.ones_like(x),))
    # the torch 2.13 bug (pinned): every tangent is zero, also where nothing was written;
    # a release that fixes it fails here, and this test is then to be updated
    assert not bool(tangent.any())
    assert m["product", "jvp"].status == "wrong"
    assert m["product", "jacfwd"].status == "wrong"


def test_a_failing_check_is_reported_not_raised() -> None:
    def broken(x: torch.Tensor, index: object, value: object) -> torch.Tensor:
        return x * 2  # runs, but does not write the value

    def raising(x: torch.Tensor, index: object, value: object) -> torch.Tensor:
        raise ValueError("boom\nsecond line")

    columns = ["autograd", "vmap x", "jvp", "jacfwd", "hessian"]
    m = compatibility_matrix({"broken": broken, "raising": raising}, columns=columns)
    assert all(m["broken", c].status == "wrong" for c in columns)
    assert all(str(m["raising", c]) == "error: ValueError: boom" for c in columns)


def test_unknown_names_raise() -> None:
    with pytest.raises(ValueError, match="choose from"):
        compatibility_matrix(["nope"])
    with pytest.raises(ValueError, match="choose from"):
        compatibility_matrix(["where"], columns=["jit"])


def test_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--json", "--rows", "where", "--columns", "autograd", "jvp"]) == 0
    cells = json.loads(capsys.readouterr().out)["cells"]
    assert [(c["row"], c["column"], c["status"]) for c in cells] == [
        ("where", "autograd", "works"),
        ("where", "jvp", "works"),
    ]
    assert main(["--markdown", "--rows", "clone", "--columns", "vmap value"]) == 0
    assert "| clone | error [1] |" in capsys.readouterr().out
