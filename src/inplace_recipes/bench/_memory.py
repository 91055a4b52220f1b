"""What a write costs in memory: bytes autograd saves for backward, peak bytes of one step.

Saved bytes count each storage that autograd saves once (by
``untyped_storage().data_ptr()``), whoever allocated it: a saved tensor keeps
its storage alive until backward, whether the recipe made it or the caller
passed it in. The part that aliases the caller's own tensors (``x``, index
tensors, ``value``) is reported apart, memory the caller may hold anyway.

Peak bytes are counted, not sampled: on the CPU every allocation and free of
torch's CPU allocator during the step (:func:`allocations`), summed in order,
so the same step gives the same figure whatever the machine's load.

>>> import torch
>>> from inplace_recipes import RECIPES
>>> x = torch.rand(10, requires_grad=True) * 1
>>> saved_bytes(RECIPES["where"], x, torch.arange(10) < 3, 0.0)
(10, 10)
>>> saved_bytes(RECIPES["index_put"], x, 4, 0.0)
(8, 0)
>>> peak_bytes(lambda: [torch.empty(250) for _ in range(3)], torch.device("cpu"))
3000
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import Tensor

__all__ = ["allocations", "peak_bytes", "peak_of", "saved_bytes", "saved_storages"]


def _tensors(obj: Any) -> list[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for item in obj for t in _tensors(item)]
    return []


def saved_storages(fn: Callable[[], Any]) -> tuple[Any, dict[int, int]]:
    """Run ``fn``; return its result and ``{storage data_ptr: nbytes}`` of what autograd saved.

    >>> x = torch.rand(3, requires_grad=True)
    >>> _, seen = saved_storages(lambda: x.sin())
    >>> list(seen.values())
    [12]
    """
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

    >>> from inplace_recipes import RECIPES
    >>> x = torch.rand(4, requires_grad=True) * 1
    >>> saved_bytes(RECIPES["clone"], x, 0, 1.0)
    (0, 0)
    """
    inputs = {t.untyped_storage().data_ptr() for t in _tensors((x, index, value))}
    out, seen = saved_storages(lambda: fn(x, index, value))
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


def allocations(step: Callable[[], Any]) -> list[int] | None:
    """Bytes of each allocation (positive) and free (negative) on the CPU while ``step`` runs.

    Torch's CPU allocator reports every allocation and free to the profiler
    (``torch.profiler`` with ``profile_memory=True``), forward and backward
    alike: the backward of a CPU graph runs on the calling thread. The list
    is in the order they happened (the profiler's timestamps; ties keep the
    order recorded). It counts the bytes asked for, not the allocator's
    rounding, and no Python object. The step's result is freed before the
    profiler stops, so its frees are in the list. ``None`` where the profiler
    gives no memory events (its internals moved).

    >>> allocations(lambda: torch.empty(10).sum())
    [40, 4, -40, -4]
    """
    from torch._C._autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    try:
        events = [
            (e.start_ns(), e.nbytes())
            for e in prof.profiler.kineto_results.events()
            if e.name() == "[memory]" and e.device_type() == DeviceType.CPU
        ]
    except (AttributeError, RuntimeError):  # pragma: no cover - profiler internals moved
        return None
    if not events:
        return None
    events.sort(key=lambda event: event[0])  # stable: ties keep the recorded order
    return [int(nbytes) for _, nbytes in events]


def peak_of(events: list[int]) -> int:
    """The largest running sum of ``events`` (bytes allocated and freed, in order), from 0.

    >>> peak_of([4000, 4000, -4000, 8000, -4000, -8000])
    12000
    """
    live = peak = 0
    for nbytes in events:
        live += nbytes
        peak = max(peak, live)
    return peak


def peak_bytes(step: Callable[[], Any], device: torch.device) -> int | None:
    """Peak bytes allocated by ``step`` above what was allocated before it.

    CUDA: ``torch.cuda.max_memory_allocated``. CPU: the largest running sum of
    every allocation and free by torch's CPU allocator during the step
    (``torch.profiler`` with ``profile_memory=True``), forward and backward:
    counted, not sampled, so the figure does not depend on the machine's load.
    ``None`` where the profiler gives no events.
    """
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        step()
        torch.cuda.synchronize(device)
        return int(torch.cuda.max_memory_allocated(device) - before)
    events = allocations(step)
    return None if events is None else peak_of(events)
