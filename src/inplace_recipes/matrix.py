"""Which recipe works under which transform and dtype: a table made by running checks.

:func:`compatibility_matrix` runs every recipe in :data:`~inplace_recipes.RECIPES`,
the in-place baseline (``x[index] = value`` on the input itself) and
``at(x)[index].set(value)`` under autograd, double backward,
``torch.func.grad``, ``torch.func.vmap``, ``torch.compile(fullgraph=True)``,
``torch.func.functionalize``, forward mode (``torch.func.jvp``, ``jacfwd``,
``hessian``) and several dtypes and devices, and compares each result and
derivative with the reference, ``y = x.clone(); y[index] = value``, computed
without the transform (eager autograd; reverse mode for forward-mode cells).
A cell is "works", "error" (with torch's message), or "wrong": it ran and
gave a different answer or changed an input. Nothing in the table is
written by hand.

>>> m = compatibility_matrix(["where"], columns=["autograd", "int64"])
>>> m["where", "autograd"].status, m["where", "int64"].status
('works', 'works')
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import Tensor

from ._at import at
from ._table import text_table
from .compare import close, compare_gradients, default_loss
from .recipes import RECIPES, RECORDS, NotApplicable, Recipe, UnsupportedValueError, inplace_setitem

__all__ = [
    "COLUMNS",
    "DESCRIPTIONS",
    "Cell",
    "CompatibilityMatrix",
    "compatibility_matrix",
    "compile_inputs",
]

Status = Literal["works", "error", "wrong", "n/a"]

#: Every check, in table order.
COLUMNS: tuple[str, ...] = (
    "autograd",
    "double backward",
    "func.grad",
    "vmap x",
    "vmap value",
    "compile",
    "functionalize",
    "jvp",
    "jacfwd",
    "hessian",
    "float64",
    "complex64",
    "bfloat16",
    "int64",
    "cuda",
)

#: What each column checks, for the page and --help.
DESCRIPTIONS: dict[str, str] = {
    "autograd": "loss.backward() with x a leaf that requires grad",
    "double backward": "gradients of the gradients (create_graph=True)",
    "func.grad": "torch.func.grad with respect to x and the value",
    "vmap x": "torch.func.vmap over a batch of x (value shared), forward and backward",
    "vmap value": "torch.func.vmap over a batch of values (x shared), forward and backward",
    "compile": "torch.compile(fullgraph=True), forward and backward: the table's index with "
    "the default backend, then, traced with aot_eager, the same with dynamic=True and a "
    "boolean mask with a tensor value, static and dynamic",
    "functionalize": "torch.func.functionalize, forward and backward",
    "jvp": "torch.func.jvp (forward mode): the result and its tangent",
    "jacfwd": "torch.func.jacfwd (forward mode under vmap): the Jacobian to x and to the value",
    "hessian": "torch.func.hessian (forward over reverse) of the loss, to x and the value",
    "float64": "autograd in float64",
    "complex64": "autograd in complex64",
    "bfloat16": "autograd in bfloat16",
    "int64": "forward on an int64 tensor",
    "cuda": "autograd on a CUDA tensor",
}


@dataclass(frozen=True)
class Cell:
    """One check: ``status`` is ``"works"``, ``"error"``, ``"wrong"`` or ``"n/a"``;
    ``detail`` is the exception's first line, what differed, or why n/a."""

    status: Status
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.status}: {self.detail}" if self.detail else self.status


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


