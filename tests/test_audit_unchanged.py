"""The audit never changes the program it watches.

Each program runs twice from the same seed, once plain and once under
``audit()``, and everything it leaves behind is compared: the values it
returns and the tensors in them (bitwise), their dtype, shape, strides,
``requires_grad``, ``is_leaf``, ``grad_fn``, version counter (``_version``)
and ``.grad``; the parameters, buffers and gradients of its modules and its
optimizers' state; the exception it raised (type and message); the warnings
it emitted; and torch's random state after it. The audit must also have
examined every call (``report.problems`` is empty).

The programs: every model of the tests (``tests/models_*.py``, the audit
tests' cases), pytorch/examples-style training scripts
(``tests/models_examples.py``), the initialisers of ``tests/models_initialisers.py``
and the gallery's scripts (``recipes/**/plot_*.py``, but the three that show
what ``torch.compile`` does: the audit runs compiled code as eager code, its
one stated change). The default run takes all the initialisers,
parametrizations and view writes (a few milliseconds each), every model, and
a sample of the scripts; ``HYPOTHESIS_PROFILE=thorough`` runs every script too.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import runpy
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import settings
from torch import Tensor, nn

import models_examples
import models_initialisers
import models_loops as loops
import models_nanogpt as gpt
import models_torchvision as tv
from inplace_recipes import audit

ROOT = Path(__file__).resolve().parents[1]
THOROUGH = settings.get_current_profile_name() == "thorough"

Program = Callable[[], Any]


# -- what a run leaves behind -----------------------------------------------------------


def _read(read: Callable[[], Any]) -> Any:
    """What a read gives, or the error it raises (a read torch refuses is an observation too)."""
    try:
        return read()
    except Exception as exc:  # noqa: BLE001 - the same refusal must happen in both runs
        return f"raises {type(exc).__name__}: {exc}"


def _bits(t: Tensor) -> Any:
    """``t``'s values as bytes, so that NaNs and signed zeros compare as they are."""
    if t.layout != torch.strided or t.is_quantized or t.device.type == "meta":
        return repr(t.layout)
    flat = t.detach().reshape(-1).contiguous()
    return flat.view(torch.uint8).tolist() if flat.numel() else []


def _tensor(t: Tensor) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns: the harness's read
        leaf = _read(lambda: t.is_leaf)
        return {
            "type": type(t).__name__,
            "dtype": t.dtype,
            "shape": tuple(t.shape),
            "stride": _read(t.stride),
            "requires_grad": t.requires_grad,
            "is_leaf": leaf,
            "grad_fn": _read(lambda: type(t.grad_fn).__name__),
            "version": _read(lambda: t._version),
            "values": _read(lambda: _bits(t)),
            "grad": _read(lambda: None if t.grad is None else _tensor(t.grad)),
        }


