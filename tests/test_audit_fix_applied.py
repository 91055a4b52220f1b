"""Every fix the audit command prints, applied to the script it was printed for.

Each case is a training script on disk with one planted bug. The test runs it
through ``python -m inplace_recipes audit --json``, takes the fix of its one
harmful row, applies it to the script as a user would (the line replaced by the
fix; a move or a recomputation done where the fix says), runs the script again
through the command and checks two things: the finding is gone, and what the
script computed (gradients, or parameters after the step) equals a reference
computed here, independently, without the bug.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import Tensor, nn


@dataclass(frozen=True)
class Case:
    name: str
    script: str  # saves its results with torch.save to sys.argv[1]
    reference: Callable[[], list[Tensor]]
    fix: str  # a regular expression the printed fix must match
    consequence: str = "backward fails"
    alternative: bool = False  # apply the fix's "or, if ..." branch


def audit_json(folder: Path) -> tuple[dict[str, Any], subprocess.CompletedProcess[str]]:
    command = [sys.executable, "-m", "inplace_recipes", "audit", "--json", "train.py", "out.pt"]
    done = subprocess.run(
        command, cwd=folder, capture_output=True, text=True, check=False, timeout=240
    )
    return json.loads(done.stdout), done


def apply(lines: list[str], record: dict[str, Any], alternative: bool = False) -> list[str]:
    """The script with ``record["fix"]`` applied as its text says."""
    fix: str = record["fix"]
    number = record["line"] - 1
    indent = re.match(r"\s*", lines[number])[0]  # type: ignore[index]
    if alternative and fix.endswith("run this step after that backward"):
        backward = int(re.search(r"the backward at train\.py:(\d+)", fix)[1])  # type: ignore[index]
        lines.insert(backward - 1, lines.pop(number))  # below the backward, which moved up by one
        return lines
    if fix.startswith("compute "):  # recompute the loss after the step, from a new forward
        loss = fix.split()[1]
        forward_line = int(re.search(r"made at train\.py:(\d+)", fix)[1])  # type: ignore[index]
        output, forward = (part.strip() for part in lines[forward_line - 1].split("=", 1))
        (at,) = [n for n, text in enumerate(lines) if text.strip().startswith(f"{loss} =")]
        moved = lines.pop(at).replace(output, forward)
        lines.insert(number, moved)  # the step moved up by one: insert below it
        return lines
    code = fix.split("  #")[0]
    if code.startswith("build "):  # build self.relu as nn.ReLU(inplace=False)
        attribute, built = re.fullmatch(r"build (\S+) as (.+)", code).groups()  # type: ignore[union-attr]
        (at,) = [n for n, text in enumerate(lines) if text.strip().startswith(f"{attribute} =")]
        lines[at] = re.sub(r"=.*", f"= {built}", lines[at])
        return lines
    if code.startswith("keep this write"):
        code = lines[number].strip()
    lines[number] = indent + code
    below = re.search(r"move it below train\.py:(\d+)", fix)
    if below:
        block = [number]
        header = lines[number - 1]
        if header.rstrip().endswith(":") and len(header) - len(header.lstrip()) < len(indent):
            block.insert(0, number - 1)  # the loop or with that holds the line moves with it
        target = int(below[1]) - 1
        moved = [lines[n] for n in block]
        del lines[block[0] : block[-1] + 1]
        target -= len(block)
        lines[target + 1 : target + 1] = moved
    return lines


# -- the cases ---------------------------------------------------------------------------------


def _x() -> Tensor:
    return torch.linspace(-1, 1, 4, dtype=torch.float64)


PLACEHOLDER = """
    import sys
    import torch

    x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    y = x.exp()
    z = y.add_(1)
    (z * y).sum().backward()
    torch.save([x.grad], sys.argv[1])
"""


def placeholder_reference() -> list[Tensor]:
    x = _x()
    return [2 * (x.exp() + 1) * x.exp()]


RESIDUAL = """
    import sys
    import torch

    torch.manual_seed(0)
    lin = torch.nn.Linear(4, 4).double()
    x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    h = torch.sigmoid(lin(x))
    h += x
    (h * h).sum().backward()
    torch.save([x.grad, lin.weight.grad], sys.argv[1])
"""


def residual_reference() -> list[Tensor]:
    torch.manual_seed(0)
    lin = nn.Linear(4, 4).double()
    x = _x().requires_grad_()

    def loss(x: Tensor, weight: Tensor) -> Tensor:
        h = torch.sigmoid(nn.functional.linear(x, weight, lin.bias)) + x
        return (h * h).sum()

    grads = torch.autograd.grad(loss(x, lin.weight), (x, lin.weight))
    return list(grads)


SETITEM = """
    import sys
    import torch

    x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    y = torch.tanh(x)
    y[1] = 5.0
    (y * y).sum().backward()
    torch.save([x.grad], sys.argv[1])
