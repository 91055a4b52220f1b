"""Measure every recipe against in-place, against the torch call it wraps, and ``at()``.

The graph is the classic one, ``c = a + b; c[index] = value; c.sum().backward()``,
with ``c[index] = value`` replaced by each entry (:mod:`.entries`): the
in-place baseline, the clone floors, every recipe, each recipe's raw one-liner
(the torch call it wraps, as a user writes it) and ``at()``.
:func:`run` (:mod:`.measure`) times them in interleaved rounds after checking
each against the reference, repeats a configuration whose same-operation
entries disagree (:mod:`.consistency`), counts instructions with callgrind
(:mod:`.instructions`, warm and cold) and times ``audit()`` against
``detect_anomaly`` (:mod:`.audit_cost`); both time with :mod:`.timing`. :mod:`.results` reads results, :mod:`.report` turns
them into the page's answer, tables and figures, :mod:`.cli` is
``python -m inplace_recipes bench``.

>>> import torch
>>> from inplace_recipes import RECIPES
>>> x = torch.rand(10, requires_grad=True) * 1
>>> saved_bytes(RECIPES["where"], x, torch.arange(10) < 3, 0.0)
(10, 10)
"""

from __future__ import annotations

from .cli import add_arguments, main
from .consistency import inconsistencies
from .entries import (
    ENTRIES,
    INDEX_ONE_LINERS,
    MASK_ONE_LINERS,
    ONE_LINERS,
    RAW_OF,
    WRITES,
    shape_for,
)
from .measure import FULL, QUICK, Config, run
from .memory import peak_bytes, saved_bytes
from .results import (
    OVERHEAD_GOALS,
    answer_columns,
    at_overhead,
    find_record,
    instruction_overhead,
    load_results,
    over_goals,
    ratio_table,
    raw_overhead,
)

__all__ = [
    "ENTRIES",
    "FULL",
    "INDEX_ONE_LINERS",
    "MASK_ONE_LINERS",
    "ONE_LINERS",
    "OVERHEAD_GOALS",
    "QUICK",
    "RAW_OF",
    "WRITES",
    "Config",
    "add_arguments",
    "answer_columns",
    "at_overhead",
    "find_record",
    "inconsistencies",
    "instruction_overhead",
    "load_results",
    "main",
    "over_goals",
    "peak_bytes",
    "ratio_table",
    "raw_overhead",
    "run",
    "saved_bytes",
    "shape_for",
]
