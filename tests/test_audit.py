"""audit() finds every hidden in-place write, at the right line, classified as backward behaves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from torch import Tensor, nn

from inplace_recipes import RECIPES, AuditReport, audit, explain

SOURCE = Path(__file__).read_text().splitlines()


def line_of(marker: str) -> int:
    """The line of this file marked ``# W:<marker>`` (at the end, or before a remark)."""
    pattern = re.compile(rf"# W:{re.escape(marker)}(\s|$)")
    (line,) = [n for n, text in enumerate(SOURCE, 1) if pattern.search(text)]
    return line


def inputs() -> tuple[Tensor, Tensor]:
    gen = torch.Generator().manual_seed(0)
    return (
        torch.randn(4, 5, generator=gen, requires_grad=True),
        torch.randn(5, 5, generator=gen, requires_grad=True),
    )


# -- models: each an in-place version and its out-of-place reference ----------------


def sigmoid_then_relu_(x: Tensor, w: Tensor) -> Tensor:
    h = torch.sigmoid(x @ w)
    h = nn.functional.relu(h, inplace=True)  # W:relu
    return h.sum()


def sigmoid_then_relu(x: Tensor, w: Tensor) -> Tensor:
    return torch.relu(torch.sigmoid(x @ w)).sum()


class Residual(nn.Module):
    def __init__(self, saved: bool) -> None:
        super().__init__()
        self.lin = nn.Linear(5, 5)
        self.saved = saved

    def forward(self, x: Tensor) -> Tensor:
        h = self.lin(x)
        if self.saved:
            h = torch.tanh(h)  # tanh saves its output
        h += x  # W:residual
        return h.pow(2).sum()


def residual_reference(model: Residual, x: Tensor) -> Tensor:
    h = model.lin(x)
    if model.saved:
        h = torch.tanh(h)
    return (h + x).pow(2).sum()


def data_edit_saved_(x: Tensor, w: Tensor) -> Tensor:
    h = torch.sigmoid(x @ w)  # saves its output
    h.data.mul_(0.5)  # W:data_saved
    return h.sum()


def data_edit_saved(x: Tensor, w: Tensor) -> Tensor:
    return (torch.sigmoid(x @ w) * 0.5).sum()


def data_edit_plain_(x: Tensor, w: Tensor) -> Tensor:
    h = x @ w
    h.data.mul_(3.0)  # W:data_plain
    return h.pow(2).sum()


def data_edit_plain(x: Tensor, w: Tensor) -> Tensor:
    return ((x @ w) * 3.0).pow(2).sum()


def setitem_leaf_(x: Tensor, w: Tensor) -> Tensor:
    x[0] = 0.0  # W:setitem_leaf
    return (x @ w).sum()


def setitem_leaf(x: Tensor, w: Tensor) -> Tensor:
    return (RECIPES["select_scatter"](x, 0, 0.0) @ w).sum()


def setitem_nonleaf_(x: Tensor, w: Tensor) -> Tensor:
    h = x @ w
    h[:, 1] = 0.0  # W:setitem_nonleaf
    return h.pow(2).sum()


def setitem_nonleaf(x: Tensor, w: Tensor) -> Tensor:
    return RECIPES["select_scatter"](x @ w, (slice(None), 1), 0.0).pow(2).sum()


def out_into_saved_(x: Tensor, w: Tensor) -> Tensor:
    buf = torch.ones(5)
    h = w * buf  # mul saves buf, which does not require grad
    torch.add(torch.ones(5), 1.0, out=buf)  # W:out_saved
    return (x @ h).sum()


def out_into_saved(x: Tensor, w: Tensor) -> Tensor:
    return (x @ (w * torch.ones(5))).sum()


def out_with_grad_(x: Tensor, w: Tensor) -> Tensor:
    buf = torch.empty(4, 5)
    torch.matmul(x, w, out=buf)  # W:out_grad
    return buf.sum()


def out_with_grad(x: Tensor, w: Tensor) -> Tensor:
    return torch.matmul(x, w).sum()


