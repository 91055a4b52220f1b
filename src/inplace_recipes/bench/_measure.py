"""Time every entry against the in-place baseline; record saved bytes and peak memory.

For each entry of :func:`~inplace_recipes.bench._entries.all_entries` and each size,
dtype, write kind, mode (eager or ``torch.compile``) and device, :func:`run`
records forward and forward + backward times (``torch.utils.benchmark``:
median and interquartile range over interleaved rounds, and the fastest call
of each round) as ratios to the in-place baseline of the same run (the ratio
of the fastest rounds, with a bootstrap interval: :mod:`.intervals`; the
ratio of the medians is kept beside it), the bytes autograd saves for backward, the
peak memory of one step in the two ways a caller holds the tensor it writes
from (:func:`held_step`) and the page faults per step. Every entry is first
checked against the reference (``clone()`` then setitem): a number is only
recorded for code proven correct. :func:`fill_memory` counts the peaks again
for every record of a results file: allocations do not depend on the
machine's load, so they need no new timed run.

Each configuration passes the self-consistency check
(:mod:`~inplace_recipes.bench._consistency`) or is measured again, up to
``Config.attempts`` times; one that never passes is marked ``noisy``.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import platform
import random
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ..compare import close, compare_gradients
from ..recipes import RECIPES, NotApplicable
from . import _consistency as consistency
from ._entries import (
    INSTRUCTION_WRITES,
    OVERHEAD_WRITES,
    WRITES,
    all_entries,
    forward_fn,
    overhead_entries,
    shape_for,
    write_fn,
)
from ._intervals import ratio_interval, ratio_of_minima, seconds
from ._memory import peak_bytes, saved_bytes, saved_storages
from ._timing import CLOCKS, timed

__all__ = [
    "CLOCKS",
    "FULL",
    "QUICK",
    "Config",
    "fill_memory",
    "held_step",
    "provenance",
    "remeasure_noisy",
    "run",
    "temporary_step",
    "timed",
]


@dataclass(frozen=True)
class Config:
    """What one benchmark run measures."""

    sizes: tuple[int, ...] = (10**2, 10**3, 10**4, 10**5, 10**6, 10**7)
    dtypes: tuple[str, ...] = ("float32", "float64")
    writes: tuple[str, ...] = tuple(WRITES)
    entries: tuple[str, ...] = field(default_factory=all_entries)
    devices: tuple[str, ...] = ("cpu", "cuda")
    #: ``torch.compile`` runs for these sizes, float32 only (compiling is slow).
    compile_sizes: tuple[int, ...] = (10**4, 10**6)
    compile_dtypes: tuple[str, ...] = ("float32",)
    #: The raw one-liners and ``at()`` (:func:`~inplace_recipes.bench._entries.overhead_entries`) run at these
    #: sizes only, in the first dtype, eager.
    overhead_sizes: tuple[int, ...] = (10**3, 10**4, 10**6)
    #: Seconds ``Timer.blocked_autorange`` spends on each measurement, split
    #: over ``rounds`` interleaved rounds of every entry.
    min_run_time: float = 0.2
    rounds: int = 4
    threads: int = 1
    #: Count peak memory in both forms, the tensor written from a temporary and
    #: kept alive through backward (CPU: two ``torch.profiler`` passes per entry).
    peak: bool = True
    #: Measure a configuration up to this many times until it passes the
    #: self-consistency check.
    attempts: int = 3
    #: Instruction counts (callgrind) of the overhead entries at these sizes.
    instruction_sizes: tuple[int, ...] = (10**3,)
    #: Count instructions in a second process while the timing runs (a 2-core
    #: machine's other core), not before it: quick, and a little noisier.
    instructions_alongside: bool = False
    #: ``audit()`` and ``detect_anomaly`` on the MLP, side by side.
    audit: bool = True
    #: ``"cpu"``: the process's CPU time (``time.process_time``), which the
    #: time other processes hold the cores does not inflate; ``"wall"``: wall
    #: time (``time.perf_counter``). Alike on a quiet machine for this
    #: single-threaded work; on a shared one only CPU time is stable. CUDA
    #: runs always use wall time (the host waits for the device).
    clock: str = "cpu"


#: ``--quick``: the overhead table in instructions at 1e3 (counted on the
#: other core while the timing runs) and short timings at 1e3 and 1e4,
#: float32, eager.
QUICK = Config(
    sizes=(10**3, 10**4),
    dtypes=("float32",),
    writes=OVERHEAD_WRITES,
    compile_sizes=(),
    overhead_sizes=(10**3, 10**4),
    min_run_time=0.02,
    rounds=2,
    peak=False,
    attempts=2,
    instructions_alongside=True,
)
#: The full run committed to ``docs/measurements/bench/``: instructions at every
#: overhead size (1e6 takes callgrind about four minutes); eight interleaved
#: rounds, so the bootstrap interval of each ratio has eight pairs to resample.
FULL = Config(instruction_sizes=(10**3, 10**4, 10**6), rounds=8, min_run_time=0.25, attempts=2)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    return platform.processor() or platform.machine()


def _git_commit() -> str | None:
    try:
        root = Path(__file__).resolve().parents[3]
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("-dirty" if dirty else "")


def _load() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (other processes competing for the CPUs)."""
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:  # pragma: no cover - not Unix
        return None


