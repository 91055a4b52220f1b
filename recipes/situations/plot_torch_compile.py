"""
In-place writes under ``torch.compile``
=======================================

``torch.compile`` with an AOTAutograd backend (inductor, the default, or
``aot_eager``) traces your function and *functionalizes* it: every
in-place write becomes an out-of-place op (``y[0] = 0`` becomes
``select_scatter``; a write into one of the function's inputs ends as one
``copy_`` into it, after the rest), so the compiled graph is the same kind of
program the recipes on this site write by hand. That does not make autograd's in-place
errors go away: they come at compile time, wrapped in Dynamo's exceptions.
(With ``backend="eager"`` nothing is functionalized: Dynamo's graph keeps
the write, and the error comes at ``backward()``, as in eager code.)
And one of them is lost: editing an input of a compiled matrix product
before ``backward()`` gives a silently wrong gradient in torch 2.13
(`pytorch/pytorch#197887 <https://github.com/pytorch/pytorch/issues/197887>`_).
The functions compiled on this page are small, and most use the
``aot_eager`` backend or a recording backend built on AOTAutograd
(functionalization, no code generation), to keep the build short; the cells
that show inductor's behaviour use inductor.
"""

# %%
# A saved tensor changed in place: the error at compile time
# ----------------------------------------------------------
#
# ``exp`` saves its output for backward; the function then writes into it.
# Eager autograd fails in ``backward()``:

import inspect
import warnings
from pathlib import Path

import torch
from functorch.compile import make_boxed_func
from torch._dynamo.backends.common import aot_autograd

import inplace_recipes as ir

# sphinx_gallery_start_ignore
SOURCE = Path(inspect.currentframe().f_code.co_filename)  # this script, for the checks
PAGE = SOURCE.name
# sphinx_gallery_end_ignore


def exp_then_write(x):
    y = x.exp()
    y[0] = 0.0
    return y


x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
try:
    exp_then_write(x).sum().backward()
except RuntimeError as exc:
    eager_error = exc
    print(exc)

# %%
# Compiled, the same function fails at its first call, when AOTAutograd
# traces the backward: the same message, inside a ``BackendCompilerFailed``.

torch._dynamo.reset()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # AOTAutograd's anomaly-mode traceback, printed as a warning
    try:
        torch.compile(exp_then_write, backend="aot_eager")(x)
    except Exception as exc:  # noqa: BLE001 - the type is what this cell shows
        compile_error = exc
        print(f"{type(exc).__module__}.{type(exc).__name__}: {exc}")
# sphinx_gallery_start_ignore
assert type(compile_error).__name__ == "BackendCompilerFailed", type(compile_error)
assert "modified by an inplace operation" in str(compile_error)
assert "which is output 0 of Exp" in str(compile_error), str(compile_error)
assert "which is output 0 of Exp" in str(eager_error)
# backend="eager": no functionalization, the graph keeps the setitem, the error comes at backward
import operator

eager_graphs = []


def keep_graph(graph_module, example_inputs):  # what backend="eager" does, recording the graph
    eager_graphs.append(graph_module)
    return graph_module.forward


for backend in ("eager", keep_graph):
    torch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager_out = torch.compile(exp_then_write, backend=backend)(x)  # the call runs
    eager_backend_error = None
    try:
        eager_out.sum().backward()
    except RuntimeError as exc:
        eager_backend_error = exc
    assert "modified by an inplace operation" in str(eager_backend_error), backend
assert operator.setitem in [n.target for n in eager_graphs[0].graph.nodes], eager_graphs
torch._dynamo.reset()
# sphinx_gallery_end_ignore

# %%
# Audit the compiled call as it is. Under the audit, each torch call of the
# compiled function leaves Dynamo's graph and runs eagerly, where it is
# recorded: the report points at the line inside the compiled function, and
# the error it keeps is the eager message, not the ``BackendCompilerFailed``
# above. The audit says what the code does uncompiled; it does not see what a
# compiled graph saves.