@dataclass
class CompatibilityMatrix:
    """The table :func:`compatibility_matrix` returns.

    ``m[row, col]`` is a :class:`Cell`; ``str(m)`` is an aligned text table
    with the details as numbered notes; :meth:`to_markdown` and
    :meth:`to_records` give the same content for pages and tools.
    """

    rows: list[str]
    cols: list[str]
    cells: dict[tuple[str, str], Cell]
    seconds: float = 0.0
    setup: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    def __getitem__(self, key: tuple[str, str]) -> Cell:
        return self.cells[key]

    def to_records(self) -> list[dict[str, str]]:
        """One dict per cell: row, column, status, detail."""
        return [
            {
                "row": r,
                "column": c,
                "status": self.cells[r, c].status,
                "detail": self.cells[r, c].detail,
            }
            for r in self.rows
            for c in self.cols
        ]

    def _grid(self) -> tuple[list[list[str]], list[str]]:
        notes: list[str] = []
        grid = [["", *self.cols]]
        for r in self.rows:
            line = [r]
            for c in self.cols:
                cell = self.cells[r, c]
                text: str = cell.status
                if cell.detail:
                    if cell.detail not in notes:
                        notes.append(cell.detail)
                    text += f" [{notes.index(cell.detail) + 1}]"
                line.append(text)
            grid.append(line)
        return grid, notes

    def __str__(self) -> str:
        grid, notes = self._grid()
        lines = [self.setup] if self.setup else []
        lines += [text_table(grid[0], grid[1:]), ""]
        lines += [f"[{n}] {text}" for n, text in enumerate(notes, 1)]
        return "\n".join(lines).rstrip()

    def to_markdown(self) -> str:
        """A Markdown table, with the details as a numbered list below it."""
        grid, notes = self._grid()
        out = ["| " + " | ".join(grid[0]) + " |", "|" + "---|" * len(grid[0])]
        out += ["| " + " | ".join(line) + " |" for line in grid[1:]]
        out += [""] + [f"{n}. {text.replace('|', '&#124;')}" for n, text in enumerate(notes, 1)]
        return "\n".join(out).rstrip()

    def _repr_html_(self) -> str:
        """An HTML table (what notebooks and the docs' gallery show)."""
        grid, notes = self._grid()
        head = "".join(f"<th>{html.escape(c)}</th>" for c in grid[0])
        body = "".join(
            "<tr><th>"
            + html.escape(line[0])
            + "</th>"
            + "".join(
                f'<td class="{t.split()[0].replace("/", "")}">{html.escape(t)}</td>'
                for t in line[1:]
            )
            + "</tr>"
            for line in grid[1:]
        )
        items = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
        return (
            f'<table class="compatibility-matrix"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table><ol>{items}</ol>"
        )

    def to_json(self) -> str:
        """The cells as JSON, with the setup and the time the checks took."""
        return json.dumps(
            {"setup": self.setup, "seconds": round(self.seconds, 1), "cells": self.to_records()},
            indent=2,
        )


def _at_set(x: Tensor, index: Any, value: Any) -> Tensor:
    return at(x)[index].set(value)


def default_rows() -> dict[str, Recipe]:
    """The rows: the in-place baseline, every recipe, then ``at[].set``."""
    return {"inplace": inplace_setitem, **RECIPES, "at[].set": _at_set}


# -- the checks ---------------------------------------------------------------


@dataclass
class _Case:
    x: Tensor
    index: Any
    value: Tensor
    batch: int

    def batched(self, t: Tensor, seed: int) -> Tensor:
        gen = torch.Generator().manual_seed(seed)
        return torch.randn((self.batch, *t.shape), generator=gen, dtype=t.dtype)


def _reference(x: Tensor, index: Any, value: Tensor) -> Tensor:
    y = x.clone()
    y[index] = value
    return y


def _leaves(*tensors: Tensor) -> list[Tensor]:
    return [t.detach().clone().requires_grad_(True) for t in tensors]


def _run_autograd(fn: Callable[..., Tensor], inputs: Sequence[Tensor]) -> tuple[Tensor, ...]:
    """``fn(*inputs)`` on fresh leaves, and the loss's gradients to each input."""
    leaves = _leaves(*inputs)
    out = fn(*leaves)
    grads = torch.autograd.grad(default_loss(out), leaves, allow_unused=True)
    return (
        out.detach(),
        *(torch.zeros_like(t) if g is None else g for t, g in zip(leaves, grads, strict=True)),
    )


