"""Measure every recipe against the in-place baseline: time, saved bytes, peak memory.

The graph is the classic one, ``c = a + b; c[index] = value; c.sum().backward()``,
with ``c[index] = value`` replaced by each recipe. For each entry (``"inplace"``,
the two floors below, every name in :data:`~inplace_recipes.RECIPES`) and each
size, dtype, write kind, mode (eager or ``torch.compile``) and device, :func:`run`
records forward and forward + backward times (``torch.utils.benchmark``: median
and interquartile range over interleaved rounds) as ratios to the in-place
baseline of the same run, the bytes autograd saves for backward, the peak
memory of one step and the page faults per step.

Two floors. ``"plain_clone"`` is a plain ``x.clone()`` of the same tensor,
timed alone: an out-of-place recipe must write a new tensor, so the issue's
floor is in-place time + that clone (``ratio_*_floor``; a clone has no backward
work, so both its times are the forward one). Timed alone the clone runs from a
warm cache into a reused buffer, which no step that keeps three full-size
tensors alive enjoys, so ``"inplace_on_clone"`` measures the floor as one step:
``y = c.clone(); y[index] = value`` with no recipe code around it
(``ratio_*_floor_step``).

Saved bytes count each storage that autograd saves once (by
``untyped_storage().data_ptr()``), whoever allocated it: a saved tensor keeps
its storage alive until backward, whether the recipe made it or the caller
passed it in. The part that aliases the caller's own tensors (``x``, index
tensors, ``value``) is reported apart as ``saved_input_bytes``, memory the
caller may hold anyway.

>>> x = torch.rand(10, requires_grad=True) * 1
>>> saved_bytes(RECIPES["where"], x, torch.arange(10) < 3, 0.0)
(10, 10)
>>> saved_bytes(RECIPES["index_put"], x, 4, 0.0)
(8, 0)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from .compare import close, compare_gradients
from .recipes import RECIPES, NotApplicable, inplace_setitem

__all__ = [
    "ENTRIES",
    "FULL",
    "QUICK",
    "WRITES",
    "Config",
    "answer_columns",
    "load_results",
    "main",
    "peak_bytes",
    "ratio_table",
    "run",
    "saved_bytes",
    "shape_for",
]

#: Where the committed results live, relative to the repository root.
RESULTS_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def shape_for(size: int) -> tuple[int, int]:
    """The 2-D shape used for ``size`` elements: rows x columns, columns a power of ten.

    >>> shape_for(100), shape_for(1_000_000)
    ((10, 10), (1000, 1000))
    """
    digits = max(1, round(math.log10(size)))
    cols = 10 ** math.ceil(digits / 2)
    return size // cols, cols


def _write_element(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    return (shape[0] // 2, shape[1] // 2), 0.0


def _write_row(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    return shape[0] // 2, 0.0


def _write_slice(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    return (slice(None), slice(1, None, 10)), 0.0


def _write_mask(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    n = shape[0] * shape[1]
    gen = torch.Generator().manual_seed(0)
    picked = torch.randperm(n, generator=gen)[: max(1, n // 100)]
    mask = torch.zeros(n, dtype=torch.bool)
    mask[picked] = True
    return mask.view(shape).to(like.device), 0.0


def _write_value_grad(shape: tuple[int, int], like: Tensor) -> tuple[Any, Any]:
    gen = torch.Generator().manual_seed(1)
    value = torch.rand(shape[1], generator=gen, dtype=like.dtype).to(like.device)
    return shape[0] // 2, value.requires_grad_(True)


#: The write kinds: name -> ``make(shape, like) -> (index, value)``.
WRITES: dict[str, Callable[[tuple[int, int], Tensor], tuple[Any, Any]]] = {
    "element": _write_element,  # x[r // 2, c // 2] = 0.0
    "row": _write_row,  # x[r // 2] = 0.0
    "slice": _write_slice,  # x[:, 1::10] = 0.0 (10% of elements, strided)
    "mask": _write_mask,  # x[mask] = 0.0, a random mask with 1% True
    "value_grad": _write_value_grad,  # x[r // 2] = v, v a row that requires grad
}

#: What is measured: the in-place baseline, the clone floor, then every recipe.
ENTRIES: tuple[str, ...] = ("inplace", "plain_clone", "inplace_on_clone", *RECIPES)


@dataclass(frozen=True)
class Config:
    """What one benchmark run measures."""

    sizes: tuple[int, ...] = (10**2, 10**3, 10**4, 10**5, 10**6, 10**7)
    dtypes: tuple[str, ...] = ("float32", "float64")
    writes: tuple[str, ...] = tuple(WRITES)
    entries: tuple[str, ...] = ENTRIES
    devices: tuple[str, ...] = ("cpu", "cuda")
    #: ``torch.compile`` runs for these sizes, float32 only (compiling is slow).
    compile_sizes: tuple[int, ...] = (10**4, 10**6)
    compile_dtypes: tuple[str, ...] = ("float32",)
    #: Seconds ``Timer.blocked_autorange`` spends on each measurement, split
    #: over ``rounds`` interleaved rounds of every entry.
    min_run_time: float = 0.2
    rounds: int = 4
    threads: int = 1
    #: Measure peak memory (CPU: a ``torch.profiler`` pass per configuration).
    peak: bool = True


#: ``--quick``: two sizes, float32, eager, short timings (well under a minute).
QUICK = Config(
    sizes=(10**4, 10**6), dtypes=("float32",), compile_sizes=(), min_run_time=0.04, rounds=2
)
#: The full run committed to ``benchmarks/results/``.
FULL = Config()


# -- memory ------------------------------------------------------------------


def _tensors(obj: Any) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for item in obj for t in _tensors(item)]
    return []


def _saved_storages(fn: Callable[[], Any]) -> tuple[Any, dict[int, int]]:
    """Run ``fn`` and return its result and ``{storage data_ptr: nbytes}`` of what autograd saved."""
    seen: dict[int, int] = {}

    def pack(t: Tensor) -> Tensor:
        storage = t.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, seen


def saved_bytes(
    fn: Callable[[Tensor, Any, Any], Tensor], x: Tensor, index: Any, value: Any
) -> tuple[int, int]:
    """``(all, inputs)``: bytes autograd saves for backward of ``fn(x, index, value)``.

    ``all`` counts each saved storage once; ``inputs`` is the part that is
    the storage of ``x``, an index tensor or ``value``.

    >>> x = torch.rand(4, requires_grad=True) * 1
    >>> saved_bytes(RECIPES["clone"], x, 0, 1.0)
    (0, 0)
    """
    inputs = {t.untyped_storage().data_ptr() for t in _tensors((x, index, value))}
    out, seen = _saved_storages(lambda: fn(x, index, value))
    del out
    return sum(seen.values()), sum(n for ptr, n in seen.items() if ptr in inputs)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence file descriptor 2: the profiler's C++ side logs two lines per use."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def peak_bytes(step: Callable[[], Any], device: torch.device) -> int | None:
    """Peak bytes allocated by ``step`` above what was allocated before it.

    CUDA: ``torch.cuda.max_memory_allocated``. CPU: the allocation and free
    events that ``torch.profiler`` records with ``profile_memory=True``,
    summed in time order (every tensor allocation by torch's CPU allocator,
    forward and backward; Python objects and the allocator's own slack are not
    counted). ``None`` where the profiler gives no events.
    """
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        step()
        torch.cuda.synchronize(device)
        return int(torch.cuda.max_memory_allocated(device) - before)
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    try:
        events = [
            (e.start_ns(), e.nbytes())
            for e in prof.profiler.kineto_results.events()
            if e.name() == "[memory]"
        ]
    except (AttributeError, RuntimeError):  # pragma: no cover - profiler internals moved
        return None
    if not events:
        return None
    live = peak = 0
    for _, nbytes in sorted(events):
        live += nbytes
        peak = max(peak, live)
    return int(peak)


# -- the graph ---------------------------------------------------------------


def _inplace_on_clone(x: Tensor, index: Any, value: Any) -> Tensor:
    """The floor as one step: the in-place write on one plain clone, no recipe code."""
    y = x.clone()
    y[index] = value
    return y


def _write_fn(entry: str) -> Callable[[Tensor, Any, Any], Tensor]:
    if entry == "inplace":
        return inplace_setitem
    if entry == "inplace_on_clone":
        return _inplace_on_clone
    return RECIPES[entry]


def _forward_fn(entry: str, index: Any, value: Any) -> Callable[[Tensor, Tensor], Tensor]:
    """``(a, b) -> y``: the classic forward with ``entry`` as the write."""
    if entry in {"inplace", "inplace_on_clone"}:
        write = _write_fn(entry)

        def forward(a: Tensor, b: Tensor) -> Tensor:
            c = a + b
            return write(c, index, value)

        return forward
    recipe = RECIPES[entry]

    def forward_recipe(a: Tensor, b: Tensor) -> Tensor:
        return recipe(a + b, index, value)

    return forward_recipe


@dataclass
class _Step:
    forward: Callable[[], Tensor]
    both: Callable[[], tuple[Tensor, tuple[Tensor, ...]]]


def _make_step(
    forward: Callable[[Tensor, Tensor], Tensor], a: Tensor, b: Tensor, value: Any
) -> _Step:
    wrt = [a, b]
    if isinstance(value, Tensor) and value.requires_grad:
        wrt.append(value)

    def fwd() -> Tensor:
        return forward(a, b).sum()

    def both() -> tuple[Tensor, tuple[Tensor, ...]]:
        y = forward(a, b)
        return y, torch.autograd.grad(y.sum(), wrt)

    return _Step(fwd, both)


def _agree(got: tuple[Tensor, tuple[Tensor, ...]], want: tuple[Tensor, tuple[Tensor, ...]]) -> bool:
    pairs = [(got[0], want[0]), *zip(got[1], want[1], strict=True)]
    return all(close(g.detach(), w.detach()) for g, w in pairs)


def _time(fn: Callable[[], Any], threads: int, min_run_time: float) -> list[float]:
    """Per-call times of ``fn``, one per block of ``Timer.blocked_autorange``."""
    from torch.utils.benchmark import Timer

    m = Timer("fn()", globals={"fn": fn}, num_threads=threads).blocked_autorange(
        min_run_time=min_run_time
    )
    return list(m.times)


# -- the run -------------------------------------------------------------------


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
        root = Path(__file__).resolve().parents[2]
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


def provenance(config: Config, devices: Sequence[str], command: str) -> dict[str, Any]:
    """Where and how a run was made."""
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
    ...               min_run_time=0.001, peak=False)
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
    plans = _plans(config, devices)
    total = sum(len(p.modes) * len(config.entries) for p in plans)
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
    try:
        for plan in plans:
            for mode in plan.modes:
                if bar is not None:
                    bar.set_description(
                        f"{plan.device} {plan.dtype} {plan.size:.0e} {plan.write} {mode}"
                    )
                records.extend(_measure(config, plan, mode, checks[plan.device, plan.dtype], bar))
    finally:
        if bar is not None:
            bar.close()
    _add_ratios(records)
    return {
        "provenance": provenance(config, devices, command)
        | {"seconds": time.perf_counter() - started},
        "config": asdict(config),
        "checks": {f"{d}/{t}": c for (d, t), c in checks.items()},
        "records": records,
    }


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
    reference = _make_step(_forward_fn("clone", index, value), a, b, value).both()
    records: list[dict[str, Any]] = []
    steps: dict[str, _Step] = {}
    for entry in config.entries:
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
            "minor_faults": None,
            "compiled_saved_bytes": None,
            "graph_breaks": None,
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
                record["peak_bytes"] = peak_bytes(step.both, device)
        if bar is not None:  # a tenth of the entry's share: checked (and compiled)
            bar.update(config.rounds)
    # Interleaved rounds: a burst of load from other processes lands on every
    # entry alike instead of on whichever was being timed.
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(config.rounds):
        for entry, step in steps.items():
            for phase, fn in (("forward", step.forward), ("forward_backward", step.both)):
                times = _time(fn, config.threads, config.min_run_time / config.rounds)
                samples.setdefault((entry, phase), []).extend(times)
            if bar is not None:
                bar.update(9)
    for record in records:
        for phase in ("forward", "forward_backward"):
            if (record["entry"], phase) in samples:
                record[phase] = _stats(samples[record["entry"], phase])
        if record["entry"] in steps:
            record["minor_faults"] = _minor_faults(
                steps[record["entry"]].both, record["forward_backward"]["median"]
            )
        if bar is not None and record["entry"] not in steps:
            bar.update(9 * config.rounds)  # refused or incorrect: nothing was timed
    return records


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


def _stats(times: list[float]) -> dict[str, float]:
    """Median and interquartile range of per-call times, and how many blocks."""
    q = torch.tensor(times, dtype=torch.float64).quantile(
        torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)
    )
    return {"median": float(q[1]), "iqr": float(q[2] - q[0]), "blocks": len(times)}


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
    if entry in RECIPES:
        check = checks[record["write"]][entry]
        if check["not_applicable"]:
            raise NotApplicable(check["not_applicable"])
        if not check["ok"]:
            record.update(correct=False, note="; ".join(check["problems"]))
            return None
    forward = _forward_fn(entry, index, value)
    # saved bytes of the write alone, on the non-leaf c = a + b, in eager mode
    fn = _write_fn(entry)
    record["saved_bytes"], record["saved_input_bytes"] = saved_bytes(fn, a + b, index, value)
    if mode == "compile":
        from torch._dynamo.utils import counters

        torch._dynamo.reset()
        counters.clear()
        forward = _compile(forward)
        _, seen = _saved_storages(lambda: forward(a, b))  # compiles the forward
        record["compiled_saved_bytes"] = sum(seen.values())
        record["graph_breaks"] = sum(counters["graph_break"].values())
    step = _make_step(forward, a, b, value)
    if not _agree(step.both(), reference):  # also compiles the backward
        record.update(correct=False, note="disagrees with clone + setitem in the benchmark graph")
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
    """Ratios to the in-place baseline (same mode) and, for compile, to eager in-place."""

    def key(r: dict[str, Any], mode: str) -> tuple[Any, ...]:
        return (r["device"], r["dtype"], r["size"], r["write"], mode)

    base = {key(r, r["mode"]): r for r in records if r["entry"] == "inplace"}
    clone = {key(r, r["mode"]): r for r in records if r["entry"] == "plain_clone"}
    step = {key(r, r["mode"]): r for r in records if r["entry"] == "inplace_on_clone"}
    for r in records:
        for phase in ("forward", "forward_backward"):
            t = r[phase]
            r[f"ratio_{phase}"] = None
            r[f"ratio_{phase}_eager_inplace"] = None
            r[f"ratio_{phase}_floor"] = None
            r[f"ratio_{phase}_floor_step"] = None
            if t is None:
                continue
            on_clone = step.get(key(r, r["mode"]))
            if on_clone and on_clone[phase]:
                r[f"ratio_{phase}_floor_step"] = t["median"] / on_clone[phase]["median"]
            own = base.get(key(r, r["mode"]))
            eager = base.get(key(r, "eager"))
            floor = clone.get(key(r, r["mode"]))
            if own and own[phase]:
                r[f"ratio_{phase}"] = t["median"] / own[phase]["median"]
            if eager and eager[phase]:
                r[f"ratio_{phase}_eager_inplace"] = t["median"] / eager[phase]["median"]
            if own and own[phase] and floor and floor[phase]:
                r[f"ratio_{phase}_floor"] = t["median"] / (
                    own[phase]["median"] + floor[phase]["median"]
                )


# -- reading results -----------------------------------------------------------


def load_results(path: str | Path | None = None) -> dict[str, Any]:
    """The committed results (``benchmarks/results/cpu-full.json`` by default).

    >>> results = load_results()
    >>> sorted(results)
    ['checks', 'config', 'provenance', 'records']
    """
    path = Path(path) if path is not None else RESULTS_DIR / "cpu-full.json"
    data: dict[str, Any] = json.loads(Path(path).read_text())
    return data


def ratio_table(
    results: dict[str, Any],
    *,
    phase: str = "forward_backward",
    device: str = "cpu",
    dtype: str = "float32",
    write: str = "element",
    mode: str = "eager",
    against: str = "",
) -> dict[str, dict[int, float | None]]:
    """``{entry: {size: ratio}}`` from ``results``; ``against`` is ``""``, ``"floor"`` or ``"eager_inplace"``.

    >>> tiny = {"records": [{"device": "cpu", "dtype": "float32", "write": "element",
    ...     "mode": "eager", "entry": "where", "size": 100, "ratio_forward_backward": 2.0}]}
    >>> ratio_table(tiny)
    {'where': {100: 2.0}}
    """
    column = f"ratio_{phase}" + (f"_{against}" if against else "")
    table: dict[str, dict[int, float | None]] = {}
    for r in results["records"]:
        if (r["device"], r["dtype"], r["write"], r["mode"]) == (device, dtype, write, mode):
            table.setdefault(r["entry"], {})[r["size"]] = r.get(column)
    return table


def answer_columns(path: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Per recipe and ``"inplace"``: saved bytes (live) and speed ratio (committed results).

    ``saved_bytes`` is measured now: a one-element write on a float32 non-leaf
    of 1e6 elements. ``speed_ratio`` is the forward + backward time over
    in-place at 1e6 elements, one element, eager, CPU, float32, from the
    committed results (``None`` where they lack it).

    >>> cols = answer_columns()
    >>> cols["inplace"]["saved_bytes"], cols["index_put"]["saved_bytes"]
    (0, 8)
    """
    shape = shape_for(10**6)
    x = torch.rand(shape, requires_grad=True)
    index, value = WRITES["element"](shape, x)
    try:
        results: dict[str, Any] | None = load_results(path)
    except (OSError, ValueError):
        results = None
    ratios: dict[str, float | None] = {}
    source = "saved bytes measured live; no committed benchmark results found"
    if results is not None:
        table = ratio_table(results)
        ratios = {name: table.get(name, {}).get(10**6) for name in table}
        prov = results["provenance"]
        source = (
            f"saved bytes measured live (torch {torch.__version__}); speed ratio from "
            f"benchmarks/results ({prov['torch']}, {prov['cpu']}, {prov['threads']} thread(s), "
            f"{prov['date'][:10]})"
        )
    columns: dict[str, dict[str, Any]] = {}
    for name in ("inplace", *RECIPES):
        fn = inplace_setitem if name == "inplace" else RECIPES[name]
        c = x * 1
        try:
            nbytes: int | None = saved_bytes(fn, c, index, value)[0]
        except NotApplicable:
            nbytes = None
        columns[name] = {"saved_bytes": nbytes, "speed_ratio": ratios.get(name), "source": source}
    return columns