torch._dynamo.reset()
compiled = torch.compile(exp_then_write, backend="aot_eager")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    report = ir.audit(lambda: compiled(x).sum().backward())
print(report)
# sphinx_gallery_start_ignore
fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
assert [r["code"] for r in fails] == ["y[0] = 0.0"], report.to_records()
assert fails[0]["file"].endswith(PAGE)
assert type(report.error) is RuntimeError, repr(report.error)
assert "modified by an inplace operation" in str(report.error)
# sphinx_gallery_end_ignore

# %%
# A write into a leaf: the error at trace time
# --------------------------------------------
#
# Dynamo runs each op on fake tensors while it traces; the eager error comes
# back inside a ``TorchRuntimeError`` that quotes it:


def write_into_leaf(x):
    x[0] = 1.0
    return x * 2


torch._dynamo.reset()
try:
    torch.compile(write_into_leaf, backend="aot_eager")(torch.ones(3, requires_grad=True))
except Exception as exc:  # noqa: BLE001
    leaf_error = exc
    quoted = next(line for line in str(exc).splitlines() if "got RuntimeError" in line)
    print(f"{type(exc).__name__}: ...{quoted.strip()[-140:]}")
# sphinx_gallery_start_ignore
assert type(leaf_error).__name__ == "TorchRuntimeError", type(leaf_error)
assert (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
    in str(leaf_error)
)
# sphinx_gallery_end_ignore

# %%
# Functionalization: what the compiler sees
# -----------------------------------------
#
# Writes that eager autograd accepts (into a non-leaf that nothing saved)
# compile too. A backend that records AOTAutograd's forward graph and runs it
# as it is shows what functionalization made of them: no in-place op is
# left; the writes are ``select_scatter`` and ``slice_scatter``, the recipes
# of this site.

graphs = []


def record_forward(graph_module, example_inputs):
    graphs.append(graph_module)
    return make_boxed_func(graph_module.forward)


recording = aot_autograd(fw_compiler=record_forward)


def write_in_place(x):
    y = x * 2
    y[0] = 0.0
    y[1:] *= 2
    return y.exp()


def write_out_of_place(x):
    y = x * 2
    y = ir.RECIPES["select_scatter"](y, 0, 0.0)
    y = ir.RECIPES["select_scatter"](y, slice(1, None), y[1:] * 2)
    return y.exp()


def forward_ops(fn):
    torch._dynamo.reset()
    graphs.clear()
    compiled = torch.compile(fn, backend=recording)
    grad = torch.autograd.grad(compiled(x).sum(), x)[0]
    ops = [str(n.target) for n in graphs[0].graph.nodes if n.op == "call_function"]
    return ops, grad


inplace_ops, inplace_grad = forward_ops(write_in_place)
oop_ops, oop_grad = forward_ops(write_out_of_place)
print("in place:    ", ", ".join(op.removeprefix("aten.") for op in inplace_ops))
print("out of place:", ", ".join(op.removeprefix("aten.") for op in oop_ops))
# sphinx_gallery_start_ignore
for ops in (inplace_ops, oop_ops):
    assert not any(op.split(".")[1].endswith("_") for op in ops), ops
    assert "aten.slice_scatter.default" in ops, ops
assert "aten.select_scatter.default" in inplace_ops, inplace_ops
# sphinx_gallery_end_ignore

# %%
# Both compiled versions give the eager gradient, and the recipe agrees with
# ``clone()`` then setitem for this write:

eager_grad = torch.autograd.grad(write_in_place(x).sum(), x)[0]
print(eager_grad, torch.equal(inplace_grad, eager_grad), torch.equal(oop_grad, eager_grad))
print(ir.compare_gradients(x * 2, 0, 0.0, ["select_scatter"]))
# sphinx_gallery_start_ignore
assert torch.allclose(inplace_grad, eager_grad)
assert torch.allclose(oop_grad, eager_grad)
assert ir.compare_gradients(x * 2, 0, 0.0, ["select_scatter"]).ok
# sphinx_gallery_end_ignore

