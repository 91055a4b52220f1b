"""Comparing a writer's outcome with torch's: the classes of difference the findings count.

>>> a, b = torch.tensor([0.0, 1.0]), torch.tensor([-0.0, 1.0])
>>> differs(a, b, 0)
'values differ at 1 of 2 entries (first at 0: got 0.0, want -0.0)'
>>> differs(a, a.double(), 0)
'dtype torch.float32, torch gives torch.float64'
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import torch
from torch import Tensor

from .tolerances import eps

#: A writer returns a result that is not torch's (value, dtype, shape, type,
#: device, gradient, tangent), or returns where torch raises.
SILENT = "silently different"
#: A writer raises where torch writes (and no docstring says it refuses).
RAISES = "raises where torch writes"
#: Both raise, the writer not with torch's class (nor a subclass of it).
CLASS = "another exception class"
#: A writer changed ``x``, the index or the value (data or version counter).
MUTATED = "changed an input"
#: The case ran past its time limit.
TIMEOUT = "timed out"
#: Different from torch as a docstring states and tests (counted, not failed).
DOCUMENTED = "documented difference"
OK = "agrees"

FAILING = (SILENT, RAISES, CLASS, MUTATED, TIMEOUT)


@dataclass(frozen=True)
class Verdict:
    category: str
    detail: str = ""

    @property
    def failed(self) -> bool:
        return self.category in FAILING

    def __str__(self) -> str:
        return f"{self.category}: {self.detail}" if self.detail else self.category


def differs(
    got: Tensor,
    want: Tensor,
    ulps: int,
    *,
    signed_zero: bool = True,
    coarsest: torch.dtype | None = None,
) -> str | None:
    """What differs between two tensors (type, dtype, shape, device, values), or ``None``.

    ``ulps`` is the tolerance of :mod:`battery.tolerances`; with ``0`` float
    values must be identical, nan's place included, and the sign of a zero
    unless ``signed_zero`` is false (derivatives: ``-0.0`` and ``0.0`` are the
    same slope). An ulp is that of ``coarsest`` where it is coarser than the
    tensors' own dtype.
    """
    if type(got) is not type(want):
        return f"type {type(got).__name__}, torch gives {type(want).__name__}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, torch gives {want.dtype}"
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, torch gives {list(want.shape)}"
    if got.device != want.device:
        return f"device {got.device}, torch gives {want.device}"
    if got.layout != want.layout:
        return f"layout {got.layout}, torch gives {want.layout}"
    if want.device.type == "meta":
        return None
    a, b = _plain(got), _plain(want)
    if a.is_sparse:
        a, b = a.to_dense(), b.to_dense()
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if not a.is_floating_point():
        bad = a != b
    else:
        a64, b64 = a.double(), b.double()
        nan_a, nan_b = a64.isnan(), b64.isnan()
        if ulps == 0:
            same = a64 == b64
            if signed_zero:
                same &= a64.signbit() == b64.signbit()
        else:
            finite = b64[b64.isfinite()]
            scale = float(finite.abs().max()) if finite.numel() else 1.0
            unit = max(eps(got.dtype), eps(coarsest) if coarsest is not None else 0.0)
            atol = ulps * unit * max(scale, 1e-30)
            same = (a64 == b64) | ((a64 - b64).abs() <= atol)
        bad = ~((same & ~nan_a & ~nan_b) | (nan_a & nan_b))
    if not bool(bad.any()):
        return None
    where = int(bad.reshape(-1).nonzero()[0])
    first_a = a.reshape(-1)[where].item() if a.ndim else a.item()
    first_b = b.reshape(-1)[where].item() if b.ndim else b.item()
    if a.ndim and a.shape[-1] == 2 and got.is_complex():
        where //= 2
    return (
        f"values differ at {int(bad.sum())} of {bad.numel()} entries "
        f"(first at {where}: got {first_a}, want {first_b})"
    )


def _plain(t: Tensor) -> Tensor:
    """The data of ``t`` as a plain, detached tensor (subclasses and Parameters unwrapped)."""
    return t.detach().as_subclass(Tensor) if type(t) is not Tensor else t.detach()


# -- the log the findings are counted from ------------------------------------------

_LOG = os.environ.get("BATTERY_LOG")


def record(case_id: str, verdict: Verdict, seconds: float) -> None:
    """Append the verdict to ``$BATTERY_LOG`` (one JSON line a case), if it is set."""
    if not _LOG:
        return
    line = {"case": case_id, "category": verdict.category, "detail": verdict.detail}
    line["seconds"] = round(seconds, 4)  # type: ignore[assignment]
    with open(_LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")