def provenance(config: Config, devices: Sequence[str], command: str) -> dict[str, Any]:
    """Where and how a run was made (taken when it starts)."""
    info: dict[str, Any] = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "threads": config.threads,
        "interop_threads": torch.get_num_interop_threads(),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "git_commit": _git_commit(),
        "devices": list(devices),
        "load_average_start": _load(),
        # glibc malloc settings change how often a new full-size tensor is
        # fresh memory from the OS (page faults): recorded, not changed.
        "allocator_env": {
            k: v for k, v in os.environ.items() if k.startswith("MALLOC_") or k == "LD_PRELOAD"
        },
    }
    if "cuda" in devices:
        info["cuda_device"] = torch.cuda.get_device_name()
        info["cuda_version"] = torch.version.cuda
    return info


@dataclass
class _Plan:
    device: str
    dtype: str
    size: int
    write: str
    modes: list[str] = field(default_factory=list)


def _plans(config: Config, devices: Sequence[str]) -> list[_Plan]:
    plans = []
    for device in devices:
        for dtype in config.dtypes:
            for size in config.sizes:
                for write in config.writes:
                    modes = ["eager"]
                    if size in config.compile_sizes and dtype in config.compile_dtypes:
                        modes.append("compile")
                    plans.append(_Plan(device, dtype, size, write, modes))
    return plans


def _entries_for(config: Config, plan: _Plan, mode: str) -> list[str]:
    overhead = (
        mode == "eager" and plan.size in config.overhead_sizes and plan.dtype == config.dtypes[0]
    )
    only_there = overhead_entries()
    return [e for e in config.entries if overhead or e not in only_there]


def _checked_recipes(config: Config, device: str, dtype: torch.dtype) -> dict[str, dict[str, Any]]:
    """``compare_gradients`` (weighted loss, value gradients) for each write, on a small tensor."""
    out: dict[str, dict[str, Any]] = {}
    names = [e for e in config.entries if e in RECIPES]
    for write in config.writes:
        shape = shape_for(100)
        x = torch.rand(shape, dtype=dtype, device=device, requires_grad=True) * 1
        index, value = WRITES[write](shape, x)
        report = compare_gradients(x, index, value, names)
        out[write] = {
            name: {"ok": r.ok, "not_applicable": r.not_applicable, "problems": r.problems}
            for name, r in report.results.items()
        }
    return out


@dataclass
class _Step:
    forward: Callable[[], Any]
    #: ``y = write(a + b, ...)`` and backward: the tensor written from is a temporary.
    both: Callable[[], tuple[Tensor, tuple[Tensor, ...]]]
    #: The same step with the tensor written from kept alive (:func:`held_step`).
    held: Callable[[], tuple[Tensor, tuple[Tensor, ...]]] | None = None


def _wrt(a: Tensor, b: Tensor, value: Any) -> list[Tensor]:
    wrt = [a, b]
    if isinstance(value, Tensor) and value.requires_grad:
        wrt.append(value)
    return wrt


