"""
Audit a training script without changing it
===========================================

``python -m inplace_recipes audit train.py [args...]`` runs a script under
:func:`~inplace_recipes.auditing.audit`, the way ``python -m cProfile`` runs one
under the profiler: the script gets its own ``sys.argv``, runs as
``__main__`` with an absolute ``__file__``, and the report is printed when it
ends, also when it raises or is interrupted. ``-m module`` runs a module
(``-m torch.distributed.run``), the processes the script starts are audited
too, ``--json`` and ``--fail-on`` make it a check for CI, and ``--fix``
applies the fixes that are changes of code and audits the script again.
"""

# %%
# A script with a bug
# -------------------
#
# This page writes a small training script to a temporary folder and runs the
# command on it, as you would in a terminal. The script's residual block writes
# ``x += ...`` into the input that its first layer saved, its ``ReLU(inplace=True)``
# follows a ``BatchNorm`` (safe), and it steps the optimizer after the backward.

import inspect
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import sys
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(16, 16)
            self.norm = nn.BatchNorm1d(16)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.relu(self.norm(self.lin(x)))
            x += out
            return x


    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), Block(), Block(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(int(sys.argv[1])):
        loss = model(torch.randn(32, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.3f}")
    """
)

folder = Path(tempfile.mkdtemp())
(folder / "train.py").write_text(SCRIPT)


def run(*args: str) -> subprocess.CompletedProcess:
    """``python -m inplace_recipes audit ...`` in the script's folder."""
    command = [sys.executable, "-m", "inplace_recipes", "audit", *args]
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, check=False, timeout=300
    )
    print("$ python -m inplace_recipes audit", *args)
    print(done.stdout + done.stderr, end="")
    print(f"(exit code {done.returncode})")
    return done


# %%
# Run it
# ------
#
# The script's own output comes first, then its traceback, as Python prints it,
# then the report: one row per source line that needs a fix, with how many
# writes it made, which node saved the tensor, and the fix: the statement
# that writes, rewritten out of place with the line's own names (the rest of
# a line of several statements kept as it is, a one-line ``with
# torch.no_grad():`` dropped), or, for a write that is no statement of its
# own (inside a lambda, say), the fix in words. The writes that need no fix
# are summed up on one line.

done = run("train.py", "3")

# sphinx_gallery_start_ignore
assert done.returncode == 1, done.stderr
assert "backward fails  train.py:16" in done.stderr, done.stderr
assert "fix: x = x + out" in done.stderr
from inplace_recipes.auditing._advice import _rewrite_call

assert _rewrite_call("h = x.exp(); h.mul_(2)", "mul_", False) == "h = x.exp(); h = h.mul(2)"
assert _rewrite_call("with torch.no_grad(): h.mul_(2)", "mul_", False) == "h = h.mul(2)"
assert _rewrite_call("run(lambda h: h.mul_(2))", "mul_", False) is None
assert "are safe (ReLU(inplace=True) after NativeBatchNorm" in " ".join(done.stderr.split())
assert str(folder) not in done.stderr.split("inplace_recipes audit of")[1]
# sphinx_gallery_end_ignore

# %%
# JSON for tools
# --------------
#
# With ``--json`` the report is the only thing on stdout: while the script runs,
# file descriptor 1 points at stderr, so its prints, C code and subprocesses
# cannot mix into the JSON (``--json-out FILE`` writes it to a file instead).
# The object has ``findings``, one record per row with the keys of
# ``inplace_recipes.auditing.RECORD_FIELDS`` (see
# :meth:`~inplace_recipes.auditing.AuditReport.to_records`), ``error``,
# ``children``, ``interrupted`` and ``exit``.

command = [sys.executable, "-m", "inplace_recipes", "audit", "--json", "train.py", "1"]
done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False, timeout=300)
data = json.loads(done.stdout)
print(json.dumps(data["findings"][0], indent=2))
print("error:", data["error"].split(":")[0])
print("exit:", data["exit"])

