"""audit() on real architectures and training loops: no false alarms, every injected bug at its line.

The models are copied in tests/models_*.py (upstream files named there). For
each: backward runs, the gradients match a known-good version (the same code
under ``torch.func.functionalize``, or an out-of-place copy of the loop), the
audit raises no alarm, and each injected bug is reported at its line.
"""

from __future__ import annotations

import copy
import inspect
import os
import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
import torch
from torch import Tensor, nn

import models_loops as loops
import models_nanogpt as gpt
import models_torchvision as tv
from inplace_recipes import audit
from inplace_recipes.auditing import AuditReport
from inplace_recipes.auditing._report import TIMES


def line_of(module: ModuleType | None, marker: str) -> int:
    """The line of ``module`` (this file if ``None``) marked ``# W:<marker>``."""
    source = inspect.getsource(module) if module else Path(__file__).read_text()
    pattern = re.compile(rf"# W:{re.escape(marker)}(\s|$)")
    (line,) = [n for n, text in enumerate(source.splitlines(), 1) if pattern.search(text)]
    return line


def harmful(report: AuditReport) -> list[tuple[str, int, str]]:
    return [
        (os.path.basename(r["file"]), r["line"], r["consequence"])
        for r in report.to_records()
        if r["fix"] is not None
    ]


def grads_of(model: nn.Module, loss: Callable[[nn.Module], Tensor]) -> list[Tensor]:
    model.zero_grad(set_to_none=True)
    loss(model).backward()
    return [p.grad.clone() for p in model.parameters() if p.grad is not None]


def functionalized(model: nn.Module, x: Tensor) -> Tensor:
    return torch.func.functionalize(model)(x)  # type: ignore[no-any-return]


def same(a: list[Tensor], b: list[Tensor]) -> bool:
    return len(a) == len(b) and all(
        torch.allclose(x, y, atol=1e-6) for x, y in zip(a, b, strict=True)
    )


# -- architectures ---------------------------------------------------------------------


def resnet(bug: bool = False) -> tuple[nn.Module, Tensor]:
    torch.manual_seed(0)
    return tv.ResNet18(bug=bug), torch.randn(2, 3, 32, 32)


def densenet(
    memory_efficient: bool, reentrant: bool = False, bug: bool = False
) -> tuple[nn.Module, Tensor]:
    torch.manual_seed(0)
    return tv.DenseBlock(4, memory_efficient, reentrant, bug), torch.randn(
        2, 3, 8, 8, requires_grad=True
    )


def nanogpt(bug: str = "") -> tuple[nn.Module, Tensor]:
    torch.manual_seed(0)
    return gpt.GPT(bug=bug), torch.randint(0, 32, (2, 8))


ARCHITECTURES = {
    "resnet18": resnet,
    "densenet": lambda: densenet(False),
    "densenet-memory-efficient": lambda: densenet(True),
    "densenet-memory-efficient-reentrant": lambda: densenet(True, True),
    "nanogpt": nanogpt,
}


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_real_architectures_give_right_gradients_and_no_alarm(name: str) -> None:
    model, x = ARCHITECTURES[name]()
    known_good = copy.deepcopy(model)
    want = grads_of(known_good, lambda m: functionalized(m, x).sum())
    report = audit(grads_of, model, lambda m: m(x).sum())
    assert report.error is None
    assert same(report.result, want)
    assert report.ok, str(report)
    assert harmful(report) == []


def test_resnet18_report_fits_one_screen_with_the_safe_writes_summed_up() -> None:
    model, x = resnet()
    report = audit(lambda: model(x).sum().backward())
    text = str(report)
    print(text)
    lines = text.splitlines()
    assert len(lines) <= 10
    assert max(map(len, lines)) <= 100
    assert "fix:" not in text
    # 17 ReLU(inplace=True) writes (stem, then two per block) and 8 `out += identity`.
    assert re.search(r"^25 in-place writes are safe \(", text, re.MULTILINE), text
    flat = " ".join(text.split())
    assert f"ReLU(inplace=True) after NativeBatchNorm {TIMES}9" in flat
    assert f"ReLU(inplace=True) after Add {TIMES}8" in flat
    assert f"x += ... after NativeBatchNorm {TIMES}8" in flat
    # one row per source line, with its count
    records = report.to_records()
    keys = [(r["file"], r["line"], r["op"], r["consequence"]) for r in records]
    assert len(keys) == len(set(keys))
    counts = {r["line"]: r["count"] for r in records if r["file"].endswith("models_torchvision.py")}
    assert counts[line_of(tv, "resnet_add")] == 8
    assert counts[line_of(tv, "resnet_relu")] == 8
    assert all(not os.path.isabs(r["file"]) for r in records)


