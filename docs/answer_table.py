"""Write ``_generated/answer_table.md``, the landing page's answer table.

Nothing in the table's result columns is typed: at build time each recipe's
one line of code is run and checked against ``clone()`` then setitem with
:func:`inplace_recipes.compare_gradients` (forward, gradient to ``x``,
gradient to the value), and the package's recipe of the same name is checked
too. Bytes saved for backward are measured live and speed relative to the
in-place op is read from the committed results, both through
``inplace_recipes.bench``. ``_generated/which_recipe.md`` pairs each kind of
write with the recipe :func:`inplace_recipes.best_recipe` picks for it now and
that recipe's measured speed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

import inplace_recipes as ir
from inplace_recipes import bench

#: One line per recipe for ``x[i] = v``; ``m`` is a boolean mask, True at ``i``.
LINES = {
    "mask": "y = x * ~m + v * m",
    "where": "y = torch.where(m, v, x)",
    "clone": "y = x.clone(); y[i] = v",
    "index_put": "y = x.index_put((torch.tensor([i]),), v)",
    "scatter": "y = x.scatter(0, torch.tensor([i]), v.reshape(1))",
    "select_scatter": "y = x.select_scatter(v, 0, i)",
    "masked_fill": "y = x.masked_fill(m, v)",
}

PITFALLS = {
    "mask": "`inf`/`nan` at a written position become `nan`; a NumPy mask promotes to float64",
    "where": "`nan` gradient if the unselected branch has an infinite derivative: use two `where`s",
    "clone": "fails under `vmap` with a batched value",
    "index_put": "duplicate positions: which write wins is undefined (`accumulate=True` adds)",
    "scatter": "duplicate positions: one write is kept, undefined which",
    "select_scatter": "ints and slices only; wrong gradient under `vmap` for 2+ steps (torch bug)",
    "masked_fill": "one value only, not a tensor of values",
}


def _line_recipe(line: str) -> ir.recipes.Recipe:
    """``line`` as a recipe ``fn(x, i, v)``, with ``m`` the mask of ``i``."""

    def recipe(x: torch.Tensor, i: Any, v: Any) -> torch.Tensor:
        m = torch.zeros(x.shape, dtype=torch.bool)
        m[i] = True
        scope = {"torch": torch, "x": x, "i": i, "v": v, "m": m}
        exec(line, scope)  # noqa: S102 - our own typed line, run to check it
        return scope["y"]

    return recipe


def _bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024**2:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 1024**2:.1f} MiB"


def _diff(d: float | None) -> str:
    if d is None:
        return "n/a"
    return "✓ exact" if d == 0 else f"✓ {d:.0e}"


def render() -> str:
    torch.manual_seed(0)
    x = torch.rand(6) * 10
    i = 2
    v = torch.tensor(42.0)
    lines = {name: _line_recipe(line) for name, line in LINES.items()}
    typed = ir.compare_gradients(x, i, v, lines)
    typed.assert_ok()  # the line shown is correct
    package = ir.compare_gradients(x, i, v, list(LINES))
    package.assert_ok()  # and so is the package's recipe

    columns = bench.answer_columns()
    speed_header = "{doc}`speed vs in-place </auto_recipes/tools/plot_performance>`"
    header = ["recipe", "one line for `x[i] = v`", "grad to `x`", "grad to `v`"]
    header += ["saved for backward", speed_header, "pitfall"]

    rows = [header]
    for name in ir.RECIPES:  # a recipe without a line here fails the build
        line, result = LINES[name], typed[name]
        label = f"{{doc}}`{name} </auto_recipes/by_recipe/plot_{name}>`"
        row = [label, f"`{line}`", _diff(result.grad_x), _diff(result.grad_value)]
        saved, ratio = columns[name]["saved_bytes"], columns[name]["speed_ratio"]
        row.append("n/a" if saved is None else _bytes(int(saved)))
        row.append("not measured" if ratio is None else f"{ratio:.2f}\N{MULTIPLICATION SIGN}")
        row.append(PITFALLS[name])
        rows.append(row)

    out = [
        "```{list-table}",
        ":header-rows: 1",
        ":class: answer-table",
        "",
    ]
    for row in rows:
        out.append(f"* - {row[0]}")
        out.extend(f"  - {cell}" for cell in row[1:])
    out.append("```")
    out.append("")
    out.append(
        f"Checked when this page was built, with torch {torch.__version__}: each line was run "
        f"on `x = torch.rand(6) * 10`, `i = {i}`, `v = torch.tensor(42.0)` and compared with "
        "`y = x.clone(); y[i] = v` by "
        "{py:func}`~inplace_recipes.compare.compare_gradients`; ✓ exact means the gradient is "
        "bit-for-bit the reference's."
    )
    out.append("")
    out.append(
        "Saved for backward: a one-element write on a float32 non-leaf of 1e6 elements; "
        "speed: forward + backward time over the in-place write's, same size, "
        f"{columns['inplace']['source']}. Functional updates with every recipe behind "
        "them: {doc}`at[] </auto_recipes/tools/plot_at>`; what works under `vmap`, "
        "`torch.compile` and friends: {doc}`the compatibility matrix "
        "</auto_recipes/tools/plot_compatibility_matrix>`."
    )
    out.append("")
    return "\n".join(out)


#: What each kind of write of the benchmark looks like in code.
WRITE_CODE = {
    "element": "x[i, j] = 0.0",
    "row": "x[i] = 0.0",
    "slice": "x[:, 1::10] = 0.0",
    "mask": "x[mask] = 0.0  (1% True)",
    "value_grad": "x[i] = v  (v requires grad)",
}


def render_which() -> str:
    """Each write, the recipe ``best_recipe`` picks, and its measured speed."""
    results = bench.load_results()
    shape = bench.shape_for(10**6)
    x = torch.zeros(shape, requires_grad=True)
    rows = [["write", "`best_recipe` picks", "its time / in-place", "fastest measured"]]
    for write, make in bench.WRITES.items():
        index, value = make(shape, x)
        pick = ir.best_recipe(x, index, value)
        ratios = {
            entry: by_size.get(10**6)
            for entry, by_size in bench.ratio_table(results, write=write).items()
            if entry in ir.RECIPES
        }
        measured = {k: v for k, v in ratios.items() if v is not None}
        fastest = min(measured, key=measured.__getitem__)
        x_sign = "\N{MULTIPLICATION SIGN}"
        rows.append(
            [
                f"`{WRITE_CODE[write]}`",
                f"`{pick}`",
                f"{measured[pick]:.2f}{x_sign}" if pick in measured else "not measured",
                f"`{fastest}` {measured[fastest]:.2f}{x_sign}",
            ]
        )
    out = ["```{list-table}", ":header-rows: 1", ""]
    for row in rows:
        out.append(f"* - {row[0]}")
        out.extend(f"  - {cell}" for cell in row[1:])
    out += ["```", ""]
    prov = results["provenance"]
    out.append(
        f"Forward + backward at 1e6 float32 elements, eager, from the committed results "
        f"({prov['cpu']}, {prov['threads']} thread(s), torch {prov['torch']}); differences under "
        "about 20% are within the run's noise. Details on the performance page."
    )
    return "\n".join(out) + "\n"


def write(outdir: Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    for name, text in [("answer_table.md", render()), ("which_recipe.md", render_which())]:
        path = outdir / name
        if not path.exists() or path.read_text() != text:  # keep the mtime: no needless rebuild
            path.write_text(text)


if __name__ == "__main__":
    print(render())
    print(render_which())
