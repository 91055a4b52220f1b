"""What an audit costs: a training step timed bare, under :func:`audit` and under anomaly mode.

The step is one of a 3-layer MLP (64 → 256 → 256 → 10, batch 32): forward,
cross-entropy, backward and an SGD step. The three variants run in
interleaved rounds, so that a noisy machine slows them alike, and the
gradients are checked equal before anything is timed.

>>> times = measure_overhead(rounds=2, steps=2)
>>> sorted(times)
['anomaly', 'audit', 'bare']

:func:`count_overhead_instructions` counts the instructions of the same
three steps under Valgrind's callgrind, in one process (torch imported with
instrumentation off), where wall time on a shared machine is noise:

>>> count_overhead_instructions(valgrind="")["reason"]
'valgrind not found'
"""

# Tensor.backward is untyped.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import gc
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

__all__ = ["count_overhead_instructions", "measure_overhead", "mlp_step"]

#: The variants, in the order they are measured.
VARIANTS = ("bare", "audit", "anomaly")


def mlp_step(seed: int = 0) -> Callable[[], list[torch.Tensor]]:
    """A fresh MLP and batch; the returned step gives the gradients of one SGD step."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(64, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )
    batch = torch.randn(32, 64, generator=gen)
    target = torch.randint(0, 10, (32,), generator=gen)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)  # lr 0: every step is the same

    def step() -> list[torch.Tensor]:
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(batch), target).backward()
        optimizer.step()
        return [p.grad for p in model.parameters() if p.grad is not None]

    return step


def _variants(step: Callable[[], list[torch.Tensor]]) -> dict[str, Callable[[], object]]:
    from ._audit import audit

    def audited() -> list[torch.Tensor]:
        with audit():
            return step()

    def anomaly() -> list[torch.Tensor]:
        with torch.autograd.detect_anomaly(check_nan=False):
            return step()

    return {"bare": step, "audit": audited, "anomaly": anomaly}


def measure_overhead(rounds: int = 15, steps: int = 20) -> dict[str, float]:
    """Median seconds per step of each variant, over ``rounds`` interleaved rounds of ``steps``.

    Runs on one thread. Raises ``AssertionError`` if a variant changes the gradients.
    """
    import warnings

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        step = mlp_step()
        variants = _variants(step)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Anomaly Detection has been enabled")
            reference = step()
            for name, fn in variants.items():
                got = fn()
                assert isinstance(got, list)
                same = all(torch.equal(a, b) for a, b in zip(got, reference, strict=True))
                assert same, f"{name} changed the gradients"
            samples: dict[str, list[float]] = {name: [] for name in variants}
            for _ in range(rounds):
                for name, fn in variants.items():
                    start = time.perf_counter()
                    for _ in range(steps):
                        fn()
                    samples[name].append((time.perf_counter() - start) / steps)
    finally:
        torch.set_num_threads(threads)
    return {name: statistics.median(times) for name, times in samples.items()}


def count_overhead_instructions(
    number: int = 5, valgrind: str | None = None, timeout: float = 900.0
) -> dict[str, Any]:
    """``{"available", "reason", "number", "instructions": {variant: per step}}`` under callgrind.

    Each variant's count is over ``number`` steps after a warm-up step, with the
    garbage collector off, on one thread.
    """
    path = shutil.which("valgrind") if valgrind is None else (valgrind or None)
    base: dict[str, Any] = {"available": False, "reason": None, "number": number}
    if path is None:
        return base | {"reason": "valgrind not found"}
    control = shutil.which("callgrind_control")
    if control is None:
        return base | {"reason": "callgrind_control not found"}
    with tempfile.TemporaryDirectory(prefix="inplace-recipes-audit-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        command = [
            path,
            "--tool=callgrind",
            "--instr-atstart=no",
            "--collect-atstart=no",
            f"--callgrind-out-file={out}",
            sys.executable,
            "-m",
            "inplace_recipes.auditing._overhead",
            control,
            str(number),
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
        totals = _dumps(out)
    if len(totals) != len(VARIANTS):
        return base | {"reason": f"expected {len(VARIANTS)} callgrind dumps, found {len(totals)}"}
    counts = {name: round(total / number) for name, total in zip(VARIANTS, totals, strict=True)}
    return base | {"available": True, "instructions": counts}


def _dumps(out: Path) -> list[int]:
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


def _child(control: str, number: int) -> None:  # pragma: no cover - runs under valgrind
    import warnings

    torch.set_num_threads(1)
    variants = _variants(mlp_step())
    warnings.filterwarnings("ignore", "Anomaly Detection has been enabled")
    subprocess.run([control, "-i", "on", str(os.getpid())], check=True, capture_output=True)
    for name in VARIANTS:
        step = variants[name]
        step()  # warm the instrumented code
        gc.collect()
        gc.disable()
        torch._C._valgrind_toggle()
        for _ in range(number):
            step()
        torch._C._valgrind_toggle_and_dump_stats()
        gc.enable()


if __name__ == "__main__":  # pragma: no cover - the valgrind child
    _child(sys.argv[1], int(sys.argv[2]))
