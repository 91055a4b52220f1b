"""Write ``_generated/answer_table.md``, the landing page's answer table.

Nothing in the table's result columns is typed: at build time each recipe's
one line of code is run and checked against ``clone()`` then setitem with
:func:`inplace_recipes.compare_gradients` (forward, gradient to ``x``,
gradient to the value), and the package's recipe of the same name is checked
too. Bytes saved for backward and speed relative to the in-place op come from
``inplace_recipes.bench.answer_columns()`` when that module exists; until then
those two columns are left out.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import torch

import inplace_recipes as ir

RECIPES_DIR = Path(__file__).parent.parent / "recipes"

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
    "select_scatter": "ints and slices only, no index tensors",
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


def _bench_columns() -> dict[str, dict[str, Any]] | None:
    if importlib.util.find_spec("inplace_recipes.bench") is None:
        return None
    from inplace_recipes import bench

    if not hasattr(bench, "answer_columns"):
        return None
    return bench.answer_columns()  # type: ignore[no-any-return]


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

    bench = _bench_columns()
    perf = (RECIPES_DIR / "tools" / "plot_performance.py").exists()
    speed_header = (
        "{doc}`speed vs in-place </auto_recipes/tools/plot_performance>`"
        if perf
        else "speed vs in-place"
    )
    header = ["recipe", "one line for `x[i] = v`", "grad to `x`", "grad to `v`"]
    if bench is not None:
        header += ["saved for backward", speed_header]
    header.append("pitfall")

    rows = [header]
    for name, line in LINES.items():
        result = typed[name]
        page = RECIPES_DIR / "by_recipe" / f"plot_{name}.py"
        label = f"{{doc}}`{name} </auto_recipes/by_recipe/plot_{name}>`" if page.exists() else name
        row = [label, f"`{line}`", _diff(result.grad_x), _diff(result.grad_value)]
        if bench is not None:
            cols = bench.get(name, {})
            saved = cols.get("saved_bytes")
            ratio = cols.get("speed_ratio")
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
    if bench is not None:
        sources = sorted({str(c.get("source", "")) for c in bench.values() if c.get("source")})
        if sources:
            out.append("")
            out.append("Memory and speed: " + "; ".join(sources) + ".")
    out.append("")
    return "\n".join(out)


def write(outdir: Path) -> Path:
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "answer_table.md"
    text = render()
    if not path.exists() or path.read_text() != text:  # keep the mtime: no needless rebuild
        path.write_text(text)
    return path


if __name__ == "__main__":
    print(render())
