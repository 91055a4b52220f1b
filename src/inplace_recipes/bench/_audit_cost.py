"""What ``audit()`` costs next to ``torch.autograd.detect_anomaly``, on one training step.

The model is a 3-layer MLP, 64 -> 256 -> 256 -> 10 with ReLU, on a batch of
32, and the step is forward, cross-entropy loss, backward. Plain, audited
(``inplace_recipes.audit``) and under anomaly mode
(``torch.autograd.set_detect_anomaly(True)``, what ``detect_anomaly`` turns
on), timed in interleaved rounds; the audit and anomaly mode must leave the
gradients unchanged before they are timed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

from ._timing import timed

__all__ = ["audit_overhead", "mlp_step"]


def mlp_step(seed: int = 0) -> Callable[[], list[Tensor]]:
    """One training step of the MLP; returns the parameters' gradients.

    >>> grads = mlp_step()()
    >>> [tuple(g.shape) for g in grads][:2]
    [(256, 64), (256,)]
    """
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)
    )
    x = torch.randn(32, 64, generator=gen)
    target = torch.randint(0, 10, (32,), generator=gen)
    params = list(model.parameters())

    def step() -> list[Tensor]:
        loss = nn.functional.cross_entropy(model(x), target)
        return list(torch.autograd.grad(loss, params))

    return step


def audit_overhead(
    *, min_run_time: float = 1.0, rounds: int = 4, threads: int = 1, clock: str = "cpu"
) -> dict[str, Any]:
    """Median seconds per step plain, audited and in anomaly mode, and their ratios.

    >>> cost = audit_overhead(min_run_time=0.03, rounds=1)
    >>> sorted(cost["ratio"])
    ['anomaly', 'audit', 'audit_over_anomaly']
    """
    from ..auditing import audit

    step = mlp_step()

    def audited() -> list[Tensor]:
        report = audit(step)
        if report.error is not None:
            raise report.error
        grads: list[Tensor] = report.result
        return grads

    def anomaly() -> list[Tensor]:
        with torch.autograd.set_detect_anomaly(True):
            return step()

    variants = {"plain": step, "audit": audited, "anomaly": anomaly}
    want = step()
    for name, fn in variants.items():
        got = fn()
        if not all(torch.equal(g, w) for g, w in zip(got, want, strict=True)):
            raise AssertionError(f"{name} changed the gradients of the MLP step")
    samples: dict[str, list[float]] = {name: [] for name in variants}
    old = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for _ in range(rounds):
            for name, fn in variants.items():
                samples[name].extend(
                    timed(fn, threads=threads, min_run_time=min_run_time / rounds, clock=clock)
                )
    finally:
        torch.set_num_threads(old)
    median = {k: float(torch.tensor(v).median()) for k, v in samples.items()}
    return {
        "clock": clock,
        "model": "MLP 64-256-256-10, ReLU, batch 32, cross-entropy, forward + backward",
        "seconds": median,
        "blocks": {k: len(v) for k, v in samples.items()},
        "ratio": {
            "audit": median["audit"] / median["plain"],
            "anomaly": median["anomaly"] / median["plain"],
            "audit_over_anomaly": median["audit"] / median["anomaly"],
        },
    }
