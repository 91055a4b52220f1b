"""``audit --fix`` rewrites the code fixes into the files, runs the script again and says so.

On every script of the audit's test set (``tests/test_audit_fix_applied.py``)
and on planted bugs in the tests' real models (ResNet, DenseNet, nanoGPT,
copied next to a training script), ``--fix`` must apply each fix that is a
change of code, run the script again under the audit in a new process, find
the fixed rows gone and the script run to its end, and the script's results
after the rewrite (gradients, or parameters after the step) must equal a
reference written without in-place writes. ``--diff`` and a plain audit
write nothing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor, nn

import models_nanogpt as gpt
import models_torchvision as tv
import test_audit_fix_applied as applied

TESTS = Path(__file__).resolve().parent


def command(folder: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``python -m inplace_recipes audit OPTIONS train.py out.pt`` in ``folder``."""
    line = [sys.executable, "-m", "inplace_recipes", "audit", *options, "train.py", "out.pt"]
    return subprocess.run(
        line, cwd=folder, capture_output=True, text=True, check=False, timeout=300
    )


def audit(folder: Path, *options: str) -> tuple[dict[str, Any], str]:
    """The JSON report of the command with ``options``, and its stderr."""
    done = command(folder, "--json", *options)
    return json.loads(done.stdout), done.stderr


def two_losses_recomputed_reference() -> list[Tensor]:
    """The first fix of the two-losses script: loss2 from a new forward after the step."""
    torch.manual_seed(0)
    trunk = nn.Sequential(nn.Linear(3, 4), nn.Tanh()).double()
    head1, head2 = nn.Linear(4, 1).double(), nn.Linear(4, 1).double()
    params = [*trunk.parameters(), *head1.parameters(), *head2.parameters()]
    features = trunk(torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3))
    grads = torch.autograd.grad(head1(features).pow(2).mean(), params, allow_unused=True)
    return [
        (p - 0.1 * g).detach() if g is not None else p.detach()
        for p, g in zip(params, grads, strict=True)
    ]


#: The reference after --fix, where the first fix is not the one test_audit_fix_applied applies.
REFERENCES: dict[str, Callable[[], list[Tensor]]] = {
    "two losses, one step": two_losses_recomputed_reference,
}


@pytest.mark.parametrize("case", applied.CASES, ids=lambda c: c.name)
def test_fix_rewrites_reruns_and_gives_the_reference(tmp_path: Path, case: applied.Case) -> None:
    script = textwrap.dedent(case.script)
    (tmp_path / "train.py").write_text(script)
    data, stderr = audit(tmp_path, "--fix")
    fixes = data["fixes"]
    assert [r["consequence"] for r in fixes["applied"]] == [case.consequence], stderr
    assert fixes["not_applied"] == [], stderr
    assert fixes["written"] == ["train.py"]
    rerun = fixes["rerun"]
    assert rerun["ran_to_end"], stderr
    assert rerun["fixed_rows_gone"], stderr
    assert rerun["left"] == [], stderr
    assert data["exit"]["script"] != 0 or case.consequence != "backward fails"
    fixed = (tmp_path / "train.py").read_text()
    assert fixed != script
    got = torch.load(tmp_path / "out.pt")
    want = REFERENCES.get(case.name, case.reference)()
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_the_rewrite_keeps_comments_and_the_rest_of_the_file(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """\
        import sys
        import torch

        # a residual, written in place
        x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
        h = torch.sigmoid(x)   # saves its output
        h += x  # the residual
        (h * h).sum().backward()
        torch.save([x.grad], sys.argv[1])
        """
    )
    (tmp_path / "train.py").write_text(script)
    data, stderr = audit(tmp_path, "--fix")
    assert data["fixes"]["rerun"]["fixed_rows_gone"], stderr
    assert (tmp_path / "train.py").read_text() == script.replace(
        "h += x  # the residual", "h = h + x  # the residual"
    )