def index_add_nonleaf_(x: Tensor, w: Tensor) -> Tensor:
    h = x @ w
    h.index_add_(0, torch.tensor([0, 2]), torch.ones(2, 5))  # W:index_add_safe
    return h.pow(2).sum()


def index_add_nonleaf(x: Tensor, w: Tensor) -> Tensor:
    return (x @ w).index_add(0, torch.tensor([0, 2]), torch.ones(2, 5)).pow(2).sum()


def index_add_saved_(x: Tensor, w: Tensor) -> Tensor:
    h = torch.exp(x @ w)
    h.index_add_(0, torch.tensor([1]), torch.ones(1, 5))  # W:index_add_saved
    return h.sum()


def index_add_saved(x: Tensor, w: Tensor) -> Tensor:
    return torch.exp(x @ w).index_add(0, torch.tensor([1]), torch.ones(1, 5)).sum()


def no_grad_step_before_backward_(x: Tensor, w: Tensor) -> Tensor:
    loss = (x @ w).sum()  # mm saves x to compute w's gradient
    with torch.no_grad():
        x.mul_(0.5)  # W:no_grad_saved
    return loss


def no_grad_step_before_backward(x: Tensor, w: Tensor) -> Tensor:
    return (x @ w).sum()


@dataclass
class Case:
    name: str
    inplace: Callable[..., Tensor]
    reference: Callable[..., Tensor]
    expected: list[tuple[str, str, str]]  # (marker, kind, consequence)


def residual(saved: bool) -> tuple[Callable[..., Tensor], Callable[..., Tensor]]:
    torch.manual_seed(0)
    model = Residual(saved)

    return (lambda x, w: model(x)), (lambda x, w: residual_reference(model, x))


CASES = [
    Case(
        "relu_inplace",
        sigmoid_then_relu_,
        sigmoid_then_relu,
        [("relu", "saved for backward", "backward fails")],
    ),
    Case("residual_saved", *residual(True), [("residual", "saved for backward", "backward fails")]),
    Case("residual_safe", *residual(False), [("residual", "non-leaf", "safe")]),
    Case(
        "data_saved",
        data_edit_saved_,
        data_edit_saved,
        [("data_saved", ".data alias of a saved tensor", "wrong gradients")],
    ),
    Case(
        "data_plain",
        data_edit_plain_,
        data_edit_plain,
        [("data_plain", ".data alias of a non-leaf", "wrong gradients")],
    ),
    Case(
        "setitem_leaf", setitem_leaf_, setitem_leaf, [("setitem_leaf", "view of a leaf", "raises")]
    ),
    Case(
        "setitem_nonleaf",
        setitem_nonleaf_,
        setitem_nonleaf,
        [("setitem_nonleaf", "non-leaf view (CopySlices)", "safe")],
    ),
    Case(
        "out_saved",
        out_into_saved_,
        out_into_saved,
        [("out_saved", "saved for backward", "backward fails")],
    ),
    Case("out_grad", out_with_grad_, out_with_grad, [("out_grad", "out= with grad", "raises")]),
    Case(
        "index_add_safe",
        index_add_nonleaf_,
        index_add_nonleaf,
        [("index_add_safe", "non-leaf", "safe")],
    ),
    Case(
        "index_add_saved",
        index_add_saved_,
        index_add_saved,
        [("index_add_saved", "saved for backward", "backward fails")],
    ),
    Case(
        "no_grad_saved",
        no_grad_step_before_backward_,
        no_grad_step_before_backward,
        [("no_grad_saved", "saved for backward", "backward fails")],
    ),
]