"""


def setitem_reference() -> list[Tensor]:
    x = _x()
    grad = 2 * torch.tanh(x) * (1 - torch.tanh(x) ** 2)
    grad[1] = 0.0
    return [grad]


EVALUATION = """
    import sys
    import torch

    w = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    h = torch.exp(w)  # an evaluation that forgot torch.no_grad()
    h += 1.0
    torch.save([h.detach()], sys.argv[1])
"""


def evaluation_reference() -> list[Tensor]:
    return [_x().exp() + 1.0]


CLIP = """
    import sys
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    model.double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3)).pow(2).mean()
    for p in model.parameters():
        p.data.clamp_(-0.2, 0.2)
    loss.backward()
    opt.step()
    torch.save([p.detach() for p in model.parameters()], sys.argv[1])
"""


def clip_reference() -> list[Tensor]:
    """Backward on the weights the forward used, then clip, then the step."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
    params = [p.detach().clone().requires_grad_() for p in model.parameters()]
    batch = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3)
    h = torch.tanh(batch @ params[0].t() + params[1])
    loss = (h @ params[2].t() + params[3]).pow(2).mean()
    grads = torch.autograd.grad(loss, params)
    return [p.detach().clamp(-0.2, 0.2) - 0.1 * g for p, g in zip(params, grads, strict=True)]


PARAMETER = """
    import sys
    import torch

    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 3).double()
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    x = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3).requires_grad_()
    loss = lin(x).pow(2).sum()
    with torch.no_grad():
        lin.weight.mul_(0.5)
    loss.backward()
    opt.step()
    torch.save([lin.weight.detach(), x.grad], sys.argv[1])
"""


def parameter_reference() -> list[Tensor]:
    torch.manual_seed(0)
    lin = nn.Linear(3, 3).double()
    weight = lin.weight.detach().clone().requires_grad_()
    x = torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3).requires_grad_()
    loss = nn.functional.linear(x, weight, lin.bias.detach()).pow(2).sum()
    gw, gx = torch.autograd.grad(loss, (weight, x))
    return [weight.detach() * 0.5 - 0.1 * gw, gx]


GAN = """
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
    ones, zeros = torch.ones(4, 1, dtype=torch.float64), torch.zeros(4, 1, dtype=torch.float64)
    fake = G(noise)
    d_out = D(fake)
    d_loss = bce(d_out, zeros)
    g_loss = bce(d_out, ones)
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    torch.save([p.detach() for p in [*G.parameters(), *D.parameters()]], sys.argv[1])
"""


def gan_reference() -> list[Tensor]:
    """D steps on its loss; G steps on its loss through the stepped D (functional, by hand)."""
    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3)).double()
    D = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1), nn.Sigmoid()).double()
    g = [p.detach().clone().requires_grad_() for p in G.parameters()]
    d = [p.detach().clone().requires_grad_() for p in D.parameters()]
    noise = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(4, 2)

    def gen(g: list[Tensor]) -> Tensor:
        return torch.tanh(noise @ g[0].t() + g[1]) @ g[2].t() + g[3]

    def disc(d: list[Tensor], x: Tensor) -> Tensor:
        return torch.sigmoid(torch.tanh(x @ d[0].t() + d[1]) @ d[2].t() + d[3])

    def bce(p: Tensor, target: float) -> Tensor:
        return -(target * p.log() + (1 - target) * (1 - p).log()).mean()

    d_grads = torch.autograd.grad(bce(disc(d, gen(g).detach()), 0.0), d)
    stepped = [(p - 0.1 * gr).detach() for p, gr in zip(d, d_grads, strict=True)]
    g_grads = torch.autograd.grad(bce(disc(stepped, gen(g)), 1.0), g)
    new_g = [(p - 0.1 * gr).detach() for p, gr in zip(g, g_grads, strict=True)]
    return [*new_g, *stepped]


TWO_LOSSES = """
    import sys
    import torch

    torch.manual_seed(0)
    trunk = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh()).double()
    head1, head2 = torch.nn.Linear(4, 1).double(), torch.nn.Linear(4, 1).double()
    params = [*trunk.parameters(), *head1.parameters(), *head2.parameters()]
    opt = torch.optim.SGD(params, lr=0.1)
    features = trunk(torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3))
    loss1 = head1(features).pow(2).mean()
    loss2 = head1(features).abs().mean() + head2(features).mean()
    loss1.backward(retain_graph=True)
    opt.step()
    loss2.backward()
    torch.save([p.detach() for p in params], sys.argv[1])
"""


