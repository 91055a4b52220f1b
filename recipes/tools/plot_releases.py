"""
Other torch releases
====================

This site is checked against the pinned torch. ``nox -s releases`` runs the
same checks on other releases: every repro of the error reference, every
claim the package registers in :mod:`inplace_recipes.claims` (the torch
behaviours it relies on; a claim a page registers for itself, such as the
audit page's, runs on the pinned torch only, when the page is built), the
compatibility matrix and the conformance suites. Each run is committed
with its provenance in ``docs/measurements/releases/``, and this page lines
them up against the pin, with every value that differs from the pin
highlighted.
"""

# %%
# The runs
# --------
#
# One file per release, each made in its own virtual environment:

import releases

comparison = releases.side_by_side()
for prov in comparison.provenance.values():
    print(
        f"torch {prov['torch']:<16} CUDA build: {prov['torch_cuda'] or 'no':<5} "
        f"run on {prov['date']}, commit {prov['git_commit'][:12]}, "
        f"Python {prov['python']}, {prov['total_seconds']:.0f} s"
    )
print()
print(comparison.summary())
# sphinx_gallery_start_ignore
assert comparison.baseline == releases.pinned_torch()
assert len(comparison.releases) >= 2, "run nox -s releases: only the pin has a run"
from inplace_recipes.claims import CLAIMS

in_run = {row.label for row in comparison.rows["claims"]}
assert in_run <= {c.statement for c in CLAIMS.values()}, in_run
page_claim = "r[:, 0] = 0 on the output tanh saved makes backward fail, with no other write"
assert page_claim not in in_run  # the audit page's own claim is not in the release runs
# sphinx_gallery_end_ignore

# %%
# Bugs in torch: fixed yet?
# -------------------------
#
# The claims marked as bugs are torch behaviours this site works around.
# A bug claim that stops holding on a newer release is a fix:

fixed = comparison.fixed_bugs()
for row, fixed_in in fixed:
    if fixed_in:
        print(f"FIXED in torch {', '.join(fixed_in)}: {row.label}")
    else:
        print(f"still there in every release run: {row.label}")

# %%
# Every claim, on every release:

comparison.table("claims")

# %%
# Error messages
# --------------
#
# What each repro of the :doc:`error reference </errors>` raises on each
# release, in full:

comparison.table("errors")

# %%
# Examples on that page whose output, an error message or a printed value,
# differs from what the page shows, release by release:

for release, run in releases.load_results().items():
    differ = [e for e in run["errors"]["examples"] if not e["matches"]]
    not_explained = [
        e
        for e in run["errors"]["examples"]
        if e["expected_exception"] and e["explained_as"].startswith("not recognised")
    ]
    print(
        f"torch {release}: {len(run['errors']['examples'])} examples, "
        f"{len(differ)} differ from the page, "
        f"{len(not_explained)} errors explain() does not recognise"
    )
    for example in differ:
        print(f"    {example['section']}: {example['source'].splitlines()[-1]}")

# %%
# The compatibility matrix
# ------------------------
#
# The cells of the :doc:`compatibility matrix <plot_compatibility_matrix>` that
# change between releases (a cell is a recipe under one transform or dtype):

changed = comparison.changes("matrix")
print(
    f"{len(changed)} of {len(comparison.rows['matrix'])} cells differ from torch {comparison.baseline}"
)
comparison.table("matrix", only_changed=True)

# %%
# The conformance suites
# ----------------------
#
# The ported PyTorch, JAX and array-api-extra test cases, run with pytest on
# each release:

for release, run in releases.load_results().items():
    suite = run["conformance"]
    print(f"torch {release}: {suite['totals']} ({', '.join(suite['files']) or 'no suite found'})")
changed = comparison.changes("conformance")
print(f"{len(changed)} tests have another outcome than on torch {comparison.baseline}")
comparison.table("conformance", only_changed=True)

# %%
# Adding a release
# ----------------
#
# ``nox -s releases -- 2.15.0`` installs torch 2.15.0 into its own
# environment, runs every check and writes
# ``docs/measurements/releases/torch-2.15.0.json``; this page shows every file
# there. Add the release to ``OTHER_TORCH_RELEASES`` in ``noxfile.py`` so the
# freshness test keeps it up to date. ``docs/measurements/README.md`` says what a
# run costs in time and disk.
#
# Learn more
# ----------
#
# - `PyTorch releases <https://github.com/pytorch/pytorch/releases>`_
# - The :doc:`error reference </errors>` and the
#   :doc:`compatibility matrix <plot_compatibility_matrix>`, which this page runs.
