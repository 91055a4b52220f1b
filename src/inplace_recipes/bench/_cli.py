"""``python -m inplace_recipes bench``: run the benchmark, print the overhead table, save JSON.

For a command-line front end that owns the parser: :func:`add_arguments` fills
an ``argparse`` (sub)parser and :func:`run` takes the parsed namespace.

>>> import argparse
>>> parser = argparse.ArgumentParser()
>>> add_arguments(parser)
>>> args = parser.parse_args(["--quick", "--sizes", "1e3"])
>>> config(args).sizes
(1000,)
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._cli_types import count, positive_int
from ._entries import BASELINES, WRITES, all_entries
from ._measure import FULL, QUICK, Config, fill_memory, remeasure_noisy
from ._measure import run as measure
from ._results import over_goals
from ._summary import summary_lines

__all__ = ["add_arguments", "config", "main", "run"]

DESCRIPTION = "Benchmark every recipe against the in-place baseline and its raw one-liner."


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The benchmark's options, added to ``p``."""
    size = p.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_true",
        help="1e3 and 1e4, float32, eager, instructions at 1e3 (under two minutes; default)",
    )
    size.add_argument(
        "--full", action="store_true", help="every size, dtype, write; compile subset"
    )
    p.add_argument(
        "--threads", type=positive_int, default=1, help="torch threads while timing (default 1)"
    )
    p.add_argument(
        "--device", action="append", choices=["cpu", "cuda"], help="repeatable; default both"
    )
    p.add_argument("--sizes", type=count, nargs="+", help="element counts, e.g. 1e4 1e6")
    p.add_argument("--dtypes", nargs="+", choices=["float32", "float64"])
    p.add_argument("--writes", nargs="+", choices=list(WRITES))
    p.add_argument("--entries", nargs="+", choices=[e for e in all_entries() if e not in BASELINES])
    p.add_argument(
        "--compile-sizes", type=count, nargs="*", help="sizes also run under torch.compile"
    )
    p.add_argument("--overhead-sizes", type=count, nargs="*", help="sizes with raw one-liners")
    p.add_argument("--instruction-sizes", type=count, nargs="*", help="sizes counted by callgrind")
    p.add_argument("--min-run-time", type=float, help="seconds per measurement")
    p.add_argument("--rounds", type=positive_int, help="interleaved rounds per measurement")
    p.add_argument("--attempts", type=positive_int, help="measurements until self-consistent")
    p.add_argument(
        "--clock", choices=["cpu", "wall"], help="process CPU time (default) or wall time"
    )
    p.add_argument("--no-peak", action="store_true", help="skip peak-memory measurement")
    p.add_argument("--no-audit", action="store_true", help="skip audit() against detect_anomaly")
    p.add_argument(
        "--remeasure-noisy",
        type=Path,
        metavar="FILE",
        help="measure again the configurations of FILE that fail the self-consistency check",
    )
    p.add_argument(
        "--memory",
        type=Path,
        metavar="FILE",
        help="count the peak memory of every record of FILE again, the tensor written from "
        "a temporary and kept alive (allocations do not depend on load: no timing)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 if a recipe counts over 1.10x its raw one-liner's instructions, "
        "or at() over 1.05x the recipe it picks",
    )
    p.add_argument("--output", "-o", type=Path, help="write the JSON here")
    p.add_argument("--no-progress", action="store_true")


def config(args: argparse.Namespace) -> Config:
    """The :class:`~inplace_recipes.bench.Config` the options ask for."""
    base = FULL if args.full else QUICK
    changes: dict[str, Any] = {"threads": args.threads}
    if args.device:
        changes["devices"] = tuple(args.device)
    for name in ("sizes", "compile_sizes", "overhead_sizes", "instruction_sizes"):
        value = getattr(args, name)
        if value is not None:
            changes[name] = tuple(int(s) for s in value)
    if args.dtypes:
        changes["dtypes"] = tuple(args.dtypes)
    if args.writes:
        changes["writes"] = tuple(args.writes)
    if args.entries:
        keep = {*BASELINES, *args.entries}
        changes["entries"] = tuple(e for e in all_entries() if e in keep)
    for name in ("min_run_time", "rounds", "attempts", "clock"):
        if getattr(args, name) is not None:
            changes[name] = getattr(args, name)
    if args.no_peak:
        changes["peak"] = False
    if args.no_audit:
        changes["audit"] = False
    return replace(base, **changes)


def run(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    """Run the benchmark the options ask for; print the summary; write the JSON."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = shlex.join(["python", "-m", "inplace_recipes", "bench", *words])
    if args.remeasure_noisy:
        results = json.loads(args.remeasure_noisy.read_text())
        for line in remeasure_noisy(results, command=command):
            print(f"measured again: {line}")  # noqa: T201
        args.output = args.output or args.remeasure_noisy
    elif args.memory:
        results = json.loads(args.memory.read_text())
        memory = fill_memory(results, command=command, progress=not args.no_progress)
        print(  # noqa: T201
            f"counted the peaks of {memory['records_counted']} records in "
            f"{memory['seconds']:.0f} s; {len(memory['peak_bytes_changed'])} peak_bytes changed"
        )
        args.output = args.output or args.memory
    else:
        results = measure(config(args), progress=not args.no_progress, command=command)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=1) + "\n")
    for line in summary_lines(results):
        print(line)  # noqa: T201
    if args.output:
        print(f"wrote {args.output}")  # noqa: T201
    if args.check:
        info = results.get("instructions") or {}
        if not info.get("available"):
            print(f"--check needs instruction counts: {info.get('reason')}")  # noqa: T201
            return 1
        over = over_goals(results)
        for line in over:
            print(f"over the goal: {line}")  # noqa: T201
        if over:
            return 1
        print("every recipe and at() within the overhead goals (instructions)")  # noqa: T201
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m inplace_recipes bench [--quick | --full] [--threads N] [--output FILE]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="inplace-recipes bench", description=DESCRIPTION)
    add_arguments(parser)
    return run(parser.parse_args(argv), argv)