def _agree(
    got: Sequence[Tensor],
    want: Sequence[Tensor],
    labels: Sequence[str] = ("result", "gradient to x", "gradient to value"),
) -> Cell:
    for label, a, b in zip(labels, got, want, strict=True):
        if a.shape != b.shape or not close(a, b.to(a.dtype)):
            return Cell("wrong", f"{label} differs from clone + setitem")
    return Cell("works")


def _from_report(fn: Recipe, x: Tensor, index: Any, value: Tensor, **kwargs: Any) -> Cell:
    report = compare_gradients(x, index, value, {"fn": fn}, **kwargs)
    result = report["fn"]
    if result.error is not None:
        return Cell("error", _first_line(result.error))
    if result.not_applicable is not None:
        return Cell("n/a", result.not_applicable)
    if not result.ok:
        return Cell("wrong", "; ".join(result.problems))
    return Cell("works")


def _forward_mode(column: str, call: Callable[[Tensor, Tensor], Tensor], case: _Case) -> Cell:
    """``jvp``, ``jacfwd`` and ``hessian`` of ``call``, against references that use no forward mode.

    Writing is linear in ``(x, value)``, so the tangent of the reference is
    the same write applied to the tangents; Jacobians and Hessians of the
    reference come from reverse mode (``torch.autograd.functional``).
    """
    x, index, v = case.x, case.index, case.value

    def reference(a: Tensor, b: Tensor) -> Tensor:
        return _reference(a, index, b)

    if column == "jvp":
        tx, tv = case.batched(x, 3)[0], case.batched(v, 4)[0]
        primal_and_tangent = torch.func.jvp(call, (x, v), (tx, tv))
        out, tangent = primal_and_tangent[0], primal_and_tangent[1]
        want = (reference(x, v), reference(tx, tv))
        return _agree((out, tangent), want, ("result", "tangent (jvp)"))
    if column == "jacfwd":
        got = torch.func.jacfwd(call, argnums=(0, 1))(x, v)
        want = torch.autograd.functional.jacobian(reference, (x, v))  # type: ignore[no-untyped-call]
        return _agree(got, want, ("Jacobian to x", "Jacobian to value"))
    hessian = torch.func.hessian(lambda a, b: default_loss(call(a, b)), argnums=(0, 1))(x, v)
    expected = torch.autograd.functional.hessian(  # type: ignore[no-untyped-call]
        lambda a, b: default_loss(reference(a, b)), (x, v)
    )
    pairs = [("x", "x"), ("x", "value"), ("value", "x"), ("value", "value")]
    return _agree(
        [hessian[i][j] for i in range(2) for j in range(2)],
        [expected[i][j] for i in range(2) for j in range(2)],
        [f"Hessian block ({a}, {b})" for a, b in pairs],
    )


def compile_inputs(
    case_x: Tensor, index: Any, value: Tensor
) -> list[tuple[str, Any, Tensor, dict[str, Any]]]:
    """What the ``compile`` column compiles: ``(label, index, value, torch.compile options)``.

    The table's own index with the default backend, as users compile; then,
    traced with ``aot_eager`` (Dynamo and AOTAutograd, where data-dependent
    shapes fail), the same with ``dynamic=True``, and a boolean mask with a
    tensor value (its number of written positions known only at run time),
    static and dynamic. A one-element value stays one element.

    >>> [label for label, *_ in compile_inputs(torch.zeros(3, 4), 1, torch.zeros(4))]
    ['index', 'index, dynamic', 'mask', 'mask, dynamic']
    """
    mask = torch.zeros(case_x.shape, dtype=torch.bool)
    mask.view(-1)[::3] = True
    count = int(mask.sum())
    gen = torch.Generator().manual_seed(7)
    values = torch.randn(count, generator=gen) if value.numel() != 1 else value.clone()
    traced = {"backend": "aot_eager"}
    return [
        ("index", index, value, {}),
        ("index, dynamic", index, value, {**traced, "dynamic": True}),
        ("mask", mask, values, traced),
        ("mask, dynamic", mask, values, {**traced, "dynamic": True}),
    ]


