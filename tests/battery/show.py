"""``python -m battery.show CASE_ID ...`` (from ``tests/``): one case, spelled out.

Prints the inputs the case builds, torch's answer, the writer's and the verdict,
so that a failing id from a test run or a ``BATTERY_LOG`` becomes a repro.
"""

from __future__ import annotations

import sys
import warnings

from . import checks
from .axes import AXES, cases
from .oracle import attempt, writer


def show(case_id: str) -> str:
    found = [c for axis in AXES for c in cases(axis) if str(c) == case_id]
    if not found:
        return f"{case_id}: no such case"
    case = found[0]
    x, index, value = checks.inputs(case)
    lines = [case_id, f"  x     = {x!r}", f"  index = {index!r}", f"  value = {value!r}"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = attempt(checks.reference(case), x, index, value)
        got = attempt(writer(case.writer), x, index, value)
    for label, outcome in (("torch", want), (case.writer, got)):
        lines.append(
            f"  {label:6}= {outcome.result!r}"
            if outcome.error is None
            else f"  {label:6}: {outcome}"
        )
    lines.append(f"  verdict ({case.check}): {checks.run(case)}")
    return "\n".join(lines)


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        sys.stdout.write(show(arg) + "\n")