@pytest.mark.parametrize("reentrant", [False, True])
def test_checkpointing_reports_each_write_once(reentrant: bool) -> None:
    """The non-reentrant forward is recorded as it runs, not again when it is recomputed; the
    reentrant one runs under no_grad, and its recomputation in the backward is what is recorded."""
    model, x = densenet(True, reentrant)
    report = audit(lambda: model(x).sum().backward())
    assert report.error is None
    assert report.ok, str(report)
    counts = {r["line"]: r["count"] for r in report.to_records()}
    assert counts[line_of(tv, "dense_relu2")] == 4  # once per layer, not again in backward
    assert counts[line_of(tv, "dense_relu1")] == 4


BUGS = {
    "resnet": (lambda: resnet(bug=True), tv, "resnet_bug"),
    "densenet": (lambda: densenet(False, bug=True), tv, "dense_bug"),
    "densenet-memory-efficient": (lambda: densenet(True, bug=True), tv, "dense_bug"),
    "gpt-residual": (lambda: nanogpt("residual"), gpt, "gpt_residual_bug"),
    "gpt-softmax": (lambda: nanogpt("softmax"), gpt, "gpt_softmax_bug"),
}


@pytest.mark.parametrize("name", BUGS)
def test_an_injected_bug_is_caught_at_its_line(name: str) -> None:
    make, module, marker = BUGS[name]
    model, x = make()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model(x).sum().backward()
    model, x = make()
    report = audit(lambda: model(x).sum().backward())
    assert isinstance(report.error, RuntimeError)
    file = os.path.basename(module.__file__ or "")
    lines = [line_of(module, marker)]
    if name == "resnet":  # the ReLU after it writes the same tensor again: conv1's saved input
        lines.append(line_of(module, "resnet_relu_after_add"))
    assert harmful(report) == [(file, line, "backward fails") for line in lines]
    row = next(r for r in report.to_records() if r["fix"])
    assert row["count"] == 1
    assert "saved by" in row["detail"]


# -- training loops with retain_graph=True ---------------------------------------------------


def params(*models: nn.Module) -> list[Tensor]:
    return [p.detach().clone() for m in models for p in m.parameters()]


def two_heads_setup() -> tuple[loops.TwoHeads, torch.optim.Optimizer, tuple[Tensor, ...]]:
    torch.manual_seed(0)
    model = loops.TwoHeads()
    data = (torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randn(8))
    return model, torch.optim.AdamW(model.parameters(), lr=0.1), data


def test_two_heads_with_retain_graph_give_no_false_alarm() -> None:
    model, opt, data = two_heads_setup()
    good, good_opt, _ = two_heads_setup()
    # known good: one backward of the sum, no retained graph
    good_opt.zero_grad()
    features = good.trunk(data[0])
    loss = nn.functional.cross_entropy(good.head1(features), data[1]) + nn.functional.mse_loss(
        good.head2(features).squeeze(1), data[2]
    )
    loss.backward()
    good_opt.step()

    report = audit(loops.two_heads, model, opt, *data)
    assert report.error is None
    assert same(params(model), params(good))
    assert report.ok, str(report)
    assert harmful(report) == []
    step = [r for r in report.to_records() if r["line"] == line_of(loops, "two_heads_step")]
    assert {r["consequence"] for r in step} == {"fails if backward again"}
    assert "harmless unless you backward through them again" in " ".join(str(report).split())


def dcgan_setup() -> tuple[
    loops.Generator,
    loops.Discriminator,
    torch.optim.Optimizer,
    torch.optim.Optimizer,
    Tensor,
    Tensor,
]:
    torch.manual_seed(0)
    netG, netD = loops.Generator(), loops.Discriminator()
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.01, betas=(0.5, 0.999))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
    return (
        netG,
        netD,
        optimizerG,
        optimizerD,
        torch.randn(4, 3, 16, 16),
        torch.randn(4, loops.nz, 1, 1),
    )


