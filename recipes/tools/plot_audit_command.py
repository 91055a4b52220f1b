"""
Audit a training script without changing it
===========================================

``python -m inplace_recipes audit train.py [args...]`` runs a script under
:func:`~inplace_recipes.auditing.audit`, the way ``python -m cProfile`` runs one
under the profiler: the script gets its own ``sys.argv`` and runs as
``__main__``, and the report is printed when it ends, also when it raises.
``--json`` and ``--fail-on`` make it a check for CI.
"""

# %%
# A script with a bug
# -------------------
#
# This page writes a small training script to a temporary folder and runs the
# command on it, as you would in a terminal. The script's residual block writes
# ``x += ...`` into the input that its first layer saved, its ``ReLU(inplace=True)``
# follows a ``BatchNorm`` (safe), and it steps the optimizer after the backward.

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
# writes it made, which node saved the tensor, and the fix written with the
# line's own names. The writes that need no fix are summed up on one line.

done = run("train.py", "3")

# sphinx_gallery_start_ignore
assert done.returncode == 1, done.stderr
assert "backward fails  train.py:16" in done.stderr, done.stderr
assert "fix: x = x + out" in done.stderr
assert "are safe (ReLU(inplace=True) after NativeBatchNorm" in " ".join(done.stderr.split())
assert str(folder) not in done.stderr.split("inplace_recipes audit of")[1]
# sphinx_gallery_end_ignore

# %%
# JSON for tools
# --------------
#
# With ``--json`` the report is the only thing on stdout (the script's prints go
# to stderr): ``{"findings": [...], "error": ...}``, one record per row, with the
# keys of ``inplace_recipes.auditing.RECORD_FIELDS`` (see
# :meth:`~inplace_recipes.auditing.AuditReport.to_records`).

command = [sys.executable, "-m", "inplace_recipes", "audit", "--json", "train.py", "1"]
done = subprocess.run(command, cwd=folder, capture_output=True, text=True, check=False, timeout=300)
data = json.loads(done.stdout)
print(json.dumps(data["findings"][0], indent=2))
print("error:", data["error"].split(":")[0])

# %%
# Fix the line, then use it in CI
# -------------------------------
#
# ``--fail-on`` picks what fails the check: ``backward-fails`` (also writes that
# autograd refuses at once), ``wrong-gradients`` (silent: ``.data``, writes under
# ``no_grad``), or ``any`` of them. A script that raises exits with 1, as
# Python does; one that runs but has a write of the chosen class exits with 3;
# otherwise the script's own exit code passes through. Writes that only touch a
# graph kept with ``retain_graph=True`` and never used again do not fail it.
#
# With the report's fix applied, the script trains and the check passes:

(folder / "train.py").write_text(SCRIPT.replace("x += out", "x = x + out"))
done = run("--fail-on", "any", "train.py", "2")

# sphinx_gallery_start_ignore
assert done.returncode == 0, done.stderr
assert "No harmful in-place writes." in done.stderr
# sphinx_gallery_end_ignore

# %%
# A silent ``.data`` edit does not raise, so only the audit sees it; here the
# script clips weights between the forward and the backward that uses them:

(folder / "train.py").write_text(
    SCRIPT.replace("x += out", "x = x + out").replace(
        "    opt.zero_grad()\n",
        "    opt.zero_grad()\n    for p in model.parameters():\n        p.data.clamp_(-1, 1)\n",
    )
)
done = run("--fail-on", "wrong-gradients", "train.py", "1")

# sphinx_gallery_start_ignore
assert done.returncode == 3, done.stderr
assert "wrong gradients" in done.stderr
assert "torch.no_grad()" in done.stderr
assert "move it below line 28" in done.stderr, done.stderr
# sphinx_gallery_end_ignore

# %%
# Guard the test suite: ``pytest --inplace-audit``
# ------------------------------------------------
#
# The package installs a pytest plugin. ``pytest --inplace-audit`` (or
# ``inplace_audit = true`` in the project's pytest options) runs the body of
# every test under the audit, and fails a test whose code makes a write of the
# class ``--inplace-audit-fail-on`` names: ``wrong-gradients`` by default,
# ``backward-fails`` or ``any`` (ini option ``inplace_audit_fail_on``). The
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
# sphinx_gallery_end_ignore

# %%
# Learn more
# ----------
#
# - :doc:`plot_audit_model`: the same report from Python, ``with ir.audit()`` or
#   ``ir.audit(fn, *args)``, and what an audit costs.
# - `The cProfile command line <https://docs.python.org/3/library/profile.html>`_,
#   which this command imitates.
