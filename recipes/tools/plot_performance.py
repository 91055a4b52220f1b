"""
Performance: what does in-place cost, and what does out-of-place cost?
======================================================================

The answer first, from the committed benchmark
(``docs/measurements/bench/cpu-full.json``); how it was measured and how far
to trust it, below.

.. raw:: html
   :file: ../../_generated/answer_short.html
"""

# %%
# The detail
# ----------

import committed
import matplotlib.pyplot as plt
import performance_figures as figures
import performance_prose as prose

from inplace_recipes import bench
from inplace_recipes.bench import _statistics as stats
from inplace_recipes.bench import _summary as summary
from inplace_recipes.bench._consistency import disagreements
from inplace_recipes.bench._ranking import RANKED_SIZES
from inplace_recipes.bench._results import instruction_overhead

results = committed.bench_results()
prose.Prose(prose.answer(results))

# %%
# The recipe :func:`~inplace_recipes.best_recipe` picks for each kind of
# write, against in-place, by tensor size, where the passes over memory
# decide. Each bar is the 95% bootstrap interval of the ratio: the run's
# eight interleaved rounds, resampled in pairs, each round's fastest block.

fig = figures.figure_headline(results)
plt.show()
# sphinx_gallery_start_ignore
assert stats.has_intervals(results), "the committed run has no rounds: say 'noise band' above"
# sphinx_gallery_end_ignore

# %%
# Below that size the fixed cost of each call decides. Instructions executed
# (Valgrind's callgrind) measure that cost without the machine's load:

fig = figures.figure_instructions(results)
plt.show()

# %%
# What the package adds: each recipe against its raw one-liner
# -----------------------------------------------------------------
#
# A recipe takes the index as you would write it (``x[i, j]``, ``x[:, 1::10]``,
# ``x[mask]``) and turns it into the form the torch call needs. Its *raw
# one-liner* is that torch call as you would write it by hand, with the index
# tensors made in the call from the ints and slices of the index (first
# line), a mask used as given (second line) and an index tensor used as given
# (third line). ``nox -s bench`` counts the instructions of these one-liners,
# warm and cold (a new index on every call), on every CI run, and fails when
# a goal below is missed.

masks, tensors = bench.one_liners("boolean"), bench.one_liners("index")
for name, code in bench.one_liners("basic").items():
    print(f"{name:19} {code}")
    if name in masks:
        print(f"{'':19} {masks[name]}  (x[mask] = v)")
    if name in tensors:
        print(f"{'':19} {tensors[name]}  (x[t] = v)")

# %%
# Each recipe's instructions executed over its raw one-liner's, for the
# writes ``x[i, j] = 0``, ``x[i] = 0``, ``x[:, 1::10] = 0``, ``x[mask] = 0``
# (1% True), ``x[t] = 0`` (``t`` an index tensor of three rows) and
# ``x[[a, b, c]] = 0``, warm, and cold where the column says so (a new index on
# every call). What the package adds is fixed work per call, which instruction
# counts measure and the machine's load does not change. The counts run the
# code the timed runs check against ``clone()`` then setitem. The goals: a recipe
# within 1.10 times its raw one-liner, ``at()`` within 1.05 times the recipe
# it picks (``nox -s bench`` fails otherwise).

fig = figures.figure_overhead(results)
plt.show()
prose.Prose(summary.goal_line(results))

# %%
# ``at()`` against the recipe it picks
# ------------------------------------
#
# ``at(x)[i].set(v)`` chooses a recipe, then runs it; the ratio is its time
# over that recipe's, called directly, in CPU time and in instructions. The
# instructions decide: they do not move with the machine's load, and the few
# that ``at()`` adds are far below what CPU time can resolve here.

print("\n".join(summary.at_lines(results)))
prose.Prose(prose.small_noise_line(results))
# sphinx_gallery_start_ignore
assert instruction_overhead(results).get("at"), "the committed run has no at() counts"
assert all(n <= 1.05 for n in instruction_overhead(results)["at"].values())
# sphinx_gallery_end_ignore

# %%
# ``audit()`` against anomaly mode
# --------------------------------
#
# One training step of a 3-layer MLP (64, 256, 256, 10; batch 32), plain,
# inside :func:`~inplace_recipes.audit`, and under
# ``torch.autograd.set_detect_anomaly(True)`` (what ``detect_anomaly`` turns
# on), after checking that neither changes the gradients:

prose.Prose(summary.audit_line(results))