def held_step(
    write: Callable[[Tensor], Tensor], a: Tensor, b: Tensor, value: Any
) -> Callable[[], tuple[Tensor, tuple[Tensor, ...]]]:
    """The benchmark's step as a caller writes it who keeps the tensor it wrote from.

    ``c = a + b; y = write(c)``, with ``c`` referenced (here by a list, as a
    module's attribute or a name used again would) until backward has run.
    The timed step, ``y = write(a + b)``, is the other form: ``c`` is a
    temporary, freed as soon as the write returns unless backward saved it,
    which is also what ``c = write(c)`` (rebinding the name) gives. An
    in-place write is the same in both forms (``y`` *is* ``c``); a recipe
    keeps ``c`` and its result alive together in this one.

    >>> a, b = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    >>> step = held_step(lambda c: c * 2, a, b, 0.0)
    >>> y, (grad_a, grad_b) = step()
    >>> y, grad_a
    (tensor([4., 4., 4.], grad_fn=<MulBackward0>), tensor([2., 2., 2.]))
    """
    wrt = _wrt(a, b, value)

    def held() -> tuple[Tensor, tuple[Tensor, ...]]:
        kept = [a + b]  # the caller's reference: alive until this step returns
        y = write(kept[0])
        return y, torch.autograd.grad(y.sum(), wrt)

    return held


def temporary_step(
    write: Callable[[Tensor], Tensor], a: Tensor, b: Tensor, value: Any
) -> Callable[[], tuple[Tensor, tuple[Tensor, ...]]]:
    """The benchmark's timed step, ``y = write(a + b)`` then backward: the tensor written
    from is a temporary (the other form of :func:`held_step`); ``y`` is returned, as a
    caller keeps its result.

    >>> a, b = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    >>> temporary_step(lambda c: c * 2, a, b, 0.0)()[1][0]
    tensor([2., 2., 2.])
    """
    return _make_step(lambda a, b: write(a + b), a, b, value).both


def _held_for(
    entry: str, mode: str, a: Tensor, b: Tensor, index: Any, value: Any
) -> Callable[[], tuple[Tensor, tuple[Tensor, ...]]]:
    """:func:`held_step` of ``entry`` (compiled as the write alone under ``torch.compile``)."""
    write = write_fn(entry)

    def written(c: Tensor) -> Tensor:
        return write(c, index, value)

    return held_step(_compile(written) if mode == "compile" else written, a, b, value)


def _make_step(
    forward: Callable[[Tensor, Tensor], Tensor], a: Tensor, b: Tensor, value: Any
) -> _Step:
    wrt = _wrt(a, b, value)

    def fwd() -> Tensor:
        return forward(a, b).sum()

    def both() -> tuple[Tensor, tuple[Tensor, ...]]:
        y = forward(a, b)
        return y, torch.autograd.grad(y.sum(), wrt)

    return _Step(fwd, both)


def _agree(got: tuple[Tensor, tuple[Tensor, ...]], want: tuple[Tensor, tuple[Tensor, ...]]) -> bool:
    pairs = [(got[0], want[0]), *zip(got[1], want[1], strict=True)]
    return all(close(g.detach(), w.detach()) for g, w in pairs)


def _stats(times: list[float], round_minima: list[float] | None = None) -> dict[str, Any]:
    """Median and interquartile range of per-call times, how many blocks, and the
    fastest call of each interleaved round (``round_minima``, :mod:`.intervals`)."""
    q = torch.tensor(times, dtype=torch.float64).quantile(
        torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)
    )
    stats: dict[str, Any] = {"median": float(q[1]), "iqr": float(q[2] - q[0]), "blocks": len(times)}
    if round_minima:
        stats["min"] = min(round_minima)
        stats["round_minima"] = list(round_minima)
    return stats


