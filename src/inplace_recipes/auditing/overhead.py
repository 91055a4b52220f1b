"""What an audit costs: a training step timed bare, under :func:`audit` and under anomaly mode.

The step is one of a 3-layer MLP (64 → 256 → 256 → 10, batch 32): forward,
cross-entropy, backward and an SGD step. The three variants run in
interleaved rounds, so that a noisy machine slows them alike, and the
gradients are checked equal before anything is timed.

>>> times = measure_overhead(rounds=2, steps=2)
>>> sorted(times)
['anomaly', 'audit', 'bare']
"""

# Tensor.backward is untyped.
# mypy: disable-error-code="no-untyped-call"

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

__all__ = ["measure_overhead", "mlp_step"]


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
    from . import audit

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