def test_diff_and_a_plain_audit_write_nothing(tmp_path: Path) -> None:
    script = textwrap.dedent(applied.RESIDUAL)
    (tmp_path / "train.py").write_text(script)
    plain, _ = audit(tmp_path)
    assert "fixes" not in plain
    data, _ = audit(tmp_path, "--diff")
    assert (tmp_path / "train.py").read_text() == script
    assert data["fixes"]["written"] == []
    assert data["fixes"]["rerun"] is None
    assert "\n-h += x\n+h = h + x\n" in data["fixes"]["diff"]
    done = command(tmp_path, "--diff")
    assert done.stdout.startswith("--- train.py\n+++ train.py\n"), done.stdout
    assert "Nothing was written: run with --fix" in done.stderr
    assert (tmp_path / "train.py").read_text() == script


def test_advice_is_listed_as_not_applied(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """\
        import sys
        import torch

        x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
        h = x * 2
        with torch.no_grad():
            h.mul_(3)
        (h * h).sum().backward()
        torch.save([x.grad], sys.argv[1])
        """
    )
    (tmp_path / "train.py").write_text(script)
    data, _ = audit(tmp_path, "--fix")
    fixes = data["fixes"]
    assert fixes["applied"] == []
    ((skipped,),) = [[n["record"]] for n in fixes["not_applied"]]
    assert skipped["consequence"] == "wrong gradients"
    assert fixes["not_applied"][0]["why"] == "advice, not a change of code"
    assert fixes["written"] == []
    assert (tmp_path / "train.py").read_text() == script
    text = command(tmp_path, "--fix").stderr
    assert "0 fixes of code applied to no file; 1 not applied." in text
    assert "not applied train.py:7: advice, not a change of code" in text
    assert (tmp_path / "train.py").read_text() == script


# -- planted bugs in real models ------------------------------------------------------------

MODEL_SCRIPT = """\
import sys
import torch
import {module} as models

torch.manual_seed(0)
model = {build}
x = {x}
model(x).sum().backward()
torch.save([p.grad for p in model.parameters()], sys.argv[1])
"""


def functional_reference(make: Callable[[], tuple[nn.Module, Tensor]]) -> list[Tensor]:
    """The planted model's gradients with its in-place writes made out of place by torch."""
    model, x = make()
    loss = torch.func.functionalize(model)(x).sum()
    loss.backward()
    return [p.grad for p in model.parameters()]  # type: ignore[misc]


def _resnet() -> tuple[nn.Module, Tensor]:
    torch.manual_seed(0)
    return tv.ResNet18(bug=True), torch.linspace(-1, 1, 2 * 3 * 32 * 32).reshape(2, 3, 32, 32)


def _densenet(efficient: bool) -> Callable[[], tuple[nn.Module, Tensor]]:
    def make() -> tuple[nn.Module, Tensor]:
        torch.manual_seed(0)
        model = tv.DenseBlock(4, efficient, False, True)
        return model, torch.linspace(-1, 1, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8).requires_grad_()

    return make


def _gpt(bug: str) -> Callable[[], tuple[nn.Module, Tensor]]:
    def make() -> tuple[nn.Module, Tensor]:
        torch.manual_seed(0)
        return gpt.GPT(bug=bug), torch.arange(16).reshape(2, 8) % 32

    return make


PLANTED = {
    "resnet, residual into the block's input": (
        "models_torchvision",
        "models.ResNet18(bug=True)",
        "torch.linspace(-1, 1, 2 * 3 * 32 * 32).reshape(2, 3, 32, 32)",
        _resnet,
    ),
    "densenet, write into norm2's input": (
        "models_torchvision",
        "models.DenseBlock(4, False, False, True)",
        "torch.linspace(-1, 1, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8).requires_grad_()",
        _densenet(False),
    ),
    "densenet, checkpointed, write into norm2's input": (
        "models_torchvision",
        "models.DenseBlock(4, True, False, True)",
        "torch.linspace(-1, 1, 2 * 3 * 8 * 8).reshape(2, 3, 8, 8).requires_grad_()",
        _densenet(True),
    ),
    "nanogpt, residual in place": (
        "models_nanogpt",
        'models.GPT(bug="residual")',
        "torch.arange(16).reshape(2, 8) % 32",
        _gpt("residual"),
    ),
    "nanogpt, masking the softmax in place": (
        "models_nanogpt",
        'models.GPT(bug="softmax")',
        "torch.arange(16).reshape(2, 8) % 32",
        _gpt("softmax"),
    ),
}


