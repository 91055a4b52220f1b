"""Instruction counts of the overhead entries: deterministic where wall time is noise.

Wall time on a shared machine moves by tens of percent; the number of
instructions a step executes does not. :func:`instruction_counts` runs the
forward + backward step of each raw one-liner, recipe and ``at()`` under
Valgrind's callgrind, through the same bindings that
``torch.utils.benchmark.Timer.collect_callgrind`` uses
(``torch._C._valgrind_toggle`` and ``_valgrind_toggle_and_dump_stats``), but
all of them in one Valgrind process: ``collect_callgrind`` starts a process
per statement that imports torch under instrumentation, minutes each on a
loaded 2-core machine. Here torch is imported with instrumentation off, which
is switched on (``callgrind_control -i on``) only once every step is built.

Counts are per step, over ``number`` calls after a warm-up call, with the
garbage collector off (as ``timeit`` runs), and include autograd's backward.
Each write is counted twice: *warm*, the same index object on every call,
and *cold* (the write named ``"cold <write>"``), a new index on every call
(another row, another slice, a new tensor or list: :func:`.entries.cold_indices`),
made before the count. Valgrind is Debian's ``valgrind`` package; without it
the result says so and the tables show wall time only.

>>> counts = instruction_counts((100,), ("row",), entries=("raw_where", "where"), valgrind="")
>>> counts["available"], counts["reason"]
(False, 'valgrind not found')
"""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..recipes import RECORDS
from ._entries import COLD, raw_of

__all__ = ["instruction_counts"]


def counted_entries() -> tuple[str, ...]:
    """The entries whose instructions are counted: in-place, the recipes, their
    raw one-liners (``clone``'s is ``inplace_on_clone``) and ``at()``."""
    raws = raw_of()
    return ("inplace", *RECORDS, *(raws[name] for name in RECORDS), "at")


def instruction_counts(
    sizes: Sequence[int],
    writes: Sequence[str],
    *,
    entries: Sequence[str] | None = None,
    number: int = 10,
    cold: bool = True,
    valgrind: str | None = None,
    timeout: float = 900.0,
) -> dict[str, Any]:
    """``{"available", "reason", "number", "counts": [{size, write, entry, instructions}]}``.

    ``entries`` defaults to :func:`counted_entries`.

    ``instructions`` is per forward + backward step (float32, CPU, one
    thread); ``None`` where the entry does not take the write. With
    ``cold``, each write is counted cold too (``"cold row"``); ``at()``'s
    rows say which recipe it ``picks``.
    """
    path = shutil.which("valgrind") if valgrind is None else (valgrind or None)
    base: dict[str, Any] = {"available": False, "reason": None, "number": number, "counts": []}
    if path is None:
        return base | {"reason": "valgrind not found"}
    control = shutil.which("callgrind_control")
    if control is None:
        return base | {"reason": "callgrind_control not found"}
    with tempfile.TemporaryDirectory(prefix="inplace-recipes-callgrind-") as tmp:
        spec = Path(tmp) / "spec.json"
        chosen = counted_entries() if entries is None else entries
        counted = [*writes, *(COLD + w for w in writes if cold and not w.startswith(COLD))]
        labels = [
            {"size": s, "write": w, "entry": e} for s in sizes for w in counted for e in chosen
        ]
        spec.write_text(json.dumps({"labels": labels, "number": number, "control": control}))
        out = Path(tmp) / "callgrind.out"
        command = [
            path,
            "--tool=callgrind",
            "--instr-atstart=no",
            "--collect-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "inplace_recipes.bench._instructions",
            str(spec),
        ]
        env = os.environ | {"OMP_NUM_THREADS": "1"}
        try:
            done = subprocess.run(
                command, check=False, capture_output=True, text=True, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired:
            return base | {"reason": f"callgrind ran past {timeout:.0f} s"}
        if done.returncode != 0:
            return base | {"reason": "callgrind failed: " + done.stderr.strip()[-500:]}
        measured = json.loads((Path(tmp) / "measured.json").read_text())
        counts = _read_dumps(out)
    if len(counts) != sum(m is not None for m in measured):
        return base | {"reason": f"expected {len(measured)} callgrind dumps, found {len(counts)}"}
    rows, it = [], iter(counts)
    for label, ok in zip(labels, measured, strict=True):
        row = label | {"instructions": None if ok is None else round(next(it) / number)}
        if isinstance(ok, str):
            row["picks"] = ok
        rows.append(row)
    return base | {"available": True, "counts": rows}


def _read_dumps(out: Path) -> list[int]:
    """Total instructions of each dump ``callgrind.out.1``, ``.2``, ..., in order."""
    dumps = sorted(
        (p for p in out.parent.glob(out.name + ".*") if p.suffix[1:].isdigit()),
        key=lambda p: int(p.suffix[1:]),
    )
    totals = []
    for p in dumps:
        match = re.search(r"^(?:summary|totals):\s*(\d+)", p.read_text(), flags=re.MULTILINE)
        totals.append(int(match.group(1)) if match else 0)
    return totals


def _child(spec_path: str) -> None:  # pragma: no cover - runs under valgrind
    """Build every step, switch instrumentation on, and dump one count per step."""
    import torch

    from .._pick import best_recipe
    from ..recipes import NotApplicable
    from ._entries import WRITES, cold_indices, shape_for, write_fn

    spec = json.loads(Path(spec_path).read_text())
    number = spec["number"]
    torch.set_num_threads(1)
    steps: list[Callable[[], None] | None] = []
    measured: list[str | bool | None] = []
    for label in spec["labels"]:
        shape = shape_for(label["size"])
        gen = torch.Generator().manual_seed(label["size"])
        a = torch.rand(shape, generator=gen).requires_grad_(True)
        b = torch.rand(shape, generator=gen).requires_grad_(True)
        write = label["write"].removeprefix(COLD)
        index, value = WRITES[write](shape, a)
        # warm: one index object for every call; cold: a new one for each
        # (the check's, the warm-up's, the instrumented warm-up's, the counted ones)
        if label["write"].startswith(COLD):
            indices = iter(cold_indices(write, shape, a, number + 3))
        else:
            indices = iter([index] * (number + 3))
        fn = write_fn(label["entry"])
        wrt = [a, b] + ([value] if isinstance(value, torch.Tensor) else [])

        def step(
            fn: Any = fn, a: Any = a, b: Any = b, v: Any = value, wrt: Any = wrt, it: Any = indices
        ) -> None:
            torch.autograd.grad(fn(a + b, next(it), v).sum(), wrt)

        try:
            step()  # warm-up, and refusals surface here
        except NotApplicable:
            steps.append(None)
            measured.append(None)
            continue
        steps.append(step)
        measured.append(best_recipe(a + b, index, value) if label["entry"] == "at" else True)
    subprocess.run([spec["control"], "-i", "on", str(os.getpid())], check=True, capture_output=True)
    for counted in steps:
        if counted is None:
            continue
        counted()  # warm the instrumented code
        # as timeit does: a garbage collection falling into one count and not
        # another would differ by thousands of instructions between equal steps
        gc.collect()
        gc.disable()
        torch._C._valgrind_toggle()
        for _ in range(number):
            counted()
        torch._C._valgrind_toggle_and_dump_stats()
        gc.enable()
    (Path(spec_path).parent / "measured.json").write_text(json.dumps(measured))


if __name__ == "__main__":  # pragma: no cover - the valgrind child
    _child(sys.argv[1])