def grads(fn: Callable[..., Tensor]) -> list[Tensor]:
    x, w = inputs()
    fn(x, w).backward()
    return [t.grad for t in (x, w) if t.grad is not None]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_audit_finds_the_write_at_its_line(case: Case) -> None:
    report = audit(lambda x, w: case.inplace(x, w).backward(), *inputs())
    found = sorted((f.line, f.kind, f.consequence) for f in report)
    assert found == sorted((line_of(m), k, c) for m, k, c in case.expected)
    for finding in report:
        assert finding.file == os.path.relpath(__file__)
        assert finding.code.endswith(f"# W:{case.expected[0][0]}")
        assert (finding.fix is None) == (finding.consequence == "safe")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_without_a_backward_a_broken_graph_would_fail_if_backpropagated(case: Case) -> None:
    """No backward ran: the write that breaks one is "fails if backpropagated", not "backward fails"."""
    report = audit(case.inplace, *inputs())
    renamed = {
        "backward fails": "fails if backpropagated",
        "wrong gradients": "wrong gradients if backpropagated",
    }
    expected = [(line_of(m), k, renamed.get(c, c)) for m, k, c in case.expected]
    found = [(f.line, f.kind, f.consequence) for f in report]
    assert sorted(found) == sorted(expected)
    assert all(f.consequence not in ("backward fails", "wrong gradients") for f in report)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_classification_matches_what_backward_does(case: Case) -> None:
    consequences = {c for _, _, c in case.expected}
    if "raises" in consequences:
        with pytest.raises(RuntimeError) as info:
            case.inplace(*inputs())
        assert explain(info.value).recognized
    elif "backward fails" in consequences:
        x, w = inputs()
        loss = case.inplace(x, w)
        with pytest.raises(RuntimeError) as info:
            loss.backward()
        assert explain(info.value).slug == "saved-tensor-modified"
    else:
        got, want = grads(case.inplace), grads(case.reference)
        same = all(torch.allclose(g, r) for g, r in zip(got, want, strict=True))
        assert same == (consequences == {"safe"})


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_backward_inside_the_audit_behaves_as_without(case: Case) -> None:
    def step(x: Tensor, w: Tensor) -> list[Tensor]:
        case.inplace(x, w).backward()
        return [t.grad for t in (x, w) if t.grad is not None]

    report = audit(step, *inputs())
    fails = {c for _, _, c in case.expected} & {"raises", "backward fails"}
    assert (report.error is not None) == bool(fails)
    if not fails:
        want = grads(case.inplace)
        assert all(torch.allclose(g, r) for g, r in zip(report.result, want, strict=True))


def test_out_of_place_code_reports_nothing() -> None:
    def model(x: Tensor, w: Tensor) -> Tensor:
        losses = [case.reference(x, w) for case in CASES]
        net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.LayerNorm(8), nn.Dropout(0.1))
        loss = sum(losses) + net(x).sum()
        loss.backward()
        torch.optim.SGD([w, *net.parameters()], lr=0.1).step()  # no_grad on leaves: fine
        return loss

    report = audit(model, *inputs())
    assert report.error is None
    assert report.findings == []
    assert str(report) == "No in-place writes on tensors of an autograd graph."


def test_a_model_with_every_kind_misses_none() -> None:
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin1, self.lin2 = nn.Linear(5, 5), nn.Linear(5, 5)
            self.act = nn.ReLU(inplace=True)

        def forward(self, x: Tensor) -> Tensor:
            h = torch.sigmoid(self.lin1(x))
            h = self.act(h)  # W:net_relu
            r = torch.tanh(self.lin2(h))
            r += h  # W:net_residual
            r.data.clamp_(max=0.5)  # W:net_data
            r[:, 0] = 0.0  # W:net_setitem
            return r.sum()

    with audit() as report:
        Net()(torch.randn(3, 5))
    # no backward ran: each write that breaks one "fails if backpropagated"
    assert [(f.line, f.consequence) for f in report] == [
        (line_of("net_relu"), "fails if backpropagated"),
        (line_of("net_residual"), "fails if backpropagated"),
        (line_of("net_data"), "wrong gradients if backpropagated"),
        (line_of("net_setitem"), "fails if backpropagated"),  # r is still tanh's saved output
    ]
    worst = [f.consequence for f in report.worst_first()]
    assert worst == [*["fails if backpropagated"] * 3, "wrong gradients if backpropagated"]
    assert not report.ok
    text = str(report).splitlines()
    assert text[0].split() == ["#", "consequence", "where", "op", "count", "tensor"]
    assert "wrong gradients if backpropagated" in str(report)
    assert "ReLU(inplace=True)" in str(report)