# %%
# Can these numbers be trusted?
# -----------------------------
#
# Each time is process CPU time, which other processes on the cores inflate
# less than wall time but do not leave alone. Load adds time, so
# each timing is the fastest of eight interleaved rounds (the minimum, as
# ``timeit`` advises; each round's time is its fastest block's mean per
# call), and each ratio carries a bootstrap interval: the rounds of the two
# entries, resampled in pairs. With eight rounds that interval is narrower
# than a true 95%: the next paragraph counts how often it held 1 on
# identical work, which is why a tie also counts the noise band.
#
# Two pairs of entries run identical work: ``inplace_again`` is the in-place
# write timed a second time, and the ``clone`` recipe is what
# ``inplace_on_clone`` runs with no recipe code around it. How far they
# disagree is the run's noise band. A difference inside the noise band or
# inside the interval of the ratio is a tie, for every "fastest" and
# "slowest" on this site. The benchmark also measures a configuration again
# when a pair disagrees beyond a fixed tolerance, and keeps the attempt whose
# pairs agree best, so the band is a lower estimate of the noise.

pairs = disagreements(results["records"])
band = stats.noise(results, RANKED_SIZES)
fig, ax = plt.subplots(figsize=(7, 3.4), layout="constrained")
ax.hist([(f - 1) * 100 for f in pairs], bins=20, color="0.4")
ax.axvline((band - 1) * 100, color="red", label="noise band from 1e5 elements up")
ax.set_xlabel("disagreement between two timings of identical work (%)", fontsize=11)
ax.set_ylabel("pairs of timings", fontsize=11)
ax.set_title("How far two timings of the same work disagree, eager", fontsize=12)
ax.legend(fontsize=10)
plt.show()
prov = results["provenance"]
prose.Prose(
    f"{summary.consistency_line(results)}. Of {len(pairs)} pairs of timings of identical work "
    f"(eager), half disagree by {(pairs[len(pairs) // 2] - 1) * 100:.0f}% or less and the "
    f"worst by {(pairs[-1] - 1) * 100:.0f}%; from 1e5 elements up, by at most "
    f"{(band - 1) * 100:.0f}%. Run: torch {prov['torch']}, {prov['cpu']} "
    f"({prov['cpu_count']} cores), {prov['threads']} thread(s), {prov['date'][:16]}, load "
    f"average {prov.get('load_average_start')} at the start and "
    f"{prov.get('load_average_end')} at the end, ``{prov['command']}``."
)
by_size = stats.noise_by_size(results)
prose.Prose(
    "By size alone, identical work disagreed by at most "
    + ", ".join(
        f"{s:.0e}".replace("e+0", "e") + f": {(v - 1) * 100:.0f}%" for s, v in by_size.items()
    )
    + ". The band from 1e5 up is the one the rankings use; below that the instruction counts decide."
)
held, total = stats.interval_coverage(results)
prose.Prose(
    f"On identical work (``inplace_again`` over ``inplace``, eager), the bootstrap interval "
    f"held 1 in {held} of {total} configurations ({held / total:.0%}), short of its nominal "
    "95%: the noise band, which ties every difference that identical work showed, is the "
    "tie rule's other half."
)

# %%
# Time against size, each write
# -----------------------------
#
# Every recipe over in-place, forward + backward, float32, eager, each ratio
# with its 95% bootstrap interval. The dotted line is the in-place write on one
# clone: the copy alone, which some recipes beat (the answer above says
# where).

fig = figures.figure_against_size(results, "element")
plt.show()

# %%

fig = figures.figure_against_size(results, "row")
plt.show()

# %%

fig = figures.figure_against_size(results, "slice")
plt.show()

# %%

fig = figures.figure_against_size(results, "boolean")
plt.show()

# %%

fig = figures.figure_against_size(results, "value_grad")
plt.show()

# %%

fig = figures.figure_against_size(results, "index")
plt.show()

# %%

fig = figures.figure_against_size(results, "list")
plt.show()
# sphinx_gallery_start_ignore
assert stats.measured_writes(results) == list(bench.WRITES), "a write has no figure above"
# sphinx_gallery_end_ignore

# %%
# Bytes saved for backward
# ------------------------
#
# What autograd keeps alive between forward and backward for the write alone,
# each storage counted once. Where a recipe saves the caller's own mask (``where``
# and in-place with a mask index), that memory is the caller's anyway.

