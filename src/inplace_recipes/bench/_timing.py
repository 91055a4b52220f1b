"""Per-call seconds of a function: ``torch.utils.benchmark`` on a chosen clock.

Both :mod:`.measure` and :mod:`.audit_cost` time with :func:`timed`; it
imports neither, so the benchmark's imports run one way.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["CLOCKS", "timed"]

CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def timed(
    fn: Callable[[], Any], *, threads: int = 1, min_run_time: float = 0.01, clock: str = "cpu"
) -> list[float]:
    """Per-call seconds of ``fn``, one per block of ``Timer.blocked_autorange``.

    >>> len(timed(lambda: None, min_run_time=0.001)) > 0
    True
    """
    from torch.utils.benchmark import Timer

    timer = Timer("fn()", globals={"fn": fn}, num_threads=threads, timer=CLOCKS[clock])
    return list(timer.blocked_autorange(min_run_time=min_run_time).times)