def test_records_are_plain_data() -> None:
    report = audit(lambda x, w: data_edit_saved_(x, w).backward(), *inputs())
    (record,) = report.to_records()
    assert record["consequence"] == "wrong gradients"
    assert record["line"] == line_of("data_saved")
    assert record["tensor"] == "float32[4, 5]"
    assert record["op"] == "mul_"
    assert record["count"] == 1
    assert all(isinstance(v, (str, int, list, dict, type(None))) for v in record.values())
    assert isinstance(report, AuditReport)
    assert "wrong gradients=1" in repr(report)


def test_the_block_form_lets_errors_through_and_keeps_the_report() -> None:
    x, w = inputs()
    with pytest.raises(RuntimeError, match="view of a leaf"), audit() as report:
        setitem_leaf_(x, w)
    assert [f.slug for f in report] == ["view-of-leaf"]


def test_no_mode_stays_installed() -> None:
    with audit():
        pass
    assert torch._C._len_torch_function_stack() == 0
    assert torch._C._len_torch_dispatch_stack() == 0


def test_importing_the_package_does_not_import_the_audit() -> None:
    code = "import sys, inplace_recipes; print('inplace_recipes.auditing' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_write_into_a_saved_tensor_is_reported_not_only_the_first() -> None:
    """A second write into tanh's output breaks backward on its own (issue 10, item 2)."""

    def both(x: Tensor, w: Tensor) -> Tensor:
        r = torch.tanh(x @ w)
        r += 1.0  # W:first_write
        r[:, 0] = 0.0  # W:second_write
        return r.sum()

    def second_alone(x: Tensor, w: Tensor) -> Tensor:
        r = torch.tanh(x @ w)
        r[:, 0] = 0.0  # W:second_alone
        return r.sum()

    with pytest.raises(RuntimeError, match="output 0 of Tanh, is at version 1"):
        second_alone(*inputs()).backward()
    report = audit(lambda x, w: both(x, w).backward(), *inputs())
    assert [(f.line, f.consequence) for f in report] == [
        (line_of("first_write"), "backward fails"),
        (line_of("second_write"), "backward fails"),
    ]
    assert all("TanhBackward0" in f.detail for f in report)


def test_a_write_is_judged_by_the_backwards_that_ran_after_it() -> None:
    x = torch.randn(3, requires_grad=True)

    def forward_only() -> None:
        h = torch.exp(x)
        h.add_(1)  # W:judged_forward_only

    def retained_then_written() -> None:
        h = torch.exp(x)
        h.sum().backward(retain_graph=True)
        h.add_(1)  # W:judged_retained

    def retained_written_and_used() -> None:
        h = torch.exp(x)
        loss = h.sum()
        loss.backward(retain_graph=True)
        h.add_(1)  # W:judged_used
        loss.backward()

    def failed_backward_stops_early() -> None:
        a = torch.exp(x)
        a.add_(1)  # W:judged_unreached (the backward below fails before ExpBackward0)
        b = torch.tanh(a)
        b.mul_(2)  # W:judged_first_failure
        b.sum().backward()

    cases = [
        (forward_only, [("judged_forward_only", "fails if backpropagated")]),
        (retained_then_written, [("judged_retained", "fails if backward again")]),
        (retained_written_and_used, [("judged_used", "backward fails")]),
        (
            failed_backward_stops_early,
            [("judged_unreached", "backward fails"), ("judged_first_failure", "backward fails")],
        ),
    ]
    for fn, expected in cases:
        report = audit(fn)
        got = [(f.line, f.consequence) for f in report]
        assert got == [(line_of(m), c) for m, c in expected], (fn.__name__, str(report))
    assert audit(retained_then_written).ok