print("\n".join(summary.saved_bytes_lines(results)))

# %%
# Peak memory, as you hold your tensors
# -------------------------------------
#
# The peak of one forward + backward step, counted from every allocation and
# free of torch's CPU allocator (``torch.profiler`` with
# ``profile_memory=True``), so it does not move with the machine's load. It
# depends on what the caller does with the tensor it writes from. In the
# timed step, ``y = write(a + b)``, that tensor is a temporary, freed when the
# write returns unless backward saved it: so is ``c = recipe(c, i, v)``, which
# rebinds the name. When the caller keeps it (``y = recipe(c, i, v)`` with
# ``c`` used again, or held by a list or a module), it stays alive through
# backward beside the new tensor. An in-place write is the same in both forms:
# its result *is* ``c``.

print("\n".join(summary.peak_lines(results)))

# %%
# Eager against compiled
# ----------------------
#
# Under ``torch.compile`` the benchmark compiles the forward (``a + b`` and
# the write, the in-place write too) and, through it, its backward, so a
# compiled recipe's ratio to *eager* in-place is two factors: what compiling
# does to the step on this machine (compiled in-place, the grey bar) times
# the recipe over compiled in-place. Compiling is slow, so a run
# may leave this subset out (``--compile-sizes``); then the figure says so.
# The figure and the lines under it are for 1e6 float32 elements.

fig = figures.figure_compiled(results)
plt.show()
prose.Prose("\n\n".join(prose.compiled_lines(results)))

# %%
# Numbers from this machine
# -------------------------
#
# A few seconds of the same benchmark, run while this page was built: 1e4
# float32 elements, eager, a handful of entries. Each is checked against
# ``clone()`` then setitem before it is timed; a number is shown only for code
# proven correct. It uses the benchmark's statistic: the fastest of five
# interleaved rounds, and a bootstrap interval on the ratio of the fastest
# rounds; a ratio is a tie with in-place when it lies within this short run's
# own noise band (``inplace_again`` against ``inplace``) or its interval
# holds 1, the rule of the rest of the page.

live = bench.run(
    bench.Config(
        sizes=(10**4,),
        dtypes=("float32",),
        writes=("element", "boolean"),
        entries=("inplace", "inplace_again", "inplace_on_clone", "clone", "where", "raw_where"),
        compile_sizes=(),
        overhead_sizes=(10**4,),
        min_run_time=0.05,
        rounds=5,
        peak=False,
        attempts=1,
        instruction_sizes=(),
        audit=False,
    ),
    command="recipes/tools/plot_performance.py",
)
live_band = stats.noise(live)
print(
    f"write, entry: fastest round over in-place's, its bootstrap interval (noise band {live_band:.2f}x)"
)
for r in live["records"]:
    if r["entry"] != "inplace" and r.get("ratio_forward_backward_interval"):
        lo, hi = r["ratio_forward_backward_interval"]
        tied = stats.tie(live, r["entry"], "inplace", r["write"], r["size"], live_band)
        verdict = "a tie with in-place" if tied else ""
        print(
            f"  {r['write']:8} {r['entry']:17} {r['forward_backward']['min'] * 1e6:8.1f} us  "
            f"{r['ratio_forward_backward_min']:4.2f}x [{lo:4.2f}, {hi:4.2f}]  {verdict}"
        )
# sphinx_gallery_start_ignore
assert all(r["correct"] for r in live["records"] if r["applicable"])
assert all(  # identical work is always a tie under the page's rule
    stats.tie(live, "inplace_again", "inplace", w, 10**4, live_band) for w in ("element", "boolean")
)
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - ``python -m inplace_recipes bench --help``: the benchmark, and
#   ``docs/measurements/bench/README.md`` for how the committed results were made.
# - ``docs/performance_prose.py`` and ``docs/performance_figures.py`` in the
#   source tree: the functions that turn the results into this page's answer
#   and figures, from the benchmark's statistics (``inplace_recipes.bench``).
# - `PyTorch benchmark recipe
#   <https://pytorch.org/tutorials/recipes/recipes/benchmark.html>`__:
#   ``torch.utils.benchmark.Timer``, which made every timing here.
# - `Autograd mechanics: in-place operations
#   <https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd>`__:
#   why in-place rarely saves much memory.
# - `Hooks for saved tensors
#   <https://pytorch.org/tutorials/intermediate/autograd_saved_tensors_hooks_tutorial.html>`__:
#   how the saved bytes are counted.