# %%
# Fix the line, then use it in CI
# -------------------------------
#
# ``--fail-on`` picks what fails the check, by the classes of
# ``inplace_recipes.auditing.CONSEQUENCE_TABLE``:

from inplace_recipes.auditing import CONSEQUENCE_TABLE, FAIL_ON
from inplace_recipes.auditing._cli import EXIT_FOUND, EXIT_NOT_RUN, EXIT_UNAUDITED

for consequence in CONSEQUENCE_TABLE:
    print(consequence.text())

# %%
# A script that raises exits with 1, as Python does (an in-place error too);
# one that runs but has a write of the chosen class exits with the code below,
# in place of the script's own; children that ran unaudited fail every
# ``--fail-on``; nothing to run (no such file, a syntax error) gives its own
# code. The report's last line says which code was given and why.

print(f"--fail-on found a write: {EXIT_FOUND}; children unaudited: {EXIT_UNAUDITED}")
print(f"nothing ran: {EXIT_NOT_RUN}; --fail-on classes: {', '.join(FAIL_ON)}")

# %%
# Let the command apply its fixes
# -------------------------------
#
# ``--diff`` prints, after the report, the diff of the fixes that are
# changes of code, and writes nothing. ``--fix`` writes them into the
# script's files (those under the working directory or the script's folder),
# with `libcst <https://libcst.readthedocs.io>`_, which keeps comments and
# formatting as they are, then runs the script again under the audit, in a new
# process, and says whether the rows it fixed are gone and the script ran to
# its end; the exit code is then the new run's. A fix that is advice (move an
# optimizer step, clone in another use) is listed as not applied.

done = run("--diff", "train.py", "1")

# sphinx_gallery_start_ignore
assert (folder / "train.py").read_text() == SCRIPT  # --diff wrote nothing
assert "-        x += out\n+        x = x + out\n" in done.stdout, done.stdout
assert "Nothing was written: run with --fix" in done.stderr
# sphinx_gallery_end_ignore

# %%
# With ``--fix``, the script trains and its second audit finds nothing:

done = run("--fix", "train.py", "2")

# sphinx_gallery_start_ignore
assert done.returncode == 0, done.stderr
assert (folder / "train.py").read_text() == SCRIPT.replace("x += out", "x = x + out")
assert "1 fix of code applied to train.py; 0 not applied." in done.stderr
assert "it ran to its end, every fixed row is gone, 0 harmful rows left" in done.stderr
# sphinx_gallery_end_ignore

# %%
# and the check passes:

done = run("--fail-on", "any", "train.py", "2")

# sphinx_gallery_start_ignore
assert done.returncode == 0, done.stderr
assert "No harmful in-place writes." in done.stderr
# sphinx_gallery_end_ignore

# %%
# A silent ``.data`` edit does not raise, but the audit reports it; here the
# script clips weights between the forward and the backward that uses them:

(folder / "train.py").write_text(
    SCRIPT.replace("x += out", "x = x + out").replace(
        "    opt.zero_grad()\n",
        "    opt.zero_grad()\n    for p in model.parameters():\n        p.data.clamp_(-1, 1)\n",
    )
)
done = run("--fail-on", "wrong-gradients", "train.py", "1")

# sphinx_gallery_start_ignore
assert done.returncode == EXIT_FOUND, done.stderr
assert "wrong gradients" in done.stderr
assert "torch.no_grad()" in done.stderr
assert "move it below train.py:28" in done.stderr, done.stderr
# sphinx_gallery_end_ignore

# %%
# Workers started by the script
# ------------------------------
#
# A DDP script starts its workers with ``torch.multiprocessing.spawn`` (or is
# started by ``torchrun``). The audit follows them: each worker runs under its
# own audit, and its writes come back into the one report, with how many
# workers were audited. Here each of two workers clips its weights with
# ``.data`` between the forward and the backward:

