"""
Performance: what does in-place cost, and what does out-of-place cost?
======================================================================

Every out-of-place recipe writes a new tensor where ``x[index] = value``
would change one in place. This page shows, from measurements, how much
time and memory that costs under autograd: forward and backward times as a
ratio to the in-place write measured in the same run, the bytes autograd saves
for backward, eager against ``torch.compile``, and a small run on the machine
that built this page.
"""

# %%
# Should I use in-place operations for speed?
# -------------------------------------------
#
# The committed benchmark (``benchmarks/results/cpu-full.json``, made with
# ``python -m inplace_recipes bench``) times the classic graph
# ``c = a + b; c[index] = value; c.sum().backward()`` with every recipe in
# place of the write. The answer below is computed from those numbers.

import matplotlib.pyplot as plt
import torch

import inplace_recipes as ir
from inplace_recipes import bench

results = bench.load_results()
prov = results["provenance"]
print(
    f"torch {prov['torch']}, {prov['cpu']}, {prov['threads']} thread(s), {prov['date'][:10]}\n"
    f"command: {prov['command']}"
)

SIZE = 10**6
WRITES = list(bench.WRITES)
# one example of each write, to ask best_recipe what it recommends
EXAMPLES = {
    "element": ((1, 2), 0.0),
    "row": (1, 0.0),
    "slice": ((slice(None), slice(1, None, 10)), 0.0),
    "mask": (torch.rand(4, 20) < 0.5, 0.0),
    "value_grad": (1, torch.rand(20, requires_grad=True)),
}
RECOMMENDED = {w: ir.best_recipe(torch.zeros(4, 20), *EXAMPLES[w]) for w in WRITES}


def record(entry, write, mode="eager", size=SIZE):
    for r in results["records"]:
        key = (r["device"], r["dtype"], r["size"], r["write"], r["mode"], r["entry"])
        if key == ("cpu", "float32", size, write, mode, entry):
            return r
    return None


def fb(entry, write, column="", mode="eager"):
    r = record(entry, write, mode)
    return None if r is None else r["ratio_forward_backward" + column]


eager = {w: fb(RECOMMENDED[w], w) for w in WRITES}
clone_alone = {w: fb("plain_clone", w) for w in WRITES}
step_floor = {w: fb("inplace_on_clone", w) for w in WRITES}
compiled = {
    w: min(
        (fb(e, w, mode="compile"), e) for e in ir.RECIPES if fb(e, w, mode="compile") is not None
    )
    for w in WRITES
    if any(fb(e, w, mode="compile") for e in ir.RECIPES)
}
print(f"At {SIZE:.0e} float32 elements, CPU, forward + backward, ratio to in-place:")
print(
    f"  {'write':11} {'recommended':15} {'eager':>6} {'clone alone':>12} {'in-place on a clone':>20}"
)
for w in WRITES:
    print(
        f"  {w:11} {RECOMMENDED[w]:15} {eager[w]:6.2f} {clone_alone[w]:12.2f} {step_floor[w]:20.2f}"
    )
lo, hi = min(eager.values()), max(eager.values())
verdict = (
    "Yes, in eager mode, where the in-place write is allowed: "
    if lo > 1.05
    else "Only sometimes, in eager mode: "
    if hi > 1.05
    else "No: "
)
print(
    f"\n{verdict}the recommended out-of-place recipe costs {lo:.2f}x to {hi:.2f}x the in-place "
    f"write; the same in-place write on one clone costs "
    f"{min(step_floor.values()):.2f}x to {max(step_floor.values()):.2f}x."
)
if compiled:
    c_lo = min(v[0] for v in compiled.values())
    c_hi = max(v[0] for v in compiled.values())
    vs_eager = [fb(name, w, "_eager_inplace", mode="compile") for w, (_, name) in compiled.items()]
    print(
        f"Under torch.compile the best out-of-place recipe costs {c_lo:.2f}x to {c_hi:.2f}x "
        f"the compiled in-place write ("
        + ("it reaches in-place" if c_hi <= 1.1 else "not always in-place speed")
        + f"), and {min(vs_eager):.2f}x to {max(vs_eager):.2f}x the eager in-place write."
    )