# %%
# The audit of the compiled in-place version finds the writes of both lines
# (``y[1:] *= 2`` is two: ``*=`` into the slice, then a setitem that stores it
# back), and none harmful:

torch._dynamo.reset()
compiled = torch.compile(write_in_place, backend="aot_eager")
with warnings.catch_warnings():
    # Dynamo probes .grad of the non-leaf tensors it hands to the audit
    warnings.filterwarnings("ignore", "The .grad attribute of a Tensor that is not a leaf")
    report = ir.audit(lambda: compiled(x).sum().backward())
print(report)
# sphinx_gallery_start_ignore
assert report.error is None, repr(report.error)
assert report.ok, report.to_records()
assert {r["code"] for r in report.to_records()} == {"y[0] = 0.0", "y[1:] *= 2"}, report.to_records()
ops_by_line = {}
for finding in report:
    ops_by_line.setdefault(finding.code, set()).add(finding.op)
assert ops_by_line == {"y[0] = 0.0": {"x[...] = v"}, "y[1:] *= 2": {"x *= ...", "x[...] = v"}}, (
    ops_by_line
)
# sphinx_gallery_end_ignore

# %%
# So under ``torch.compile`` the in-place and the out-of-place version reach
# the code generator as the same kind of functional graph. That does not make
# every recipe as fast as the in-place write: the code generated for each op
# differs. From the committed benchmark, compiled, at 1e6 float32 elements,
# each recipe over the compiled in-place write (two ratios closer than the
# run's noise band under compile, or whose bootstrap interval holds 1, are a
# tie; details on :doc:`the performance page
# </auto_recipes/tools/plot_performance>`):

import committed as committed_runs
from performance_prose import Prose

from inplace_recipes import bench
from inplace_recipes.bench._statistics import measured_writes, tie

committed = committed_runs.bench_results()
band = bench.noise_band(committed, mode="compile", sizes=[10**6])
worst, beyond = {}, set()
for write in measured_writes(committed):
    for name in ir.RECIPES:
        record = bench.find_record(committed, name, write, 10**6, mode="compile")
        if record and record.get("ratio_forward_backward"):
            worst[name] = max(worst.get(name, 0.0), record["ratio_forward_backward"])
            faster = record["ratio_forward_backward"] <= 1
            tied = tie(committed, name, "inplace", write, 10**6, band, mode="compile")
            if not (faster or tied):
                beyond.add(name)
ties = [name for name in worst if name not in beyond]
slower = sorted((name for name in worst if name not in ties), key=worst.__getitem__)
# sphinx_gallery_start_ignore
assert slower, "every recipe ties with compiled in-place: the sentence above must change"
assert "clone" in ties
# sphinx_gallery_end_ignore
Prose(
    f"No slower than compiled in-place, within the noise (band {(band - 1) * 100:.0f}%), "
    f"for every write: {', '.join(f'``{n}``' for n in ties) or 'none'}. Slower for some "
    "write: "
    + ", ".join(f"``{n}`` (up to {worst[n]:.1f}x)" for n in slower)
    + ". Under compile, speed still decides between recipes."
)

# %%
# A lost check: editing a compiled function's input
# -------------------------------------------------
#
# Change the input of a compiled ``x @ w`` in place between forward and
# backward. Eager autograd and ``aot_eager`` refuse; with the default backend
# (inductor) torch 2.13 raises nothing and computes ``w``'s gradient from the
# *edited* ``x``:


def matmul(x, w):
    return x @ w