def dcgan_known_good(netG, netD, optimizerG, optimizerD, real, noise) -> None:  # type: ignore[no-untyped-def]
    """The same step out of place: fresh labels, a detached fake for D, no retained graph."""
    criterion = nn.BCELoss()
    netD.zero_grad()
    criterion(netD(real).view(-1), torch.full((4,), 1.0)).backward()
    fake = netG(noise)
    criterion(netD(fake.detach()).view(-1), torch.full((4,), 0.0)).backward()
    optimizerD.step()
    netG.zero_grad()
    criterion(netD(fake).view(-1), torch.full((4,), 1.0)).backward()
    optimizerG.step()


def test_dcgan_with_retain_graph_gives_no_false_alarm() -> None:
    good = dcgan_setup()
    dcgan_known_good(*good)
    run = dcgan_setup()
    report = audit(loops.dcgan, *run)
    assert report.error is None
    assert same(params(run[0], run[1]), params(good[0], good[1]))
    assert report.ok, str(report)
    retained = {
        r["line"] for r in report.to_records() if r["consequence"] == "fails if backward again"
    }
    assert {line_of(loops, "dcgan_fill"), line_of(loops, "dcgan_d_step")} <= retained


def test_an_optimizer_step_between_two_backwards_of_one_graph_is_blamed_on_the_step() -> None:
    netG, netD, optimizerG, optimizerD, _, noise = dcgan_setup()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loops.gan_step_before_g_backward(netG, netD, optimizerG, optimizerD, noise)
    netG, netD, optimizerG, optimizerD, _, noise = dcgan_setup()
    report = audit(loops.gan_step_before_g_backward, netG, netD, optimizerG, optimizerD, noise)
    assert harmful(report) == [
        ("models_loops.py", line_of(loops, "gan_d_step_bug"), "backward fails")
    ]
    (row,) = [r for r in report.to_records() if r["fix"]]
    assert row["code"] == "optimizerD.step()  # W:gan_d_step_bug"
    assert row["inside"].startswith("torch/optim/")
    g_backward = line_of(loops, "gan_d_step_bug") + 2
    forward = line_of(loops, "gan_d_step_bug") - 5  # output = netD(netG(noise)).view(-1)
    assert row["fix"] == (
        "compute errG after this step, from a new forward (not from the output made at "
        f"tests/models_loops.py:{forward}), so that the backward at "
        f"tests/models_loops.py:{g_backward} uses the stepped weights; or, if errG should "
        "train what this step updates (one model, two losses), run this step after that backward"
    )


def test_a_data_clip_between_forward_and_backward_says_no_grad_and_where_to_move_it() -> None:
    _, netD, _, optimizerD, real, _ = dcgan_setup()
    report = audit(loops.wgan_clip_after_forward, netD, optimizerD, real)
    assert report.error is None
    assert harmful(report) == [
        ("models_loops.py", line_of(loops, "wgan_clip_bug"), "wrong gradients")
    ]
    (row,) = [r for r in report.to_records() if r["fix"]]
    backward_line = line_of(loops, "wgan_clip_bug") + 1
    assert "torch.no_grad()" in row["fix"]
    assert f"below tests/models_loops.py:{backward_line}," in row["fix"]
    # every weight but BatchNorm's bias, which batch norm's backward does not save
    assert row["count"] == len(list(netD.parameters())) - 1


def test_a_write_inside_torch_is_blamed_on_the_calling_line_with_advice_for_it() -> None:
    torch.manual_seed(0)
    embedding = nn.Embedding(10, 3, max_norm=1.0)
    W = torch.randn(5, 3, requires_grad=True)
    idx = torch.tensor([1, 2])

    def step() -> None:
        a = embedding.weight @ W.t()  # W:embedding_saved
        b = embedding(idx) @ W.t()  # W:embedding_call
        (a.sum() + b.sum()).backward()

    report = audit(step)
    assert isinstance(report.error, RuntimeError)
    assert harmful(report) == [
        ("test_audit_models.py", line_of(None, "embedding_call"), "backward fails")
    ]
    (row,) = [r for r in report.to_records() if r["fix"]]
    assert row["inside"] == "torch/nn/functional.py"
    assert "weight.clone()" in row["fix"]
    assert f"test_audit_models.py:{line_of(None, 'embedding_saved')}" in row["fix"]