# %%
# Read the first column as the price of going out of place with the recipe
# :func:`~inplace_recipes.best_recipe` names. The other two are the floors:
# a clone of the tensor timed alone, and the same in-place write done on one
# clone inside the step. Every out-of-place recipe must write one new tensor,
# so it cannot beat the second floor by more than its Python overhead; a
# clone timed alone is cheaper than the same clone inside a step, because it
# copies from a warm cache into a reused buffer. Recipes that build a
# full-size mask (``mask``, ``where``, and ``masked_fill`` for a basic index
# that is not a single row) pay for the mask too: see the plots.
#
# Time against size
# -----------------
#
# Forward + backward time of each recipe over the in-place time, float32,
# eager, CPU. Below about 1e4 elements the Python cost of each call
# dominates; above, the passes over memory do.

fig, axes = plt.subplots(1, len(WRITES), figsize=(16, 3.8), sharey=True)
for ax, write in zip(axes, WRITES, strict=True):
    table = bench.ratio_table(results, write=write)
    for entry, by_size in table.items():
        if entry == "inplace":
            continue
        sizes = sorted(s for s, v in by_size.items() if v is not None)
        if sizes:
            style = {"plain_clone": "k--", "inplace_on_clone": "k:"}.get(entry, "-o")
            ax.plot(sizes, [by_size[s] for s in sizes], style, label=entry, markersize=3)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set(xscale="log", yscale="log", title=write, xlabel="elements")
axes[0].set_ylabel("time / in-place")
axes[-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
fig.tight_layout()

# %%
# Bytes saved for backward
# ------------------------
#
# What autograd keeps alive between forward and backward for the write, 1e6
# float32 elements, each storage counted once (the hatched part is the
# caller's own mask, saved rather than copied). Zero means the write adds
# nothing to the graph's memory.

entries = [e for e in bench.ENTRIES if e != "plain_clone"]
fig, ax = plt.subplots(figsize=(10, 3.8))
width = 0.8 / len(WRITES)
for i, write in enumerate(WRITES):
    saved = [(record(e, write) or {}).get("saved_bytes") for e in entries]
    inputs = [(record(e, write) or {}).get("saved_input_bytes") for e in entries]
    xs = [j + i * width for j in range(len(entries))]
    ax.bar(xs, [s or 0.5 for s in saved], width, label=write)
    ax.bar(xs, [s or 0 for s in inputs], width, fill=False, hatch="//", linewidth=0)
ax.set_xticks([j + 0.4 - width / 2 for j in range(len(entries))], entries, rotation=20)
ax.set(yscale="log", ylabel="bytes saved (log)", title="saved for backward, 1e6 float32")
ax.set_ylim(bottom=1)  # a write that saves nothing shows no bar
ax.legend(fontsize=7)
fig.tight_layout()

for write in ("element", "mask"):
    row = {e: (record(e, write) or {}).get("saved_bytes") for e in entries}
    print(
        f"{write:8}", ", ".join(f"{e}: {'n/a' if v is None else f'{v:,}'}" for e, v in row.items())
    )

# %%
# Eager against compiled
# ----------------------
#
# The same step under ``torch.compile`` (1e6 float32 elements), as a ratio
# to the *eager* in-place write: a bar below 1 means a compiled out-of-place
# recipe beats eager in-place.

fig, axes = plt.subplots(1, len(WRITES), figsize=(16, 3.4), sharey=True)
for ax, write in zip(axes, WRITES, strict=True):
    names, eager, compiled = [], [], []
    for entry in entries:
        e, c = record(entry, write), record(entry, write, "compile")
        if e and c and e["ratio_forward_backward"] and c["ratio_forward_backward_eager_inplace"]:
            names.append(entry)
            eager.append(e["ratio_forward_backward"])
            compiled.append(c["ratio_forward_backward_eager_inplace"])
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], eager, 0.4, label="eager")
    ax.bar([x + 0.2 for x in xs], compiled, 0.4, label="compiled")
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_xticks(list(xs), names, rotation=60, fontsize=7)
    ax.set(yscale="log", title=write)