@pytest.mark.parametrize("name", PLANTED)
def test_fix_on_a_planted_bug_in_a_real_model_gives_torch_s_functional_gradients(
    tmp_path: Path, name: str
) -> None:
    module, build, x, make = PLANTED[name]
    shutil.copy(TESTS / f"{module}.py", tmp_path / f"{module}.py")
    (tmp_path / "train.py").write_text(MODEL_SCRIPT.format(module=module, build=build, x=x))
    data, stderr = audit(tmp_path, "--fix")
    fixes = data["fixes"]
    assert data["exit"]["script"] == 1, stderr  # the planted bug broke backward
    assert {r["file"] for r in fixes["applied"]} == {f"{module}.py"}, stderr
    assert fixes["written"] == [f"{module}.py"]
    rerun = fixes["rerun"]
    assert rerun["ran_to_end"], stderr
    assert rerun["fixed_rows_gone"], stderr
    assert rerun["left"] == [], stderr
    got, want = torch.load(tmp_path / "out.pt"), functional_reference(make)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b)


# -- the GAN fix, whatever the order of the lines -------------------------------------------

GAN_LOSS_FIRST = """\
import sys
import torch
from torch import nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3)).double()
D = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1), nn.Sigmoid()).double()
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
bce = nn.BCELoss()
noise = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(4, 2)
real = torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(4, 3)
ones, zeros = torch.ones(4, 1, dtype=torch.float64), torch.zeros(4, 1, dtype=torch.float64)
fake = G(noise)
d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
g_loss = bce(D(fake), ones)  # G's loss, computed before D's step
opt_d.zero_grad()
d_loss.backward()
opt_d.step()
opt_g.zero_grad()
g_loss.backward()
opt_g.step()
torch.save([p.detach() for p in [*G.parameters(), *D.parameters()]], sys.argv[1])
"""


def gan_loss_first_reference() -> list[Tensor]:
    """D steps on its own loss; G steps on its loss through the stepped D."""
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3)).double()
    D = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1), nn.Sigmoid()).double()
    noise = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(4, 2)
    real = torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(4, 3)
    g = [p.detach().clone().requires_grad_() for p in G.parameters()]
    d = [p.detach().clone().requires_grad_() for p in D.parameters()]

    def gen(g: list[Tensor]) -> Tensor:
        return torch.tanh(noise @ g[0].t() + g[1]) @ g[2].t() + g[3]

    def disc(d: list[Tensor], x: Tensor) -> Tensor:
        return torch.sigmoid(torch.tanh(x @ d[0].t() + d[1]) @ d[2].t() + d[3])

    def bce(p: Tensor, target: float) -> Tensor:
        return -(target * p.log() + (1 - target) * (1 - p).log()).mean()

    d_loss = bce(disc(d, real), 1.0) + bce(disc(d, gen(g).detach()), 0.0)
    stepped = [
        (p - 0.1 * gr).detach() for p, gr in zip(d, torch.autograd.grad(d_loss, d), strict=True)
    ]
    g_grads = torch.autograd.grad(bce(disc(stepped, gen(g)), 1.0), g)
    return [*[(p - 0.1 * gr).detach() for p, gr in zip(g, g_grads, strict=True)], *stepped]


def test_the_gan_fix_is_the_standard_one_when_g_s_loss_comes_before_d_s_step(
    tmp_path: Path,
) -> None:
    (tmp_path / "train.py").write_text(GAN_LOSS_FIRST)
    data, stderr = audit(tmp_path, "--fix")
    rows = data["fixes"]["applied"]
    assert {r["code"] for r in rows} == {"opt_d.step()"}, stderr
    for row in rows:
        assert row["fix"].startswith(
            "compute g_loss after this step, from a new forward (not from the output made at "
            "train.py:16)"
        ), row["fix"]
    fixed = (tmp_path / "train.py").read_text().splitlines()
    step = fixed.index("opt_d.step()")
    assert fixed[step + 1] == "g_loss = bce(D(fake), ones)  # G's loss, computed before D's step"
    assert "g_loss = bce(D(fake), ones)  # G's loss, computed before D's step" not in fixed[:step]
    assert data["fixes"]["rerun"]["ran_to_end"], stderr
    assert data["fixes"]["rerun"]["left"] == [], stderr
    got, want = torch.load(tmp_path / "out.pt"), gan_loss_first_reference()
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