def test_the_audit_modules_import_one_way() -> None:
    """Records, advice, recorder and report: no module imports one that imports it back."""
    import ast

    folder = Path(__file__).parents[1] / "src" / "inplace_recipes" / "auditing"
    imports: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                names |= {node.module} if node.module else {a.name for a in node.names}
        imports[path.stem] = {n.split(".")[0] for n in names} - {path.stem}
    imports["__init__"] = imports.get("__init__", set())

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for name in imports.get(start, set()):
            if name == goal or (name not in seen and reaches(name, goal, seen | {name})):
                return True
        return False

    circles = [m for m in imports if m != "__init__" and reaches(m, m, {m})]
    assert circles == [], {m: imports[m] for m in circles}
    assert "_recorder" not in imports["_advice"]
    assert imports["_records"] == set()


def test_the_consequence_table_is_the_one_list_tools_read() -> None:
    from inplace_recipes.auditing import CONSEQUENCE_TABLE, CONSEQUENCES, FAIL_ON

    assert tuple(c.name for c in CONSEQUENCE_TABLE) == CONSEQUENCES
    assert FAIL_ON["backward-fails"] == ("backward fails", "raises")
    assert FAIL_ON["unused-graph"] == (
        "fails if backpropagated",
        "wrong gradients if backpropagated",
        "fails if backward again",
    )
    assert set(FAIL_ON["any"]) == {c.name for c in CONSEQUENCE_TABLE if c.harmful}
    row = next(c for c in CONSEQUENCE_TABLE if c.name == "fails if backpropagated")
    assert row.text().startswith("fails if backpropagated: the write changed a tensor")
    assert row.text().endswith("(needs a fix; --fail-on unused-graph, any)")


def _matmul(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w


def test_code_compiled_under_the_audit_does_not_outlive_it() -> None:
    """Compiled code traced under the audit calls back into it: the audit resets the
    compiler's caches when it ends, so the next call is compiled code again."""
    import warnings

    torch._dynamo.reset()
    x, w = torch.randn(4, 3, requires_grad=True) * 1, torch.randn(3, 2, requires_grad=True)

    def step() -> None:
        torch.compile(_matmul, backend="aot_eager")(x, w).sum().backward()

    with warnings.catch_warnings():
        # Dynamo probes .grad of the non-leaf x it is handed
        warnings.filterwarnings("ignore", "The .grad attribute of a Tensor that is not a leaf")
        audit(step)
        after = torch.compile(_matmul, backend="aot_eager")(x, w)
    assert after.grad_fn.name() == "CompiledFunctionBackward"  # MmBackward0 before the fix
    torch._dynamo.reset()


def test_an_audit_of_eager_code_keeps_the_compiled_caches() -> None:
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    compiled = torch.compile(_matmul, backend="aot_eager")
    x, w = torch.randn(4, 3), torch.randn(3, 2)
    compiled(x, w)
    frames = counters["stats"]["unique_graphs"]
    audit(lambda: (torch.ones(2, requires_grad=True) * 2).sum().backward())
    compiled(x, w)
    assert counters["stats"]["unique_graphs"] == frames  # not compiled again
    torch._dynamo.reset()


def _resize() -> None:
    x = torch.ones(3, requires_grad=True) * 1
    x.resize_(5)


def _detach_a_view() -> None:
    x = torch.ones(3, requires_grad=True) * 1
    x[1:].detach_()


def _write_a_captured_tensor() -> None:
    buf = torch.zeros(3)

    def f(w: torch.Tensor) -> torch.Tensor:
        buf.copy_(w)
        return (w * 2).sum()

    torch.func.grad(f)(torch.ones(3))


@pytest.mark.parametrize(
    ("program", "kind", "code"),
    [
        (_resize, "tensor that requires grad, resized", "x.resize_(5)"),
        (_detach_a_view, "view detached in place", "x[1:].detach_()"),
        (_write_a_captured_tensor, "tensor captured by a torch.func transform", "buf.copy_(w)"),
    ],
)
def test_the_error_reference_s_newer_errors_are_recorded_at_the_write(
    program: Callable[[], None], kind: str, code: str
) -> None:
    """resize_, detach_() on a view and a write into a captured tensor raise at the write:
    the audit records the row there (each has its section in the error reference)."""
    report = audit(program)
    assert isinstance(report.error, RuntimeError)
    assert [(r["consequence"], r["kind"], r["code"]) for r in report.to_records()] == [
        ("raises", kind, code)
    ]
