"""The property battery of issue 28: every writer against torch itself, over the axes
the index tests did not walk.

Writers: every recipe of ``inplace_recipes.RECIPES`` and ``at(x)[i].set/add/
subtract/multiply/divide/power/min/max``. Expected answers: torch's own
``y = x.clone(); y[i] = v`` (or ``y[i] op= v``, ``torch.minimum``/``maximum``),
exception class included (:mod:`battery.oracle`). Axes (:mod:`battery.axes`):
dtypes of ``x`` and of the value crossed, values at the edge of a dtype, every
kind of index and value shape, extreme indices, meta tensors, layouts,
subclasses, sparse tensors, repeated positions, autograd (reverse, double,
``jvp``, dual tensors, ``torch.func.grad``), autograd contexts, ``vmap`` with
each argument batched, ``torch.compile(fullgraph=True)`` under aot_eager and
inductor, static and dynamic. Tolerances: :mod:`battery.tolerances`.

The list is a fixed enumeration (``python -m battery`` from ``tests/`` prints its
counts); the default run takes a deterministic sample of each axis,
``HYPOTHESIS_PROFILE=thorough`` every case. With ``BATTERY_LOG=FILE`` each case's
verdict is appended to ``FILE`` as a JSON line (``python -m battery.tally FILE``
counts them; ``python -m battery.show ID`` spells one case out). While thousands of
cases fail, pass ``--tb=no``: pytest 8's FAILURES section costs failures times
reports (over 10 minutes at 5,000 failures). What the whole battery found:
``tests/battery/FINDINGS.md``.
"""