def two_losses_reference() -> list[Tensor]:
    """One step on the sum of the two losses."""
    torch.manual_seed(0)
    trunk = nn.Sequential(nn.Linear(3, 4), nn.Tanh()).double()
    head1, head2 = nn.Linear(4, 1).double(), nn.Linear(4, 1).double()
    params = [*trunk.parameters(), *head1.parameters(), *head2.parameters()]
    features = trunk(torch.linspace(-1, 1, 6, dtype=torch.float64).reshape(2, 3))
    loss = head1(features).pow(2).mean() + head1(features).abs().mean() + head2(features).mean()
    grads = torch.autograd.grad(loss, params)
    return [(p - 0.1 * g).detach() for p, g in zip(params, grads, strict=True)]


HOOKED = """
    import sys
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin1, self.lin2 = nn.Linear(4, 4), nn.Linear(4, 4)
            self.act = nn.Tanh()

        def forward(self, x):
            out = self.lin2(self.act(self.lin1(x)))
            out += x
            return out


    torch.manual_seed(0)
    block = Block().double()
    seen = []
    block.lin2.register_full_backward_hook(lambda m, gi, go: seen.append(go[0]))
    x = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(2, 4).requires_grad_()
    block(x).pow(2).sum().backward()
    assert seen, "the hook did not run"
    torch.save([x.grad, *[p.grad for p in block.parameters()]], sys.argv[1])
"""


def hooked_reference() -> list[Tensor]:
    torch.manual_seed(0)
    lin1, lin2 = nn.Linear(4, 4).double(), nn.Linear(4, 4).double()
    x = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(2, 4).requires_grad_()
    params = [x, *lin1.parameters(), *lin2.parameters()]
    loss = (lin2(torch.tanh(lin1(x))) + x).pow(2).sum()
    return list(torch.autograd.grad(loss, params))


HOOKED_RELU = """
    import sys
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.relu = nn.ReLU(inplace=True)

        def forward(self, x):
            return self.relu(self.lin(x))


    torch.manual_seed(0)
    block = Block().double()
    block.relu.register_full_backward_hook(lambda m, gi, go: None)
    x = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(2, 4).requires_grad_()
    block(x).pow(2).sum().backward()
    torch.save([x.grad, *[p.grad for p in block.parameters()]], sys.argv[1])
"""


def hooked_relu_reference() -> list[Tensor]:
    torch.manual_seed(0)
    lin = nn.Linear(4, 4).double()
    x = torch.linspace(-1, 1, 8, dtype=torch.float64).reshape(2, 4).requires_grad_()
    loss = torch.relu(lin(x)).pow(2).sum()
    return list(torch.autograd.grad(loss, [x, *lin.parameters()]))


UNMARKED = """
    import sys
    import torch

    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2); return x

        @staticmethod
        def backward(ctx, grad):
            return 2 * grad

    x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    h = torch.sin(x)
    USE
    torch.save([x.grad], sys.argv[1])
"""
#: The Function's output and its doubled input used again: needs ctx.mark_dirty.
UNMARKED_REUSED = UNMARKED.replace("USE", "y = Double.apply(h)\n    (y * y + h).sum().backward()")
#: The name rebound to the output: the doubled input is never used again.
UNMARKED_REBOUND = UNMARKED.replace("USE", "h = Double.apply(h)\n    (h * h + h).sum().backward()")


def doubled_sine_reference() -> list[Tensor]:
    """The gradient of ``4 sin(x)^2 + 2 sin(x)``, the program written out of place by hand."""
    x = _x()
    return [8 * x.sin() * x.cos() + 2 * x.cos()]


NO_GRAD_ONE_LINE = """
    import sys
    import torch

    x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    h = torch.sigmoid(x)
    with torch.no_grad(): h.mul_(2)
    (h * h).sum().backward()
    torch.save([x.grad], sys.argv[1])
"""

SEMICOLONS = """
    import sys
    import torch

    x = torch.linspace(-1, 1, 4, dtype=torch.float64).requires_grad_()
    h = torch.sigmoid(x); h.mul_(2)
    (h * h).sum().backward()
    torch.save([x.grad], sys.argv[1])
"""


def doubled_sigmoid_reference() -> list[Tensor]:
    """d/dx sum((2 s)^2) = 8 s s (1 - s), s = sigmoid(x)."""
    s = torch.sigmoid(_x())
    return [8 * s * s * (1 - s)]


