"""
Performance: what does in-place cost, and what does out-of-place cost?
======================================================================

Every out-of-place recipe writes a new tensor where ``x[index] = value``
would change one in place. This page answers, from measurements, what that
costs under autograd, what the package adds on top of the torch call each
recipe wraps, and what ``at()`` and ``audit()`` cost. Every number is computed
at build time from the committed benchmark (``docs/measurements/bench/cpu-full.json``,
made with ``python -m inplace_recipes bench``); none is typed.
"""

# %%
# The answer
# ----------
#
# The benchmark times the classic graph ``c = a + b; c[index] = value;
# c.sum().backward()`` with every recipe in place of the write, as a ratio to
# the in-place write measured in the same run.

import matplotlib.pyplot as plt

from inplace_recipes import bench
from inplace_recipes.bench import report

results = bench.load_results()
print(report.answer(results))

# %%
# The recipe :func:`~inplace_recipes.best_recipe` picks for each kind of
# write, against in-place, by tensor size (float32, CPU, one thread):

fig = report.figure_headline(results)
plt.show()

# %%
# Below about 1e4 elements each call's Python and dispatch time dominates;
# above, the passes over memory do, and an out-of-place write must make at
# least one new tensor.
#
# What the package adds: each recipe against its raw one-liner
# -----------------------------------------------------------------
#
# A recipe takes the index as you would write it (``x[i, j]``, ``x[:, 1::10]``,
# ``x[mask]``) and turns it into the form the torch call needs. Its *raw
# one-liner* is that torch call with the index already in tensor form, made
# once outside the timing, the line you would write by hand. A mask already
# is a tensor: for ``x[mask] = v`` three one-liners compute what they need
# from it on every call, as the recipes must (second line).

for name, code in bench.ONE_LINERS.items():
    print(f"{name:19} {code}")
    if name in bench.MASK_ONE_LINERS:
        print(f"{'':19} {bench.MASK_ONE_LINERS[name]}  (x[mask] = v)")

# %%
# Each recipe's forward + backward time over its raw one-liner's, for the
# writes ``x[i, j] = 0``, ``x[i] = 0``, ``x[:, 1::10] = 0`` and ``x[mask] = 0``
# (1% True), and the same ratio in instructions executed, which the machine's
# load does not change (Valgrind's callgrind). Both were checked against
# ``clone()`` then setitem before being timed. The last line holds the counts
# to the package's goals: a recipe within 1.10 times its raw one-liner,
# ``at()`` within 1.05 times the recipe it picks (``nox -s bench`` fails
# otherwise).

print("\n".join(report.overhead_lines(results)))
print()
print(report.goal_line(results))

# %%
# The same wall-time ratios as a map, 1 meaning the recipe costs nothing on
# top of the torch call:

fig = report.figure_overhead(results)
plt.show()

# %%
# ``at()`` against the recipe it picks
# ------------------------------------
#
# ``at(x)[i].set(v)`` chooses a recipe, then runs it; the ratio is its time
# over that recipe's, called directly.

print("\n".join(report.at_lines(results)))

# %%
# ``audit()`` against anomaly mode
# --------------------------------
#
# One training step of a 3-layer MLP (64, 256, 256, 10; batch 32), plain,
# inside :func:`~inplace_recipes.audit`, and under
# ``torch.autograd.set_detect_anomaly(True)`` (what ``detect_anomaly`` turns
# on), after checking that neither changes the gradients:

print(report.audit_line(results))

# %%
# Can these numbers be trusted?
# -----------------------------
#
# Two pairs of entries run identical work: ``inplace_again`` is the in-place
# write timed a second time, and the ``clone`` recipe is what
# ``inplace_on_clone`` runs with no recipe code around it. If a pair disagrees
# beyond the stated tolerance, the benchmark measures that configuration
# again, and marks the run noisy if it never agrees. Times are process CPU
# time, which other processes holding the cores do not inflate.

prov = results["provenance"]
print(report.consistency_line(results))
print(
    f"torch {prov['torch']}, {prov['cpu']} ({prov['cpu_count']} cores), "
    f"{prov['threads']} thread(s), {prov['date'][:16]}, load average "
    f"{prov.get('load_average_start')} at the start, {prov.get('load_average_end')} at the end\n"
    f"command: {prov['command']}"
)

# %%
# Time against size, each write
# -----------------------------
#
# Every recipe over in-place, forward + backward, float32, eager. The dotted
# line is the in-place write on one clone, the floor for any out-of-place
# write as one step.

for write in bench.WRITES:
    fig = report.figure_against_size(results, write)
plt.show()

# %%
# Bytes saved for backward
# ------------------------
#
# What autograd keeps alive between forward and backward for the write alone,
# each storage counted once. Where a recipe saves the caller's own mask (``where``
# and in-place with a mask index), that memory is the caller's anyway.

print("\n".join(report.saved_bytes_lines(results)))

# %%
# Eager against compiled
# ----------------------
#
# The fastest recipe per write in eager mode, and under ``torch.compile``, as a
# ratio to the *eager* in-place write (1e6 float32 elements); a bar below 1
# means a compiled out-of-place recipe beats eager in-place. Compiling is slow,
# so a run may leave this subset out (``--compile-sizes``); then the figure
# says so.

fig = report.figure_compiled(results)
plt.show()
print(sorted({r["mode"] for r in results["records"]}))

# %%
# Numbers from this machine
# -------------------------
#
# A few seconds of the same benchmark, run while this page was built: 1e4
# float32 elements, eager, a handful of entries. Each is checked against
# ``clone()`` then setitem before it is timed; a number is shown only for code
# proven correct.

live = bench.run(
    bench.Config(
        sizes=(10**4,),
        dtypes=("float32",),
        writes=("element", "mask"),
        entries=("inplace", "inplace_again", "inplace_on_clone", "clone", "where", "raw_where"),
        compile_sizes=(),
        overhead_sizes=(10**4,),
        min_run_time=0.05,
        rounds=2,
        peak=False,
        attempts=1,
        instruction_sizes=(),
        audit=False,
    ),
    command="recipes/tools/plot_performance.py",
)
print("\n".join(report.overhead_lines(live)))
for r in live["records"]:
    if r["forward_backward"]:
        print(
            f"  {r['write']:8} {r['entry']:17} {r['forward_backward']['median'] * 1e6:8.1f} us  "
            f"{r['ratio_forward_backward']:4.2f}x in-place"
        )
# sphinx_gallery_start_ignore
assert all(r["correct"] for r in live["records"] if r["applicable"])
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - ``python -m inplace_recipes bench --help``: the benchmark, and
#   ``docs/measurements/bench/README.md`` for how the committed results were made.
# - ``inplace_recipes.bench.report``: the functions that turn the results
#   into this page's answer, tables and figures.
# - `PyTorch benchmark recipe
#   <https://pytorch.org/tutorials/recipes/recipes/benchmark.html>`__:
#   ``torch.utils.benchmark.Timer``, used for every number here.
# - `Autograd mechanics: in-place operations
#   <https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd>`__:
#   why in-place rarely saves much memory.
# - `Hooks for saved tensors
#   <https://pytorch.org/tutorials/intermediate/autograd_saved_tensors_hooks_tutorial.html>`__:
#   how the saved bytes are counted.