def weight_gradient(backend):
    torch.manual_seed(0)
    x0, w = torch.randn(4, 3, requires_grad=True), torch.randn(3, 2, requires_grad=True)
    x = x0 * 1
    torch._dynamo.reset()
    with warnings.catch_warnings():
        # Dynamo probes x.grad of the non-leaf x while it traces
        warnings.filterwarnings("ignore", "The .grad attribute of a Tensor that is not a leaf")
        out = matmul(x, w) if backend is None else torch.compile(matmul, backend=backend)(x, w)
    x.add_(1.0)  # edited after the forward, before backward
    try:
        out.sum().backward()
    except RuntimeError as exc:
        return f"RuntimeError: {str(exc)[:96]}...", None
    old_x, new_x = x0.detach(), x.detach()
    return "no error", {
        "matches the x of the forward": torch.allclose(w.grad, old_x.T @ torch.ones(4, 2)),
        "matches the edited x": torch.allclose(w.grad, new_x.T @ torch.ones(4, 2)),
    }


results = {
    backend or "eager": weight_gradient(backend) for backend in (None, "aot_eager", "inductor")
}
for backend, (outcome, check) in results.items():
    print(f"{backend:9} {outcome} {check or ''}")
with torch.compiler.set_stance("force_eager"):
    forced = weight_gradient("inductor")
print("inductor, force_eager:", forced[0])
# sphinx_gallery_start_ignore
assert forced[0].startswith("RuntimeError: one of the variables needed"), forced
assert results["eager"][0].startswith("RuntimeError: one of the variables needed")
assert results["aot_eager"][0].startswith("RuntimeError: one of the variables needed")
# the torch 2.13 bug (pytorch/pytorch#197887): no error, the gradient of the edited input
assert results["inductor"][0] == "no error", results["inductor"]
assert results["inductor"][1] == {
    "matches the x of the forward": False,
    "matches the edited x": True,
}
# sphinx_gallery_end_ignore

# %%
# Until that is fixed, do not edit a tensor that a compiled graph may have
# saved before its ``backward()`` has run. To find such writes, run the code
# with the compiler off (``torch.compiler.set_stance("force_eager")``), where
# autograd's own check works, or audit it: while an audit runs, compiled code
# runs as eager code (the audit's one change to a program), so it reports the
# edit of ``x`` though inductor would not fail. Nothing is compiled during the
# audit, so the next call after it compiles as usual.


def edit_after_compiled_forward():
    x, w = torch.randn(4, 3, requires_grad=True) * 1, torch.randn(3, 2, requires_grad=True)
    out = torch.compile(matmul)(x, w)
    x.add_(1.0)  # edited after the forward, before backward
    out.sum().backward()


torch._dynamo.reset()
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "The .grad attribute of a Tensor that is not a leaf")
    report = ir.audit(edit_after_compiled_forward)
print(report)
# sphinx_gallery_start_ignore
fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
assert [r["code"] for r in fails] == ["x.add_(1.0)  # edited after the forward, before backward"], (
    report.to_records()
)
assert type(report.error) is RuntimeError, repr(report.error)
# after the audit, matmul compiled again is compiled code, not the audit's eager callbacks
probe_x, probe_w = torch.randn(4, 3, requires_grad=True) * 1, torch.randn(3, 2, requires_grad=True)
after_audit = torch.compile(matmul)(probe_x, probe_w).grad_fn.name()
assert after_audit == "CompiledFunctionBackward", after_audit
# sphinx_gallery_end_ignore
#
# Learn more
# ----------
#
# - `pytorch/pytorch#197887 <https://github.com/pytorch/pytorch/issues/197887>`_:
#   inductor loses autograd's in-place check on views of graph inputs.
# - :doc:`/auto_recipes/patterns/plot_functionalize`: ``torch.func.functionalize``
#   on its own, outside the compiler.
# - :doc:`/auto_recipes/tools/plot_performance`: eager against compiled, measured.
# - `torch.compiler documentation <https://pytorch.org/docs/stable/torch.compiler.html>`_