# -- command line ----------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m inplace_recipes bench",
        description="Benchmark every recipe against the in-place baseline.",
    )
    size = p.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="two sizes, float32, eager (< 1 minute)")
    size.add_argument(
        "--full", action="store_true", help="every size, dtype, write; compile subset (default)"
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads while timing (default 1)")
    p.add_argument(
        "--device", action="append", choices=["cpu", "cuda"], help="repeatable; default both"
    )
    p.add_argument("--sizes", type=float, nargs="+", help="element counts, e.g. 1e4 1e6")
    p.add_argument("--dtypes", nargs="+", choices=["float32", "float64"])
    p.add_argument("--writes", nargs="+", choices=list(WRITES))
    p.add_argument("--entries", nargs="+", choices=list(ENTRIES))
    p.add_argument(
        "--compile-sizes", type=float, nargs="*", help="sizes also run under torch.compile"
    )
    p.add_argument("--min-run-time", type=float, help="seconds per measurement")
    p.add_argument("--rounds", type=int, help="interleaved rounds per measurement")
    p.add_argument("--no-peak", action="store_true", help="skip peak-memory measurement")
    p.add_argument("--output", "-o", type=Path, help="write the JSON here")
    p.add_argument("--no-progress", action="store_true")
    return p


def _config(args: argparse.Namespace) -> Config:
    config = QUICK if args.quick else FULL
    changes: dict[str, Any] = {"threads": args.threads}
    if args.device:
        changes["devices"] = tuple(args.device)
    if args.sizes:
        changes["sizes"] = tuple(int(s) for s in args.sizes)
    if args.dtypes:
        changes["dtypes"] = tuple(args.dtypes)
    if args.writes:
        changes["writes"] = tuple(args.writes)
    if args.entries:
        keep = {"inplace", "plain_clone", "inplace_on_clone", *args.entries}
        entries = [e for e in ENTRIES if e in keep]
        changes["entries"] = tuple(entries)
    if args.compile_sizes is not None:
        changes["compile_sizes"] = tuple(int(s) for s in args.compile_sizes)
    if args.min_run_time is not None:
        changes["min_run_time"] = args.min_run_time
    if args.rounds is not None:
        changes["rounds"] = args.rounds
    if args.no_peak:
        changes["peak"] = False
    return replace(config, **changes)


def _summary(results: dict[str, Any]) -> Iterable[str]:
    yield (
        f"torch {results['provenance']['torch']}, {results['provenance']['cpu']}, "
        f"{results['provenance']['threads']} thread(s), {results['provenance']['seconds']:.0f} s"
    )
    yield "forward+backward time / in-place (eager, largest size, float32; floor = 'inplace_on_clone'):"
    records = [r for r in results["records"] if r["mode"] == "eager" and r["dtype"] == "float32"]
    if not records:
        return
    size = max(r["size"] for r in records)
    writes = list(dict.fromkeys(r["write"] for r in records))
    yield f"  {'entry':17}" + "".join(f"{w:>12}" for w in writes)
    for entry in dict.fromkeys(r["entry"] for r in records):
        cells = []
        for w in writes:
            (r,) = [
                r for r in records if (r["entry"], r["write"], r["size"]) == (entry, w, size)
            ] or [None]
            ratio = None if r is None else r["ratio_forward_backward"]
            cells.append("n/a" if ratio is None else f"{ratio:.2f}")
        yield f"  {entry:17}" + "".join(f"{c:>12}" for c in cells)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m inplace_recipes bench [--quick] [--threads N] [--output FILE]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    config = _config(args)
    command = shlex.join(["python", "-m", "inplace_recipes", "bench", *argv])
    results = run(config, progress=not args.no_progress, command=command)
    text = json.dumps(results, indent=1)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")
    for line in _summary(results):
        print(line)  # noqa: T201
    if args.output:
        print(f"wrote {args.output}")  # noqa: T201
    return 0
