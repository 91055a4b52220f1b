"""How far a result may be from torch's: a number of units in the last place, per op and dtype.

The table, and why each entry is what it is (torch 2.13, CPU):

=====================================  =======  ==========================================
what                                   ulps     why
=====================================  =======  ==========================================
``set``, ``min``, ``max``: values      0        they only move or select values: any
                                                difference is another value (the sign of
                                                a zero and nan's position included)
``add``, ``subtract``, ``multiply``,   0        IEEE 754 rounds ``+ - * /`` correctly, so
``divide`` on real dtypes: values               every kernel (vectorised or not) gives the
                                                same bits; float16 and bfloat16 compute in
                                                float32 and round once, in place and out
                                                of place alike. A value cast to ``x``'s
                                                dtype before the op (double rounding) is a
                                                real difference, and must show.
``power`` (any dtype); ``multiply``,   4        the CPU's ``pow`` runs Sleef (1 ulp) in
``divide`` on complex dtypes: values            contiguous loops and libm elsewhere, so a
                                                contiguous copy and a strided view of the
                                                same numbers differ by an ulp or two;
                                                vectorised complex division scales its
                                                operands, the scalar one does not
gradients of ``set``, ``min``, ``max``  0       the loss weights are integers 1..3 and
                                                every gradient is a sum of at most 24 of
                                                them: exact in every float dtype
                                                (bfloat16 holds the integers to 256)
gradients of the arithmetic ops         16      products and sums of the operands in
                                                another order (``sum_to_size`` of a
                                                broadcast value, ``index_put``'s backward),
                                                relative to the largest entry
second-order gradients of the          64      the second derivatives of ``/`` and ``**``
arithmetic ops                                  (``x / v**3``, ``log(x) * x**v``) are sums
                                                of terms of both signs: a sum of 8 terms
                                                that cancels to one of them loses a few
                                                more bits (measured: 16 ulps, divide,
                                                float32)
a gradient of another dtype than ``x``  (above)  counted in ulps of the coarser of the
                                                two: torch's backward of ``y[i] *= v``
                                                on a float16 ``y`` computes ``v``'s
                                                float64 gradient as a float16 product
                                                (``grad * y``), then casts it; a writer
                                                that multiplies in float64 is nearer the
                                                exact derivative by float16 roundings
anything compiled by inductor          4 more   inductor may fuse, reassociate and turn a
                                                division into a product by a reciprocal
                                                (not for ``set``, ``min`` and ``max``,
                                                which stay exact)
=====================================  =======  ==========================================

An ulp here is ``torch.finfo(dtype).eps`` (of the real component for complex
dtypes) times the largest magnitude of the expected tensor; integers and
bools are always compared exactly.

>>> allowed("set", torch.float16, "value")
0
>>> allowed("power", torch.bfloat16, "value"), allowed("add", torch.float32, "gradient")
(4, 16)
"""

from __future__ import annotations

import torch

#: ``at()`` ops that only move or select values.
SELECTING = frozenset({"set", "min", "max"})


def allowed(op: str, dtype: torch.dtype, what: str, *, inductor: bool = False) -> int:
    """Ulps allowed for ``what`` (``value``, ``gradient`` or ``second-order gradient``)
    of ``op`` in ``dtype``."""
    if not (dtype.is_floating_point or dtype.is_complex):
        return 0
    if op in SELECTING:
        return 0
    if what == "second-order gradient":
        ulps = 64
    elif what == "gradient":
        ulps = 16
    elif op == "power" or (dtype.is_complex and op in ("multiply", "divide")):
        ulps = 4
    else:
        ulps = 0
    return ulps + (4 if inductor else 0)


def eps(dtype: torch.dtype) -> float:
    """``finfo(dtype).eps``, of the real component for complex dtypes."""
    if dtype.is_complex:
        dtype = torch.float32 if dtype == torch.complex64 else torch.float64
    return float(torch.finfo(dtype).eps)