def run(
    config: Config = QUICK,
    *,
    progress: bool = False,
    command: str = "inplace_recipes.bench.run()",
) -> dict[str, Any]:
    """Measure ``config``; return a JSON-ready dict of provenance and records.

    Each record is one entry at one device, dtype, size, write and mode:
    times in seconds with ratios to ``"inplace"``, saved bytes, peak bytes.

    >>> tiny = Config(sizes=(100,), dtypes=("float32",), writes=("element",),
    ...               entries=("inplace", "plain_clone", "where"), compile_sizes=(),
    ...               min_run_time=0.001, peak=False, instruction_sizes=(), audit=False)
    >>> [(r["entry"], r["saved_bytes"]) for r in run(tiny)["records"]]
    [('inplace', 0), ('plain_clone', 0), ('where', 100)]
    """
    devices = [
        d for d in config.devices if d == "cpu" or (d == "cuda" and torch.cuda.is_available())
    ]
    old_threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        return _run(config, devices, progress, command)
    finally:
        torch.set_num_threads(old_threads)


_BAR = "{desc}{percentage:3.0f}%|{bar}| {n:.0f}/{total} [{elapsed}<{remaining}]"


def _run(config: Config, devices: list[str], progress: bool, command: str) -> dict[str, Any]:
    started = time.perf_counter()
    prov = provenance(config, devices, command)
    out: dict[str, Any] = {"provenance": prov, "config": asdict(config)}
    plans = _plans(config, devices)
    counting: Future[dict[str, Any]] | None = None
    if config.instruction_sizes:  # first: a subprocess that imports this code as it is now
        from ._instructions import instruction_counts

        writes = [w for w in config.writes if w in INSTRUCTION_WRITES]
        if config.instructions_alongside:  # on the other core, while the timing runs
            counting = ThreadPoolExecutor(1).submit(
                instruction_counts, config.instruction_sizes, writes
            )
        else:
            out["instructions"] = instruction_counts(config.instruction_sizes, writes)
    if config.audit:
        from ._audit_cost import audit_overhead

        out["audit"] = audit_overhead(
            min_run_time=max(0.5, config.min_run_time * 5),
            rounds=config.rounds,
            threads=config.threads,
            clock=config.clock,
        )
    total = sum(len(_entries_for(config, p, m)) for p in plans for m in p.modes)
    bar: Any = None
    if progress:
        from tqdm import tqdm

        # integer ticks (no float drift past the total): per entry, one per round
        # for its checks and nine per timed round; shown in entries
        ticks = 10 * config.rounds
        bar = tqdm(
            total=total * ticks,
            unit="entry",
            unit_scale=1 / ticks,
            dynamic_ncols=True,
            bar_format=_BAR,
        )
    checks = {
        (device, dtype): _checked_recipes(config, device, getattr(torch, dtype))
        for device in devices
        for dtype in config.dtypes
    }
    records: list[dict[str, Any]] = []
    repeated: list[dict[str, Any]] = []
    try:
        for plan in plans:
            for mode in plan.modes:
                if bar is not None:
                    bar.set_description(
                        f"{plan.device} {plan.dtype} {plan.size:.0e} {plan.write} {mode}"
                    )
                measured, attempts = _measure_consistent(
                    config, plan, mode, checks[plan.device, plan.dtype], bar
                )
                records.extend(measured)
                if attempts > 1:
                    where = (plan.device, plan.dtype, plan.size, plan.write, mode)
                    keys = ("device", "dtype", "size", "write", "mode")
                    repeated.append(dict(zip(keys, where, strict=True)) | {"attempts": attempts})
    finally:
        if bar is not None:
            bar.close()
    if counting is not None:
        out["instructions"] = counting.result()
    _add_ratios(records)
    noisy = consistency.inconsistencies(records)
    prov["seconds"] = time.perf_counter() - started
    prov["load_average_end"] = _load()
    prov["noisy"] = bool(noisy)
    out["consistency"] = {
        "tolerance": consistency.TOLERANCE,
        "pairs": [list(p) for p in consistency.SAME_OPERATION],
        "attempts": config.attempts,
        "repeated": repeated,
        "noisy": noisy,
    }
    out["checks"] = {f"{d}/{t}": c for (d, t), c in checks.items()}
    out["records"] = records
    return out