(folder / "worker.py").write_text(
    textwrap.dedent(
        """
        import torch


        def worker(rank):
            torch.manual_seed(rank)
            model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
            loss = model(torch.randn(8, 4)).pow(2).mean()
            for p in model.parameters():
                p.data.clamp_(-0.1, 0.1)
            loss.backward()
        """
    )
)
(folder / "spawn.py").write_text(
    textwrap.dedent(
        """
        import torch.multiprocessing as mp
        from worker import worker

        if __name__ == "__main__":
            mp.spawn(worker, nprocs=2)
        """
    )
)
done = run("--fail-on", "wrong-gradients", "spawn.py")

# sphinx_gallery_start_ignore
assert done.returncode == EXIT_FOUND, done.stderr
assert "wrong gradients  worker.py:10" in done.stderr, done.stderr
assert "2 child processes were audited" in done.stderr
# sphinx_gallery_end_ignore

# %%
# ``torchrun``'s workers are subprocesses: run the launcher with ``-m``, as
# ``python -m torch.distributed.run`` would, and they are audited the same way
# (``python -m inplace_recipes audit -m torch.distributed.run --standalone
# --nproc-per-node 2 train.py``; the command's tests run it). A child that
# leaves no report (killed, ``os._exit``, ``python -c``) is counted as
# unaudited, and fails every ``--fail-on``.
#
# Audit a few steps, then Ctrl-C
# ------------------------------
#
# A training loop need not end for its report: after Ctrl-C (``SIGINT``) or
# ``SIGTERM`` the command prints the script's traceback (no frame of the
# audit's own) and the report of what ran. This script trains forever; the page
# interrupts it after its third step:

import os
import signal

(folder / "forever.py").write_text(
    (folder / "train.py").read_text().replace("range(int(sys.argv[1]))", "range(10**9)")
)
command = [sys.executable, "-m", "inplace_recipes", "audit", "forever.py"]
process = subprocess.Popen(
    command,
    cwd=folder,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    text=True,
    env={**os.environ, "PYTHONUNBUFFERED": "1"},
    preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - as in a terminal
)
print("$ python -m inplace_recipes audit forever.py")
for line in process.stdout:
    print(line, end="")
    if line.startswith("step 2"):
        process.send_signal(signal.SIGINT)
        break
_, err = process.communicate(timeout=120)  # the steps printed after Ctrl-C are left out
print("^C", err, sep="\n", end="")
print(f"(exit code {process.returncode})")

# sphinx_gallery_start_ignore
import re

assert process.returncode == 130, err
assert "KeyboardInterrupt" in err
assert "inplace_recipes" not in err.split("inplace_recipes audit of")[0]
assert "Interrupted by SIGINT: the report covers what ran before it." in err
# the column is as wide as its widest row: with Ctrl-C between a step's clamp_ and its
# backward, "wrong gradients if backpropagated" is a second row of the same line
assert re.search(r"^1 +wrong gradients +forever\.py:27 ", err, re.MULTILINE), err
# sphinx_gallery_end_ignore

# %%
# Guard the test suite: ``pytest --inplace-audit``
# ------------------------------------------------
#
# The package installs a pytest plugin. ``pytest --inplace-audit`` (or
# ``inplace_audit = true`` in the project's pytest options) runs the body of
# every test under the audit, and fails a test whose code makes a write of the
# class ``--inplace-audit-fail-on`` names: ``wrong-gradients`` by default,
# ``backward-fails``, ``unused-graph`` or ``any``, as for the command's
# ``--fail-on`` (ini option ``inplace_audit_fail_on``). The
# failure message is the report's row, with the file, the line and the fix.
# Fixtures are not audited; a test that wants the report itself takes the
# ``inplace_audit`` fixture, which works like ``ir.audit``.
#
# A model's test that edits a saved tensor through ``.data`` passes, because
# nothing raises; under the plugin it fails:

TEST = textwrap.dedent(
    """\
    import torch
    from torch import nn


    def test_training_step():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.Sigmoid(), nn.Linear(16, 1))
        h = model[1](model[0](torch.randn(4, 8)))
        h.data.clamp_(0.1, 0.9)
        loss = model[2](h).pow(2).mean()
        loss.backward()
        assert all(p.grad is not None for p in model.parameters())
    """
)
(folder / "test_model.py").write_text(TEST)


def pytest(*args: str) -> subprocess.CompletedProcess:
    """``pytest ...`` in the test's folder (``-p`` also loads the plugin from a source tree)."""
    command = [sys.executable, "-m", "pytest", "-p", "inplace_recipes.pytest_plugin", *args]
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, check=False, timeout=300
    )
    print("$ pytest", *args)
    failures = done.stdout.partition("= FAILURES =")[2].partition(" Captured ")[0]
    print(failures.strip("=- \n") or done.stdout.strip().splitlines()[-1])
    return done


plain = pytest("-q", "test_model.py")
audited = pytest("--inplace-audit", "test_model.py")

# sphinx_gallery_start_ignore
assert plain.returncode == 0, plain.stdout
assert audited.returncode == 1, audited.stdout
assert "test_model.py:9: wrong gradients: clamp_" in audited.stdout, audited.stdout
assert "    fix: h = h.clamp(0.1, 0.9)" in audited.stdout
assert "inplace audit: on, failing on wrong-gradients" in audited.stdout
# The README shows this very row: each of its lines is in the output.
README = Path(inspect.currentframe().f_code.co_filename).resolve().parents[2] / "README.md"
block = README.read_text().split("inplace audit (--inplace-audit-fail-on wrong-gradients)")[1]
for readme_line in block.split("```")[0].strip().splitlines()[1:]:
    assert readme_line in audited.stdout, readme_line
# sphinx_gallery_end_ignore

# %%
# Tests that run no backward
# --------------------------
#
# Many tests run a forward and no backward: they check a module's output, or
# evaluate.
# No gradient is computed there, so each class fails them for this:
#
# - ``wrong-gradients``, the default, fails none of them: it fails a write
#   autograd does not see only when the test then ran a backward through it.
# - ``backward-fails`` fails a write autograd refused at once (``raises``): the
#   test raised there, unless it caught the error (``pytest.raises``), which
#   this class fails too.
# - ``unused-graph`` fails the writes whose harm needs the backward the test did
#   not run (``fails if backpropagated``, ``wrong gradients if
#   backpropagated``, ``fails if backward again``): the class for forward-only
#   tests.
# - ``any`` fails every write that needs a fix.
#
# A forward-only test of a codebook update through ``.data``, as a vector
# quantizer writes it, passes under the default and fails under
# ``unused-graph``:

(folder / "test_forward.py").write_text(
    textwrap.dedent(
        """\
        import torch


        def test_codebook_update_forward_only():
            x = torch.randn(3, 4, requires_grad=True)
            embed = torch.randn(5, 4)
            dist = torch.einsum("bd,kd->bk", x, embed)
            embed.data[1:3] = 0.0
            assert dist.shape == (3, 5)
        """
    )
)
default = pytest("--inplace-audit", "test_forward.py")
forward_only = pytest(
    "--inplace-audit", "--inplace-audit-fail-on", "unused-graph", "test_forward.py"
)

# sphinx_gallery_start_ignore
assert default.returncode == 0, default.stdout
assert forward_only.returncode == 1, forward_only.stdout
assert "test_forward.py:8: wrong gradients if backpropagated" in forward_only.stdout
from inplace_recipes import pytest_plugin

for name in FAIL_ON:  # the classes listed above are the plugin's, each documented there
    assert f"``{name}``" in (pytest_plugin.__doc__ or ""), name
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - :doc:`plot_audit_model`: the same report from Python, ``with ir.audit()`` or
#   ``ir.audit(fn, *args)``, and what an audit costs.
# - `The cProfile command line <https://docs.python.org/3/library/profile.html>`_,
#   which this command imitates.