def describe(value: Any, numbers: bool = True, depth: int = 0) -> Any:
    """A comparable picture of ``value``: tensors, modules, optimizers and containers of them."""
    if depth > 6:
        return "..."
    if isinstance(value, Tensor):
        return _tensor(value)
    if isinstance(value, nn.Module):
        return {
            "module": type(value).__name__,
            "training": value.training,
            "parameters": {n: _tensor(p) for n, p in value.named_parameters()},
            "buffers": {n: _tensor(b) for n, b in value.named_buffers()},
        }
    if isinstance(value, torch.optim.Optimizer):
        return {
            "optimizer": type(value).__name__,
            "state": [describe(s, numbers, depth + 1) for s in value.state.values()],
        }
    if isinstance(value, dict):
        return {str(k): describe(v, numbers, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [describe(v, numbers, depth + 1) for v in value]
    if isinstance(value, (bool, int, float, complex, str, type(None))):
        return value if numbers else type(value).__name__
    return type(value).__name__


@dataclass
class Run:
    """What one run of a program left behind."""

    picture: Any
    error: str | None
    warnings: list[str]
    random_state: list[int]
    problems: dict[str, int]


@contextlib.contextmanager
def fresh_state() -> Iterator[None]:
    """Seeds and torch's global flags as every run starts, and restored after it."""
    random.seed(0)
    torch.manual_seed(0)
    dtype, grad = torch.get_default_dtype(), torch.is_grad_enabled()
    try:
        yield
    finally:
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)


def run(program: Program, audited: bool, numbers: bool = True) -> Run:
    result: Any = None
    error: str | None = None
    problems: dict[str, int] = {}
    with fresh_state(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if audited:
                with audit() as report:
                    result = program()
            else:
                result = program()
        except Exception as exc:  # noqa: BLE001 - compared between the two runs
            error = f"{type(exc).__name__}: {exc}"
        if audited:
            problems = getattr(report, "problems", {})  # an audit without it: none counted
        random_state = torch.random.get_rng_state().tolist()
        picture = describe(result, numbers)
    seen = [f"{w.category.__name__}: {w.message}" for w in caught]
    return Run(picture, error, seen, random_state, problems)


def difference(a: Any, b: Any, where: str = "") -> str | None:
    """Where two pictures first differ, or ``None``."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return f"{where}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            found = difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            found = difference(x, y, f"{where}[{n}]")
            if found:
                return found
        return None
    if a != b:
        return f"{where}: {str(a)[:200]} != {str(b)[:200]}"
    return None


def changes(program: Program, numbers: bool = True) -> str | None:
    """What the audit changed in ``program``'s run, or ``None``.

    Torch warns some things once per process (``TORCH_WARN_ONCE``), so a first
    run can warn where a second does not: when only the warnings differ, both
    runs are made once more and compared again.
    """
    for attempt in range(2):
        plain, audited = run(program, False, numbers), run(program, True, numbers)
        if audited.problems:
            return f"the audit could not examine: {audited.problems}"
        if plain.error != audited.error:
            return f"error: {plain.error!r} != {audited.error!r}"
        found = difference(plain.picture, audited.picture)
        if found:
            return found
        if plain.random_state != audited.random_state:
            return "torch's random state differs"
        if plain.warnings == audited.warnings:
            return None
        if attempt:
            return f"warnings: {plain.warnings} != {audited.warnings}"
    return None


def failures(programs: dict[str, Program]) -> list[str]:
    found = []
    for name, program in programs.items():
        change = changes(program)
        if change:
            found.append(f"{name}: {change}")
    return found


# -- initialisers, parametrizations, view writes -----------------------------------------


def test_every_init_function_is_in_the_set() -> None:
    public = {
        name
        for name in dir(nn.init)
        if not name.startswith("_") and name.endswith("_") and callable(getattr(nn.init, name))
    }
    assert public <= set(models_initialisers.INIT_NAMES)
    assert "orthogonal_" in public
    assert len(models_initialisers.INITIALISERS) >= 6 * len(public)


@pytest.mark.parametrize("family", ["INITIALISERS", "PARAMETRIZATIONS", "RECURRENT", "VIEW_WRITES"])
def test_initialisers_and_view_writes_run_as_without_the_audit(family: str) -> None:
    programs = getattr(models_initialisers, family)
    found = failures(programs)
    assert not found, f"{len(found)} of {len(programs)} changed:\n" + "\n".join(found[:20])


def test_the_issue_s_program_runs_under_the_audit() -> None:
    """``nn.init.orthogonal_`` writes through a ``no_grad`` view: torch 2.13 refuses to read its grad_fn."""
    w = nn.Parameter(torch.empty(36))

    def init(w: Tensor) -> None:
        with torch.no_grad():
            w.view(-1).copy_(torch.ones(36))

    report = audit(init, w)
    assert report.error is None, report.error
    assert report.problems == {}
    assert torch.equal(w, torch.ones(36))
    with torch.no_grad():
        view = w.view(-1)
        view.copy_(torch.zeros(36))
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode"):
        _ = view.is_leaf  # the read the audit must not make


# -- every model of the tests, and pytorch/examples-style scripts ---------------------------


def _step(make: Callable[[], tuple[nn.Module, Tensor]]) -> Program:
    def program() -> Any:
        model, x = make()
        loss = model(x).sum()
        loss.backward()
        return {"model": model, "x": x, "loss": loss}

    return program


def _resnet(bug: bool = False) -> tuple[nn.Module, Tensor]:
    return tv.ResNet18(bug=bug), torch.randn(2, 3, 32, 32)


def _densenet(efficient: bool, reentrant: bool = False, bug: bool = False) -> Any:
    return tv.DenseBlock(4, efficient, reentrant, bug), torch.randn(2, 3, 8, 8, requires_grad=True)


def _gpt(bug: str = "") -> tuple[nn.Module, Tensor]:
    return gpt.GPT(bug=bug), torch.randint(0, 32, (2, 8))


def _loop(step: Callable[..., Any], *models: Callable[[], Any], data: int = 0) -> Program:
    def program() -> Any:
        made = [make() for make in models]
        inputs = [torch.randn(4, 3, 16, 16), torch.randn(4, loops.nz, 1, 1)][:data]
        step(*made, *inputs)
        return made

    return program


def _two_heads() -> Any:
    model = loops.TwoHeads()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    data = (torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randn(8))
    loops.two_heads(model, opt, *data)
    return model, opt


def _gan(step: Callable[..., Any], real: bool) -> Program:
    def program() -> Any:
        netG, netD = loops.Generator(), loops.Discriminator()
        optG = torch.optim.Adam(netG.parameters(), lr=0.01, betas=(0.5, 0.999))
        optD = torch.optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
        real_batch, noise = torch.randn(4, 3, 16, 16), torch.randn(4, loops.nz, 1, 1)
        if step is loops.wgan_clip_after_forward:
            step(netD, optD, real_batch)
        elif real:
            step(netG, netD, optG, optD, real_batch, noise)
        else:
            step(netG, netD, optG, optD, noise)
        return netG, netD, optG, optD

    return program


def _test_module_cases() -> dict[str, Program]:
    """The cases of the audit's own tests: each in-place version and its reference, with backward."""
    import test_audit
    import test_audit_functions as functions

    programs: dict[str, Program] = {}
    for case in test_audit.CASES:
        for kind, fn in (("in place", case.inplace), ("reference", case.reference)):

            def program(fn: Callable[..., Tensor] = fn) -> Any:
                x, w = test_audit.inputs()
                loss = fn(x, w)
                loss.backward()
                return x, w, loss

            programs[f"test_audit {case.name}, {kind}"] = program
    for name in ("DoubleMarked", "DoubleUnmarked", "DoubleMarkedInSetupContext"):
        function = getattr(functions, name)

        def apply(function: Any = function) -> Any:
            x = torch.linspace(-1, 1, 4, requires_grad=True)
            h = x.sin()
            y = function.apply(h)
            (y * y + h).sum().backward()
            return x, h, y

        programs[f"test_audit_functions {name}"] = apply
    return programs


def _fix_scripts() -> dict[str, Program]:
    """The training scripts of ``tests/test_audit_fix_applied.py``, each with its planted bug."""
    import test_audit_fix_applied as applied

    programs: dict[str, Program] = {}
    for case in applied.CASES:

        def program(source: str = textwrap.dedent(case.script)) -> Any:
            scope: dict[str, Any] = {"__name__": "__main__"}
            argv = sys.argv
            sys.argv = ["train.py", os.devnull]
            try:
                exec(compile(source, "<train.py>", "exec"), scope)  # noqa: S102 - the test's script
            finally:
                sys.argv = argv
            return {k: v for k, v in scope.items() if isinstance(v, (Tensor, nn.Module))}

        programs[f"test_audit_fix_applied {case.name}"] = program
    return programs


MODELS: dict[str, Program] = {
    "resnet18": _step(_resnet),
    "resnet18, bug": _step(lambda: _resnet(bug=True)),
    "densenet": _step(lambda: _densenet(False)),
    "densenet, checkpointed": _step(lambda: _densenet(True)),
    "densenet, reentrant checkpoint": _step(lambda: _densenet(True, True)),
    "densenet, bug": _step(lambda: _densenet(False, bug=True)),
    "densenet, checkpointed bug": _step(lambda: _densenet(True, bug=True)),
    "densenet, reentrant checkpointed bug": _step(lambda: _densenet(True, True, bug=True)),
    "nanogpt": _step(_gpt),
    "nanogpt, residual bug": _step(lambda: _gpt("residual")),
    "nanogpt, softmax bug": _step(lambda: _gpt("softmax")),
    "two heads, retain_graph": _two_heads,
    "dcgan, retain_graph": _gan(loops.dcgan, real=True),
    "gan, step before G's backward": _gan(loops.gan_step_before_g_backward, real=False),
    "wgan, clip after forward": _gan(loops.wgan_clip_after_forward, real=True),
    **{f"pytorch/examples {name}": program for name, program in models_examples.EXAMPLES.items()},
    **_test_module_cases(),
    **_fix_scripts(),
}


@pytest.mark.parametrize("name", MODELS)
def test_models_run_as_without_the_audit(name: str) -> None:
    change = changes(MODELS[name])
    assert change is None, change


# -- the gallery's scripts --------------------------------------------------------------------

SCRIPTS = sorted(ROOT.glob("recipes/**/plot_*.py"))
#: The scripts of the default run: quick, and each of a different kind.
SAMPLE = {
    "plot_clone.py",
    "plot_batch.py",
    "plot_custom_function.py",
    "plot_gan_training.py",
    "plot_residual_block.py",
}


#: Scripts that show what torch.compile does (plot_audit_model.py: that compiled code runs as
#: eager code under an audit): under an audit of their own, compiled code runs as eager code
#: (the audit's one stated exception, in inplace_recipes.auditing), so they differ.
COMPILING = {"plot_torch_compile.py", "plot_edited_input.py", "plot_audit_model.py"}
#: What a script measures on the clock is not the program's to repeat: left out of its picture.
TIMED = {"plot_performance.py": {"live"}}


def _script(path: Path) -> Program:
    def program() -> Any:
        from inplace_recipes import claims

        here, registered = os.getcwd(), dict(claims._CLAIMS)
        out = io.StringIO()
        os.chdir(path.parent)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                scope = runpy.run_path(str(path), run_name="__main__")
        finally:
            os.chdir(here)
            claims._CLAIMS.clear()  # a page registers its claims once per build: run it again
            claims._CLAIMS.update(registered)
            import matplotlib.pyplot as plt

            plt.close("all")
        timed = TIMED.get(path.name, set())
        return {k: v for k, v in scope.items() if not k.startswith("__") and k not in timed}

    return program


@pytest.mark.parametrize(
    "path",
    [p for p in SCRIPTS if (THOROUGH or p.name in SAMPLE) and p.name not in COMPILING],
    ids=lambda p: p.name,
)
def test_gallery_scripts_run_as_without_the_audit(path: Path) -> None:
    change = changes(_script(path), numbers=False)  # scripts keep timings in plain numbers
    assert change is None, change


def test_the_sample_is_a_sample_of_the_scripts() -> None:
    assert {p.name for p in SCRIPTS} >= SAMPLE | COMPILING | set(TIMED)
    assert not SAMPLE & COMPILING
    assert len(SCRIPTS) >= 20