def _measure_consistent(
    config: Config, plan: _Plan, mode: str, checks: dict[str, dict[str, Any]], bar: Any
) -> tuple[list[dict[str, Any]], int]:
    """Measure one configuration until its same-operation pairs agree; keep the best attempt."""
    best: list[dict[str, Any]] = []
    best_worst = math.inf
    attempt = 0
    for attempt in range(1, max(1, config.attempts) + 1):
        records = _measure(config, plan, mode, checks, bar if attempt == 1 else None)
        disagreement = consistency.worst(records)
        if disagreement < best_worst:
            best, best_worst = records, disagreement
        if not consistency.inconsistencies(records):
            break
    for r in best:
        r["attempts"] = attempt
    return best, attempt


def _measure(
    config: Config, plan: _Plan, mode: str, checks: dict[str, dict[str, Any]], bar: Any
) -> list[dict[str, Any]]:
    """Every entry for one plan: check, then time all of them in interleaved rounds."""
    device = torch.device(plan.device)
    dtype = getattr(torch, plan.dtype)
    shape = shape_for(plan.size)
    gen = torch.Generator().manual_seed(plan.size)
    a = torch.rand(shape, generator=gen, dtype=dtype).to(device).requires_grad_(True)
    b = torch.rand(shape, generator=gen, dtype=dtype).to(device).requires_grad_(True)
    index, value = WRITES[plan.write](shape, a)
    reference = _make_step(forward_fn("clone", index, value, a), a, b, value).both()
    records: list[dict[str, Any]] = []
    steps: dict[str, _Step] = {}
    for entry in _entries_for(config, plan, mode):
        record: dict[str, Any] = {
            "device": plan.device,
            "dtype": plan.dtype,
            "size": plan.size,
            "shape": list(shape),
            "write": plan.write,
            "mode": mode,
            "entry": entry,
            "applicable": True,
            "correct": None,
            "forward": None,
            "forward_backward": None,
            "saved_bytes": None,
            "saved_input_bytes": None,
            "peak_bytes": None,
            "peak_bytes_held": None,
            "minor_faults": None,
            "compiled_saved_bytes": None,
            "graph_breaks": None,
            "picks": None,
            "note": None,
        }
        records.append(record)
        try:
            step = _prepare_entry(record, entry, mode, a, b, index, value, reference, checks)
        except NotApplicable as exc:
            record["applicable"] = False
            record["note"] = str(exc)
            step = None
        if step is not None:
            steps[entry] = step
            if config.peak:
                _count_peaks(record, step, device)
        if bar is not None:  # a tenth of the entry's share: checked (and compiled)
            bar.update(config.rounds)
    # Interleaved rounds: a burst of load from other processes lands on every
    # entry alike instead of on whichever was being timed.
    # Each round in its own order (seeded): what ran just before an entry
    # (the allocator's state, the caches) varies instead of always favouring
    # or penalising the same entry.
    samples: dict[tuple[str, str], list[float]] = {}
    minima: dict[tuple[str, str], list[float]] = {}  # the fastest call of each round
    for round_ in range(config.rounds):
        order = list(steps.items())
        random.Random(round_).shuffle(order)
        for entry, step in order:
            for phase, fn in (("forward", step.forward), ("forward_backward", step.both)):
                times = timed(
                    fn,
                    threads=config.threads,
                    min_run_time=config.min_run_time / config.rounds,
                    clock="wall" if device.type == "cuda" else config.clock,
                )
                samples.setdefault((entry, phase), []).extend(times)
                minima.setdefault((entry, phase), []).append(min(times))
            if bar is not None:
                bar.update(9)
    for record in records:
        for phase in ("forward", "forward_backward"):
            if (record["entry"], phase) in samples:
                record[phase] = _stats(
                    samples[record["entry"], phase], minima[record["entry"], phase]
                )
        if record["entry"] in steps:
            record["minor_faults"] = _minor_faults(
                steps[record["entry"]].both, record["forward_backward"]["median"]
            )
        if bar is not None and record["entry"] not in steps:
            bar.update(9 * config.rounds)  # refused or incorrect: nothing was timed
    return records


def _count_peaks(record: dict[str, Any], step: _Step, device: torch.device) -> None:
    """The peak bytes of ``step``: temporary (``peak_bytes``) and held (``peak_bytes_held``)."""
    record["peak_bytes"] = peak_bytes(step.both, device)
    record["peak_bytes_held"] = None if step.held is None else peak_bytes(step.held, device)