def _compiled(fn: Recipe, case: _Case, want: Sequence[Tensor]) -> Cell:
    """Every input of :func:`compile_inputs` compiled with ``fullgraph=True``; the first
    that fails names the cell. A write the recipe refuses by design is skipped."""
    record = next((r for r in RECORDS.values() if r.function is fn), None)
    for label, index, value, options in compile_inputs(case.x, case.index, case.value):
        if label != "index" and record is not None and record.refusal(case.x, index, value):
            continue  # refused by design, with its own error (a traced raise is Dynamo's)
        if label != "index":
            want = _run_autograd(lambda a, b, i=index: _reference(a, i, b), (case.x, value))
        torch._dynamo.reset()
        compiled = torch.compile(lambda a, b, i=index: fn(a, i, b), fullgraph=True, **options)
        try:
            cell = _agree(_run_autograd(compiled, (case.x, value)), want)
        except Exception as exc:
            if label == "index":
                raise
            return Cell("error", f"{label}: {_first_line(exc)}")
        if cell.status != "works":
            return Cell(cell.status, f"{label}: {cell.detail}")
    return Cell("works")


def _check(column: str, fn: Recipe, case: _Case) -> Cell:
    x, index, v = case.x, case.index, case.value
    if column == "autograd":
        return _from_report(fn, x, index, v)
    if column == "double backward":
        return _from_report(fn, x, index, v, second_order=True)
    if column in ("float64", "complex64", "bfloat16", "int64"):
        dtype = getattr(torch, column)
        return _from_report(fn, x.to(dtype), index, v.to(dtype))
    if column == "cuda":
        if not torch.cuda.is_available():
            return Cell("n/a", "no CUDA")
        return _from_report(fn, x.cuda(), index, v.cuda())

    def call(xx: Tensor, vv: Tensor) -> Tensor:
        return fn(xx, index, vv)

    want = _run_autograd(lambda xx, vv: _reference(xx, index, vv), (x, v))
    if column == "func.grad":

        def loss(xx: Tensor, vv: Tensor) -> tuple[Tensor, Tensor]:
            out = call(xx, vv)
            return default_loss(out), out

        (gx, gv), (_, out) = torch.func.grad_and_value(loss, argnums=(0, 1), has_aux=True)(x, v)
        return _agree((out, gx, gv), want)
    if column == "functionalize":
        return _agree(_run_autograd(torch.func.functionalize(call), (x, v)), want)
    if column == "compile":
        return _compiled(fn, case, want)
    if column in ("jvp", "jacfwd", "hessian"):
        return _forward_mode(column, call, case)
    n = case.batch
    if column == "vmap x":
        xs = case.batched(x, 1)
        got = _run_autograd(torch.func.vmap(call, in_dims=(0, None)), (xs, v))
        loop = lambda a, b: torch.stack([_reference(a[i], index, b) for i in range(n)])
        return _agree(got, _run_autograd(loop, (xs, v)))
    if column == "vmap value":
        vs = case.batched(v, 2)
        got = _run_autograd(torch.func.vmap(call, in_dims=(None, 0)), (x, vs))
        loop = lambda a, b: torch.stack([_reference(a, index, b[i]) for i in range(n)])
        return _agree(got, _run_autograd(loop, (x, vs)))
    raise ValueError(f"unknown column {column!r}; choose from {', '.join(COLUMNS)}")