CASES = [
    Case(
        "unmarked Function, input used again",
        UNMARKED_REUSED,
        doubled_sine_reference,
        r"x\.mul_\(2\); ctx\.mark_dirty\(x\); return x  # and return it; .*",
        "wrong gradients",
    ),
    Case(
        "unmarked Function, name rebound",
        UNMARKED_REBOUND,
        doubled_sine_reference,
        r"x = x\.mul\(2\); return x  # or keep the write: ctx\.mark_dirty\(\) .*",
        "wrong gradients if reused",
    ),
    Case("no_grad one line", NO_GRAD_ONE_LINE, doubled_sigmoid_reference, r"h = h\.mul\(2\)"),
    Case(
        "semicolons",
        SEMICOLONS,
        doubled_sigmoid_reference,
        r"h = torch\.sigmoid\(x\); h = h\.mul\(2\)",
    ),
    Case("placeholder", PLACEHOLDER, placeholder_reference, r"y = y\.add\(1\); z = y"),
    Case("residual", RESIDUAL, residual_reference, r"h = h \+ x"),
    Case("setitem", SETITEM, setitem_reference, r"y = inplace_recipes\.at\(y\)\[1\]\.set\(5\.0\)"),
    Case(
        "evaluation",
        EVALUATION,
        evaluation_reference,
        r"h = h \+ 1\.0  # or, in an evaluation, run it under torch\.no_grad\(\)",
        "fails if backpropagated",
    ),
    Case(
        "data clip",
        CLIP,
        clip_reference,
        r"with torch\.no_grad\(\): p\.clamp_\(-0\.2, 0\.2\)  # not \.data; move it below "
        r"train\.py:12, .*after opt\.step\(\)",
        "wrong gradients",
    ),
    Case(
        "parameter",
        PARAMETER,
        parameter_reference,
        r"keep this write under torch\.no_grad\(\), and move it below train\.py:12",
    ),
    Case(
        "gan step order",
        GAN,
        gan_reference,
        r"compute g_loss after this step, from a new forward \(not from the output made at "
        r"train\.py:15\), so that the backward at train\.py:22 uses the stepped weights; or, "
        r"if g_loss should train what this step updates \(one model, two losses\), run this "
        r"step after that backward",
    ),
    Case(
        "two losses, one step",
        TWO_LOSSES,
        two_losses_reference,
        r"compute loss2 after this step, .*; or, if loss2 should train what this step updates "
        r"\(one model, two losses\), run this step after that backward",
        alternative=True,
    ),
    Case(
        "hooked output",
        HOOKED,
        hooked_reference,
        r"out = out \+ x  # and every other in-place op on this module's input or output "
        r"\(or hook the enclosing module instead\)",
        "raises",
    ),
    Case(
        "hooked relu",
        HOOKED_RELU,
        hooked_relu_reference,
        r"build self\.relu as nn\.ReLU\(inplace=False\)  # and every other in-place op",
        "raises",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_printed_fix_applied_to_its_script_removes_the_finding_and_gives_the_reference(
    tmp_path: Path, case: Case
) -> None:
    script = textwrap.dedent(case.script)
    if "inplace_recipes" in case.fix:  # the fix uses the package: the script imports it
        script = script.replace("import torch\n", "import torch\nimport inplace_recipes\n", 1)
    (tmp_path / "train.py").write_text(script)
    data, done = audit_json(tmp_path)
    harmful = [r for r in data["findings"] if r["fix"]]
    assert [r["consequence"] for r in harmful] == [case.consequence], done.stderr
    (record,) = harmful
    assert re.fullmatch(case.fix, record["fix"]) or re.match(case.fix, record["fix"]), record
    fixed = apply(script.splitlines(), record, case.alternative)
    (tmp_path / "train.py").write_text("\n".join(fixed) + "\n")
    data, done = audit_json(tmp_path)
    assert data["error"] is None, done.stderr + "\n".join(fixed)
    assert [r for r in data["findings"] if r["fix"]] == [], "\n".join(fixed)
    got = torch.load(tmp_path / "out.pt")
    want = case.reference()
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


def test_the_gan_fix_from_the_first_advice_would_have_been_wrong() -> None:
    """Moving D's step below G's backward (the old advice) runs, but D's update is wrong."""
    lines = textwrap.dedent(GAN).splitlines()
    step = next(n for n, text in enumerate(lines) if text == "opt_d.step()")
    moved = lines[:step] + lines[step + 1 : step + 4] + [lines[step]] + lines[step + 4 :]
    scope: dict[str, Any] = {}
    code = "\n".join(moved).replace("torch.save(", "result = (").replace(", sys.argv[1])", ")")
    exec(code, scope)  # noqa: S102 - the script with the old advice applied
    got, want = scope["result"], gan_reference()
    assert not all(torch.allclose(a, b) for a, b in zip(got, want, strict=True))