def _minor_faults(step: Callable[[], Any], seconds: float) -> float | None:
    """Page faults served without I/O per call of ``step`` (fresh memory from the OS).

    ``None`` where ``resource`` is missing (Windows).
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return None
    calls = max(3, min(50, math.ceil(0.05 / max(seconds, 1e-9))))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        step()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls


def _prepare_entry(
    record: dict[str, Any],
    entry: str,
    mode: str,
    a: Tensor,
    b: Tensor,
    index: Any,
    value: Any,
    reference: tuple[Tensor, tuple[Tensor, ...]],
    checks: dict[str, dict[str, Any]],
) -> _Step | None:
    """Check ``entry`` against the reference and fill its memory columns; return its step."""
    if entry == "plain_clone":  # the floor: one plain copy, no write, no backward work
        x = (a + b).detach()
        clone: Callable[[], Tensor] = x.clone
        if mode == "compile":
            torch._dynamo.reset()
            clone = _compile(lambda: x.clone())
            clone()
        record.update(correct=True, saved_bytes=0, saved_input_bytes=0)
        return _Step(clone, lambda: (clone(), ()))
    recipe = entry if entry in RECIPES else entry[4:] if entry.startswith("raw_") else None
    if recipe in RECIPES and recipe in checks[record["write"]]:
        check = checks[record["write"]][recipe]
        if check["not_applicable"]:
            raise NotApplicable(check["not_applicable"])
        if not check["ok"] and entry == recipe:
            record.update(correct=False, note="; ".join(check["problems"]))
            return None
    if entry == "at":
        from .._pick import best_recipe

        record["picks"] = best_recipe(a + b, index, value)
    forward = forward_fn(entry, index, value, a)
    # saved bytes of the write alone, on the non-leaf c = a + b, in eager mode
    if entry.startswith("raw_"):
        _, seen = saved_storages(lambda: forward(a, b))
        record["saved_bytes"] = sum(seen.values())
    else:
        fn = write_fn(entry)
        record["saved_bytes"], record["saved_input_bytes"] = saved_bytes(fn, a + b, index, value)
    if mode == "compile":
        from torch._dynamo.utils import counters

        torch._dynamo.reset()
        counters.clear()
        forward = _compile(forward)
        _, seen = saved_storages(lambda: forward(a, b))  # compiles the forward
        record["compiled_saved_bytes"] = sum(seen.values())
        record["graph_breaks"] = sum(counters["graph_break"].values())
    step = _make_step(forward, a, b, value)
    if not _agree(step.both(), reference):  # also compiles the backward
        record.update(correct=False, note="disagrees with clone + setitem in the benchmark graph")
        return None
    step.held = _held_for(entry, mode, a, b, index, value)
    if not _agree(step.held(), reference):  # compiles the held form's write
        record.update(correct=False, note="disagrees with clone + setitem when c is kept alive")
        return None
    record["correct"] = True
    return step


def _compile(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    import logging
    import warnings

    from torch._logging import set_logs  # type: ignore[attr-defined]

    set_logs(dynamo=logging.ERROR, inductor=logging.ERROR)
    compiled = torch.compile(fn)

    def quiet(*args: Any) -> Tensor:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return compiled(*args)

    return quiet


def _add_ratios(records: list[dict[str, Any]]) -> None:
    """Ratios to the in-place baseline (same mode) and, for compile, to eager in-place.

    Every ratio is of :func:`~.intervals.seconds` (the fastest round's call);
    ``ratio_{phase}_median`` keeps the ratio of the medians beside it.
    """

    def key(r: dict[str, Any], mode: str) -> tuple[Any, ...]:
        return (r["device"], r["dtype"], r["size"], r["write"], mode)

    base = {key(r, r["mode"]): r for r in records if r["entry"] == "inplace"}
    clone = {key(r, r["mode"]): r for r in records if r["entry"] == "plain_clone"}
    step = {key(r, r["mode"]): r for r in records if r["entry"] == "inplace_on_clone"}
    for r in records:
        for phase in ("forward", "forward_backward"):
            t = r[phase]
            for column in ("", "_median", "_eager_inplace", "_floor", "_floor_step"):
                r[f"ratio_{phase}{column}"] = None
            if t is None:
                continue
            on_clone = step.get(key(r, r["mode"]))
            if on_clone and on_clone[phase]:
                r[f"ratio_{phase}_floor_step"] = seconds(t) / seconds(on_clone[phase])
            own = base.get(key(r, r["mode"]))
            eager = base.get(key(r, "eager"))
            floor = clone.get(key(r, r["mode"]))
            if own and own[phase]:
                r[f"ratio_{phase}"] = seconds(t) / seconds(own[phase])
                r[f"ratio_{phase}_median"] = t["median"] / own[phase]["median"]
                _add_robust_ratio(r, phase, t, own[phase])
            if eager and eager[phase]:
                r[f"ratio_{phase}_eager_inplace"] = seconds(t) / seconds(eager[phase])
            if own and own[phase] and floor and floor[phase]:
                r[f"ratio_{phase}_floor"] = seconds(t) / (
                    seconds(own[phase]) + seconds(floor[phase])
                )


def _add_robust_ratio(
    r: dict[str, Any], phase: str, t: dict[str, Any], base: dict[str, Any]
) -> None:
    """The ratio of the fastest rounds and its bootstrap interval, where both have rounds."""
    mine, theirs = t.get("round_minima"), base.get("round_minima")
    if not mine or not theirs or len(mine) != len(theirs):
        return
    r[f"ratio_{phase}_min"] = ratio_of_minima(mine, theirs)
    r[f"ratio_{phase}_interval"] = list(ratio_interval(mine, theirs))


def remeasure_noisy(
    results: dict[str, Any], *, command: str = "remeasure_noisy()", limit: int | None = None
) -> list[str]:
    """Measure again every configuration of ``results`` that fails the self-consistency check.

    The records of each such configuration (all its entries: their ratios
    share one baseline) are replaced by a new measurement made with the run's
    own config, up to ``attempts`` times until it agrees with itself; ratios
    and the verdict are recomputed, and ``provenance.remeasured`` says what,
    when, and under what load. Returns the configurations measured again
    (at most ``limit`` of them, the smallest first).
    """
    fields: dict[str, Any] = {
        k: tuple(v) if isinstance(v, list) else v for k, v in results["config"].items()
    }
    config = Config(**fields)
    noisy = consistency.inconsistencies(results["records"], results["consistency"]["tolerance"])
    keys = list(
        dict.fromkeys((p["device"], p["dtype"], p["size"], p["write"], p["mode"]) for p in noisy)
    )[:limit]
    if not keys:
        return []
    old_threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    try:
        checks = {(d, t): _checked_recipes(config, d, getattr(torch, t)) for d, t, *_ in set(keys)}
        for device, dtype, size, write, mode in keys:
            plan = _Plan(device, dtype, size, write, [mode])
            fresh, attempts = _measure_consistent(config, plan, mode, checks[device, dtype], None)
            results["records"] = [
                r
                for r in results["records"]
                if consistency.group_key(r) != (device, dtype, size, write, mode)
            ] + fresh
            where = dict(
                zip(
                    ("device", "dtype", "size", "write", "mode"),
                    (device, dtype, size, write, mode),
                    strict=True,
                )
            )
            results["consistency"]["repeated"].append(
                where | {"attempts": attempts, "remeasured": True}
            )
    finally:
        torch.set_num_threads(old_threads)
    _add_ratios(results["records"])
    still = consistency.inconsistencies(results["records"], results["consistency"]["tolerance"])
    results["consistency"]["noisy"] = still
    prov = results["provenance"]
    prov["noisy"] = bool(still)
    prov.setdefault("remeasured", []).append(
        {
            "command": command,
            "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "git_commit": _git_commit(),
            "load_average": _load(),
            "configurations": [list(k) for k in keys],
        }
    )
    return [" ".join(map(str, k)) for k in keys]


def _memory_step(
    entry: str, mode: str, a: Tensor, b: Tensor, index: Any, value: Any
) -> tuple[_Step, list[Callable[[], tuple[Tensor, tuple[Tensor, ...]]]]]:
    """``entry``'s step as :func:`run` builds it, compiled where ``mode`` says, and the
    forms of it that must agree with the reference before they are counted."""
    if entry == "plain_clone":
        x = (a + b).detach()
        clone: Callable[[], Tensor] = x.clone
        if mode == "compile":
            torch._dynamo.reset()
            clone = _compile(lambda: x.clone())
        clone()
        return _Step(clone, lambda: (clone(), ())), []
    forward = forward_fn(entry, index, value, a)
    if mode == "compile":
        torch._dynamo.reset()
        forward = _compile(forward)
    step = _make_step(forward, a, b, value)
    step.held = _held_for(entry, mode, a, b, index, value)
    return step, [step.both, step.held]


def fill_memory(
    results: dict[str, Any], *, command: str = "fill_memory()", progress: bool = False
) -> dict[str, Any]:
    """Count the peak bytes of every timed record of ``results`` again, in both forms.

    Allocations are counted, not timed (:func:`~inplace_recipes.bench._memory.peak_bytes`),
    so a file's memory fields can be filled in without a new timed run: each
    configuration's tensors are made again as :func:`run` made them (the
    same seed), each entry that the run found correct is checked against the
    reference again, in both forms, and its ``peak_bytes`` (the tensor written
    from a temporary) and ``peak_bytes_held`` (kept alive, :func:`held_step`)
    are counted with the run's own thread count. ``provenance.memory`` says
    when, at which commit and with which torch, and which ``peak_bytes`` the
    count changed. Returns that provenance.
    """
    started = time.perf_counter()
    threads = int(results.get("config", {}).get("threads", 1))
    groups: dict[tuple[str, str, int, str, str], list[dict[str, Any]]] = {}
    for r in results["records"]:
        groups.setdefault(consistency.group_key(r), []).append(r)
    bar: Any = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(results["records"]), unit="entry", dynamic_ncols=True)
    changed: list[dict[str, Any]] = []
    counted = 0
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for (device_name, dtype_name, size, write, mode), records in groups.items():
            device = torch.device(device_name)
            dtype = getattr(torch, dtype_name)
            shape = shape_for(size)
            gen = torch.Generator().manual_seed(size)
            a = torch.rand(shape, generator=gen, dtype=dtype).to(device).requires_grad_(True)
            b = torch.rand(shape, generator=gen, dtype=dtype).to(device).requires_grad_(True)
            index, value = WRITES[write](shape, a)
            reference = _make_step(forward_fn("clone", index, value, a), a, b, value).both()
            for record in records:
                if bar is not None:
                    bar.set_description(f"{device_name} {dtype_name} {size:.0e} {write} {mode}")
                    bar.update(1)
                if not (record.get("applicable") and record.get("correct")):
                    record["peak_bytes"] = record["peak_bytes_held"] = None
                    continue
                step, checked = _memory_step(record["entry"], mode, a, b, index, value)
                for form in checked:
                    if not _agree(form(), reference):
                        raise RuntimeError(
                            f"{record['entry']} ({device_name} {dtype_name} {size} {write} "
                            f"{mode}) no longer agrees with clone + setitem"
                        )
                old = record.get("peak_bytes")
                _count_peaks(record, step, device)
                counted += 1
                if old is not None and old != record["peak_bytes"]:
                    where = dict(
                        zip(
                            ("device", "dtype", "size", "write", "mode"),
                            (device_name, dtype_name, size, write, mode),
                            strict=True,
                        )
                    )
                    changed.append(
                        where | {"entry": record["entry"], "was": old, "now": record["peak_bytes"]}
                    )
    finally:
        torch.set_num_threads(old_threads)
        if bar is not None:
            bar.close()
    results.setdefault("config", {})["peak"] = True
    memory = {
        "command": command,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "torch": torch.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "threads": threads,
        "records_counted": counted,
        "peak_bytes_changed": changed,
        "seconds": time.perf_counter() - started,
    }
    results["provenance"]["memory"] = memory
    return memory
