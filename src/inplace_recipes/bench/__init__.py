"""Measure every recipe against in-place, against the torch call it wraps, and ``at()``.

The graph is the classic one, ``c = a + b; c[index] = value; c.sum().backward()``,
with ``c[index] = value`` replaced by each entry: the in-place baseline, the
clone floors, every recipe, each recipe's raw one-liner (the torch call it
wraps, as a user writes it, from its record) and ``at()``. :func:`run` times
them in interleaved rounds after checking each against the reference,
repeats a configuration whose same-operation entries disagree, counts
instructions with callgrind (warm and cold) and times ``audit()`` against
``detect_anomaly``; ``python -m inplace_recipes bench`` is its command line
(``inplace_recipes.bench._cli``). How it measures: ``docs/measurements/bench/README.md`` in the
source tree.

>>> import torch
>>> from inplace_recipes import RECIPES
>>> x = torch.rand(10, requires_grad=True) * 1
>>> saved_bytes(RECIPES["where"], x, torch.arange(10) < 3, 0.0)
(10, 10)
"""

from __future__ import annotations

from ._consistency import noise_band
from ._entries import WRITES, one_liners
from ._measure import FULL, QUICK, Config, run
from ._memory import peak_bytes, saved_bytes
from ._ranking import RANKED_SIZES, preferences, ranking, tied_with_fastest, tied_with_slowest
from ._results import find_record, load_results, ratio_table

__all__ = [
    "FULL",
    "QUICK",
    "RANKED_SIZES",
    "WRITES",
    "Config",
    "find_record",
    "load_results",
    "noise_band",
    "one_liners",
    "peak_bytes",
    "preferences",
    "ranking",
    "ratio_table",
    "run",
    "saved_bytes",
    "tied_with_fastest",
    "tied_with_slowest",
]
