"""Find the in-place operations in your own code, and what each does to backward.

``with audit() as report:`` (or ``report = audit(fn, *args)``) runs your code
and records every in-place or mutating call (``add_``, ``x[i] = v``,
``copy_``, ``out=``, ``inplace=True``, an optimizer's step, any call that
moves a tensor's version counter) on a tensor that is part of an autograd
graph: one that requires grad, a view or a ``.data``/``detach()`` alias of
one, or a tensor autograd saved for backward. The report has one row per
source line that needs a fix, with its count, what backward does about it
and the line that removes it; harmless writes are summed up in one line.
It sees only the torch calls made from Python: a write made inside C++
(``DistributedDataParallel``'s buffer broadcast) or one that moves no
version counter (BatchNorm's own update of its running statistics) is not
in the report.

>>> import torch
>>> x = torch.ones(3, requires_grad=True)
>>> with audit() as report:
...     h = x.sigmoid()  # sigmoid saves its output for backward
...     h = h.mul_(2)    # ... which this changes
>>> [(f.op, f.consequence) for f in report]
[('mul_', 'fails if backpropagated')]

A write is judged when the audit ends, by what autograd does with it and
the backwards the audit saw: here no backward
ran, so the write is ``"fails if backpropagated"``; with a backward through
``h`` after it, ``"backward fails"``. A write autograd does not see (through
``.data``, under ``no_grad`` on a non-leaf, into what a non-reentrant
checkpoint recomputed) is ``"wrong gradients"`` once a backward ran through
it, ``"wrong gradients if backpropagated"`` before. A write into a graph that
was kept with ``retain_graph=True`` and never backpropagated through again is
``"fails if backward again"``, not an error. :data:`CONSEQUENCE_TABLE` lists
every consequence, what it means and the ``--fail-on`` classes that fail on it.

The audit never changes the program it watches: every read it makes of your
tensors is one torch cannot refuse (or is guarded), a step of its own that
fails is counted in ``report.problems`` and never raised, and torch's
choices of code path stay as they are (``tests/test_audit_unchanged.py``
compares outputs, gradients, version counters, ``requires_grad``, warnings,
exceptions and the random state with and without it, over the models of the
tests, training steps in the shape of pytorch/examples, every
``torch.nn.init`` function, the parametrizations and the gallery's
scripts that do not show ``torch.compile``). One exception, by design: ``torch.compile``'d code runs as eager
code while an audit is active, so that its writes are seen; its values are
then eager's. Writes in the forward that a checkpoint recomputes in the
backward (reentrant, non-reentrant, ``checkpoint_sequential``) are seen in
the recomputation and reported at your line.

How it works: a :class:`~torch.overrides.TorchFunctionMode` sees each torch
call your code makes, compares the version counters of its tensor
arguments before and after, and walks the new autograd nodes for the
tensors they saved. It does not use ``saved_tensors_hooks``: in torch 2.13
any such hook switches off autograd's version check (the error becomes a
silent wrong gradient) and keeps saved outputs alive.

Overhead: Python runs for every torch call, so audit a few steps, not a
training run. The audit page of the docs measures it next to
:func:`torch.autograd.detect_anomaly` at every build. With no audit active
it costs nothing: this package is imported on first use, and no mode or
hook stays installed after the ``with`` block. Writes under ``no_grad`` to
leaves that nothing saved (initialisation, optimizer steps) are not reported.

What it sees: torch calls made on the calling thread inside the audit, and
the saved tensors of graphs built there. Run the forward inside the audit.
What it does not see (``tests/test_audit_limits.py`` checks each one, so
this list fails when it changes):

- graphs built before the audit started: a write that breaks their backward
  is reported ``"safe"``;
- writes from another thread;
- writes through the NumPy bridge (``t.numpy()[...] = v``);
- ``set_`` on a ``detach()`` alias, and writes into ``untyped_storage()``.

``python -m inplace_recipes audit train.py`` audits a script unchanged, and
``--fix`` applies the fixes that are changes of code and audits it again; see
``python -m inplace_recipes audit --help``. In IPython or Jupyter,
``%load_ext inplace_recipes`` gives the ``%%inplace_audit`` cell magic
(its ``--help`` says how).
"""

from __future__ import annotations

from ._audit import audit
from ._records import CONSEQUENCE_TABLE, CONSEQUENCES, FAIL_ON
from ._records import Consequence as Consequence
from ._report import RECORD_FIELDS as RECORD_FIELDS
from ._report import AuditReport
from ._report import Finding as Finding
from ._report import Row as Row

__all__ = ["CONSEQUENCES", "CONSEQUENCE_TABLE", "FAIL_ON", "AuditReport", "audit"]