axes[0].set_ylabel("time / eager in-place")
axes[-1].legend(fontsize=7)
fig.tight_layout()

reach = []
for write in WRITES:
    c = [
        (r["entry"], r["ratio_forward_backward"])
        for r in results["records"]
        if (r["mode"], r["write"], r["size"], r["dtype"]) == ("compile", write, SIZE, "float32")
        and r["entry"] in ir.RECIPES
        and r["ratio_forward_backward"]
    ]
    if c:
        name, ratio = min(c, key=lambda t: t[1])
        reach.append(f"  {write:11} best compiled recipe {name:15} {ratio:4.2f}x compiled in-place")
print("Under torch.compile (1e6 float32):\n" + "\n".join(reach))

# %%
# The recommended recipe
# ----------------------
#
# :func:`~inplace_recipes.best_recipe` picks, per kind of write, the fastest
# recipe that is correct for it, ranked from these results (geometric mean
# over 1e5 to 1e7 elements and both dtypes, so one noisy measurement does not
# decide), and ``at[]`` uses it by default. The goal was to be within 10% of
# the floor, in-place time plus one clone, at 1e6 elements:

for write in WRITES:
    r = record(RECOMMENDED[write], write)
    issue_floor = r["ratio_forward_backward_floor"]
    step = r["ratio_forward_backward_floor_step"]
    status = (
        "within 10%"
        if issue_floor <= 1.1
        else f"{(issue_floor - 1) * 100:.0f}% above in-place + clone alone, "
        f"{(step - 1) * 100:+.0f}% against in-place on a clone"
    )
    print(
        f"  {write:11} -> {RECOMMENDED[write]:15} {r['ratio_forward_backward']:4.2f}x in-place: {status}"
    )

# %%
# Where the recommended recipe is more than 10% above in-place + a clone
# timed alone, compare it with the in-place write on a clone in the same step
# (the second number): the gap to the first floor is the clone's real cost
# inside a step (cold cache, fresh memory, see ``minor_faults`` in the
# results), which no out-of-place recipe can avoid in eager mode. The rest is
# the recipe's own Python time, and differences under about 20% are within
# the noise of the shared machine these results come from (the interquartile
# ranges are in the results file).
#
# %%
# Numbers from this machine
# -------------------------
#
# A few seconds of the same benchmark, run while this page was built:
# 1e5 float32 elements, eager. Each recipe is checked against ``clone()``
# then setitem before it is timed; a number is shown only for code proven
# correct.

live = bench.run(
    bench.Config(
        sizes=(10**5,),
        dtypes=("float32",),
        writes=("element", "mask"),
        entries=("inplace", "plain_clone", "inplace_on_clone", "clone", "index_put", "where"),
        compile_sizes=(),
        min_run_time=0.05,
        rounds=2,
        peak=False,
    ),
    command="recipes/tools/plot_performance.py",
)
print(f"{live['provenance']['cpu']}, torch {live['provenance']['torch']}, 1 thread")
for r in live["records"]:
    t = r["forward_backward"]
    print(
        f"  {r['write']:8} {r['entry']:16} {t['median'] * 1e6:8.1f} us "
        f"(IQR {t['iqr'] * 1e6:6.1f})  {r['ratio_forward_backward']:4.2f}x in-place  "
        f"saved {r['saved_bytes']:,} B"
    )
# sphinx_gallery_start_ignore
assert all(r["correct"] for r in live["records"])
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - ``python -m inplace_recipes bench --help``: the benchmark, and
#   ``benchmarks/README.md`` for how the committed results were made.
# - `PyTorch benchmark recipe
#   <https://pytorch.org/tutorials/recipes/recipes/benchmark.html>`__:
#   ``torch.utils.benchmark.Timer``, used for every number here.
# - `Autograd mechanics: in-place operations
#   <https://pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd>`__:
#   why in-place rarely saves much memory.
# - `Hooks for saved tensors
#   <https://pytorch.org/tutorials/intermediate/autograd_saved_tensors_hooks_tutorial.html>`__:
#   how the saved bytes are counted.