def compatibility_matrix(
    rows: Mapping[str, Recipe] | Iterable[str] | None = None,
    *,
    columns: Iterable[str] | None = None,
    shape: tuple[int, ...] = (3, 4),
    index: Any = (1, slice(None, None, 2)),
    batch: int = 3,
) -> CompatibilityMatrix:
    """Run every check on every row and return the table.

    ``rows`` is a mapping of ``fn(x, index, value)`` callables, or names of
    :func:`default_rows` (the default: all of them); ``columns`` names
    checks from :data:`COLUMNS`. Each check writes a tensor value of
    ``x[index]``'s shape (a one-element value for a recipe that writes a
    single value) into a float32 ``x`` of ``shape`` and compares with
    ``y = x.clone(); y[index] = value``. Warnings are silenced, so the
    table is the same under ``pytest -W error``.
    """
    every = default_rows()
    if rows is None:
        chosen = every
    elif isinstance(rows, Mapping):
        chosen = dict(rows)
    else:
        names = [rows] if isinstance(rows, str) else list(rows)
        unknown = [n for n in names if n not in every]
        if unknown:
            raise ValueError(f"unknown rows {unknown}; choose from {', '.join(every)}")
        chosen = {n: every[n] for n in names}
    cols = list(COLUMNS if columns is None else columns)
    bad = [c for c in cols if c not in COLUMNS]
    if bad:
        raise ValueError(f"unknown columns {bad}; choose from {', '.join(COLUMNS)}")
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=gen)
    value = torch.randn(x[index].shape, generator=gen)
    start = time.perf_counter()
    cells: dict[tuple[str, str], Cell] = {}
    timings: dict[str, float] = {}
    single: list[str] = []
    for name, fn in chosen.items():
        row_start = time.perf_counter()
        v = value
        try:
            fn(x.clone(), index, v)
        except UnsupportedValueError:
            v = value.reshape(-1)[:1].reshape(())  # a recipe that writes one value
            single.append(name)
        except Exception:  # noqa: BLE001, S110 - each cell reports it
            pass
        for col in cols:
            case = _Case(x.clone(), index, v.clone(), batch)  # a cell that writes spoils no other
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    cells[name, col] = _check(col, fn, case)
                except NotApplicable as exc:
                    cells[name, col] = Cell("n/a", str(exc))
                except Exception as exc:  # noqa: BLE001 - the table reports what torch raises
                    cells[name, col] = Cell("error", _first_line(exc))
            changed = [
                n for n, a, b in (("x", case.x, x), ("value", case.value, v)) if not a.equal(b)
            ]
            if changed:
                cells[name, col] = Cell("wrong", f"changed its input {' and '.join(changed)}")
        timings[name] = time.perf_counter() - row_start
    if "compile" in cols:
        torch._dynamo.reset()
    setup = (
        f"x: float32 {list(shape)}, index {index!r}, value of shape {list(value.shape)}"
        + (
            f" ({', '.join(single)}: a one-element value, the only kind it writes)"
            if single
            else ""
        )
        + f"; torch {torch.__version__}"
    )
    return CompatibilityMatrix(
        list(chosen), cols, cells, time.perf_counter() - start, setup, timings
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m inplace_recipes matrix [--markdown | --json] [--columns ...]``."""
    parser = argparse.ArgumentParser(
        prog="inplace-recipes matrix",
        description="Run every recipe, the in-place baseline and at[] under each transform.",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true", help="print a Markdown table")
    out.add_argument("--json", action="store_true", help="print one JSON record per cell")
    rows = list(default_rows())
    parser.add_argument(
        "--rows",
        nargs="+",
        choices=rows,
        metavar="ROW",
        help=f"rows to run (default: all of {rows})",
    )
    parser.add_argument(
        "--columns", nargs="+", choices=COLUMNS, help="checks to run (default: all)"
    )
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    matrix = compatibility_matrix(args.rows, columns=args.columns)
    if args.json:
        text = matrix.to_json()
    elif args.markdown:
        text = matrix.to_markdown()
    else:
        text = f"{matrix}\n\n({len(matrix.rows)} rows x {len(matrix.cols)} checks in {matrix.seconds:.0f} s)"
    sys.stdout.write(text + "\n")
    return 0
