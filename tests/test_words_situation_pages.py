"""The general words of the situation pages, the ``at[]`` page and the matrix page,
each checked over the whole set it names.

``recipes/situations/*.py``, ``recipes/tools/plot_at.py`` and
``recipes/tools/plot_compatibility_matrix.py`` say "every", "only", "none" and
"all" about torch and about the package; ``docs/general_words/situation-pages.json``
names, for each sentence, the test here (or elsewhere) that enumerates the set
it speaks of. Where a page's own code is what a sentence describes (the DDP
worker, the residual block, the GAN step), the test runs that code, taken from
the page's source, not a copy of it.
"""

from __future__ import annotations

import ast
import contextlib
import itertools
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

import inplace_recipes as ir
from docs_modules import import_docs_module
from inplace_recipes import at

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def page_definitions(page: str, *names: str) -> dict[str, Any]:
    """The named top-level functions, classes and assignments of ``recipes/<page>``,
    run with the page's imports and nothing else of the page (its cells do not run).

    Compiled under the page's own file name and line numbers, so that what reads
    source lines (the audit) sees the page's lines.
    """
    path = ROOT / "recipes" / page
    tree = ast.parse(path.read_text())
    keep: list[ast.stmt] = []
    for node in tree.body:
        named = isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in names
        if isinstance(node, ast.Import | ast.ImportFrom) or named:
            keep.append(node)
        elif isinstance(node, ast.Assign):
            targets = {n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            if targets & set(names):
                keep.append(node)
    namespace: dict[str, Any] = {"__name__": f"page_{path.stem}"}
    sys.path.insert(0, str(DOCS))  # the pages import the site's tooling (committed, peers)
    try:
        exec(compile(ast.Module(keep, type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
    finally:
        sys.path.remove(str(DOCS))
    missing = [n for n in names if n not in namespace]
    assert not missing, f"{page} defines no {missing}"
    return namespace


# -- plot_custom_function -------------------------------------------------------------


def _marks_and_returns(returned: Callable[[torch.Tensor, torch.Tensor], Any]) -> Any:
    class DoubleInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: torch.Tensor, other: torch.Tensor) -> Any:
            x.mul_(2)
            ctx.mark_dirty(x)
            return returned(x, other)

        @staticmethod
        def backward(ctx: Any, *grads: torch.Tensor) -> Any:
            return 2 * grads[-1], None

    return DoubleInPlace


#: What a Function that marked its input dirty may return: the input itself (alone
#: or among other outputs) works; anything else, even a view of the input, is refused.
RETURNED = {
    "the input": (lambda x, o: x, True),
    "the input, among other outputs": (lambda x, o: (o * 1, x), True),
    "a clone of the input": (lambda x, o: x.clone(), False),
    "a view of the input": (lambda x, o: x.view_as(x), False),
    "a slice of the input": (lambda x, o: x[:], False),
    "x.detach()": (lambda x, o: x.detach(), False),
    "another tensor": (lambda x, o: o * 1, False),
}


@pytest.mark.parametrize("name", list(RETURNED))
def test_mark_dirty_works_only_on_a_returned_input(name: str) -> None:
    returned, works = RETURNED[name]
    fn = _marks_and_returns(returned)
    h = torch.ones(3, requires_grad=True) * 1
    if not works:
        with pytest.raises(
            RuntimeError, match="marked as dirty during the forward method were not"
        ):
            fn.apply(h, torch.ones(3))
        return
    out = fn.apply(h, torch.ones(3))
    outputs = out if isinstance(out, tuple) else (out,)
    assert any(o is h for o in outputs), "the returned tensor is not the input"
    assert type(h.grad_fn).__name__ == "DoubleInPlaceBackward", "the input kept its old history"


class _DoubleAndTriple(torch.autograd.Function):
    """Writes both inputs in place (``a *= 2``, ``b *= 3``), marks those named, returns both."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor, marked: tuple[bool, bool]) -> Any:
        a.mul_(2)
        b.mul_(3)
        ctx.mark_dirty(*(t for t, m in zip((a, b), marked, strict=True) if m))
        return a, b

    @staticmethod
    def backward(ctx: Any, ga: torch.Tensor, gb: torch.Tensor) -> Any:
        return 2 * ga, 3 * gb, None


@pytest.mark.parametrize("marked", list(itertools.product([True, False], repeat=2)))
def test_marking_every_written_input_gives_the_by_hand_gradients(
    marked: tuple[bool, bool],
) -> None:
    """Each subset of the written inputs marked: only all of them gives ``h = 2h``'s gradients."""
    p = torch.tensor([1.0, -2.0], requires_grad=True)
    q = torch.tensor([3.0, 0.5], requires_grad=True)
    h1, h2 = p * 1, q * 1
    y1, y2 = _DoubleAndTriple.apply(h1, h2, marked)
    (y1 * y1 + y2 * y2 + h1 * 3 + h2 * 5).sum().backward()
    # by hand: h1 = 2p, h2 = 3q, so 4p^2 + 9q^2 + 6p + 15q
    right = torch.equal(p.grad, 8 * p.detach() + 6) and torch.equal(q.grad, 18 * q.detach() + 15)
    assert right == all(marked), (marked, p.grad, q.grad)


def test_marking_does_not_rescue_an_input_an_earlier_op_saved() -> None:
    h = torch.ones(3, requires_grad=True).exp()
    y1, _ = _DoubleAndTriple.apply(h, torch.ones(3) * 1, (True, True))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        (y1 + h).sum().backward()


# -- plot_ddp_batchnorm -------------------------------------------------------------


@pytest.fixture(scope="module")
def two_ranks() -> list[dict[str, Any]]:
    """The page's worker on the page's two local ``gloo`` processes: each rank's result."""
    if not torch.distributed.is_available() or not torch.distributed.is_gloo_available():
        pytest.skip("this torch has no gloo backend")
    page = page_definitions(
        "situations/plot_ddp_batchnorm.py", "WORKER", "free_port", "run_two_ranks"
    )
    ranks: list[dict[str, Any]] = page["run_two_ranks"]()
    return ranks


@pytest.mark.slow
def test_the_buffer_broadcast_writes_in_place_on_every_rank(
    two_ranks: list[dict[str, Any]],
) -> None:
    """Every rank of the group, rank 0 (the source) included: ``copy_`` into both statistics."""
    assert len(two_ranks) == 2
    for rank, result in enumerate(two_ranks):
        writes = result["writes"]
        assert "copy_ into running_mean" in writes["True"], (rank, writes)
        assert "copy_ into running_var" in writes["True"], (rank, writes)
        assert not any(w.startswith("copy_") for w in writes["False"]), (rank, writes)


@pytest.mark.slow
def test_the_audit_sees_no_write_inside_ddp(two_ranks: list[dict[str, Any]]) -> None:
    for rank, result in enumerate(two_ranks):
        assert result["audit"]["records"] == [], (rank, result["audit"]["records"])
        assert result["audit"]["error"] == "None", (rank, result["audit"]["error"])
    # and BatchNorm's own update of its running statistics moves no version counter
    bn = nn.BatchNorm1d(3)
    versions = bn.running_mean._version, bn.running_var._version
    bn(torch.randn(4, 3))
    assert (bn.running_mean._version, bn.running_var._version) == versions
    assert not torch.equal(bn.running_mean, torch.zeros(3))


def _listening(port: int) -> list[str]:
    """The local addresses (hex, as /proc/net writes them) listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.rpartition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                found.append(address)
    return found


@pytest.mark.skipif(not Path("/proc/net/tcp6").exists(), reason="reads Linux's socket tables")
def test_the_rendezvous_store_listens_on_every_interface() -> None:
    """The page's processes meet at ``tcp://127.0.0.1:PORT``; rank 0's ``TCPStore``
    still listens on that port on the any-address, every interface."""
    import datetime

    import torch.distributed as dist

    page = page_definitions("situations/plot_ddp_batchnorm.py", "free_port")
    port = page["free_port"]()
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=0,
        world_size=1,
        timeout=datetime.timedelta(seconds=60),
    )
    try:
        addresses = _listening(port)
    finally:
        dist.destroy_process_group()
    assert addresses, "nothing listens on the store's port"
    assert all(set(a) == {"0"} for a in addresses), addresses  # 0.0.0.0 or ::


# -- plot_edited_input ---------------------------------------------------------------


def test_compare_gradients_checks_every_recipe_for_the_masked_feature() -> None:
    image = torch.rand(4, 3, requires_grad=True)
    report = ir.compare_gradients(image, (slice(None), 0), 0.0)
    assert list(report.results) == list(ir.RECIPES)
    for result in report:
        assert result.not_applicable is None, result
        assert result.ok, result


# -- plot_gan_training --------------------------------------------------------------

CALLS = ("g backward", "d backward", "d step", "g step")
#: Orders of the four calls in which each network's backward precedes its own step.
ORDERS = [
    order
    for order in itertools.permutations(CALLS)
    if order.index("g backward") < order.index("g step")
    and order.index("d backward") < order.index("d step")
]


@pytest.mark.parametrize("order", ORDERS, ids=" | ".join)
def test_every_backward_before_any_step_trains_against_the_old_d(order: tuple[str, ...]) -> None:
    page = page_definitions(
        "situations/plot_gan_training.py",
        "make_gan",
        "bce",
        "real",
        "noise",
        "ones",
        "zeros",
        "optimizers",
    )
    make_gan, bce, optimizers = page["make_gan"], page["bce"], page["optimizers"]
    real, noise, ones, zeros = page["real"], page["noise"], page["ones"], page["zeros"]
    G_old, D_old = make_gan()
    through_old_d = torch.autograd.grad(bce(D_old(G_old(noise)), ones), list(G_old.parameters()))

    G, D = make_gan()
    opt_g, opt_d = optimizers(G, D)
    fake = G(noise)
    loss_g = bce(D(fake), ones)
    loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
    opt_g.zero_grad()
    opt_d.zero_grad()
    g_grads: list[torch.Tensor] = []

    def g_backward() -> None:
        loss_g.backward(inputs=list(G.parameters()))
        g_grads.extend(p.grad.clone() for p in G.parameters())

    calls = {
        "g backward": g_backward,
        "d backward": loss_d.backward,
        "d step": opt_d.step,
        "g step": opt_g.step,
    }
    backwards_first = max(order.index("g backward"), order.index("d backward")) < min(
        order.index("d step"), order.index("g step")
    )
    d_steps_before_g_backward = order.index("d step") < order.index("g backward")
    *before, last = order[: order.index("g backward") + 1]
    for name in before:
        calls[name]()
    if d_steps_before_g_backward:  # the failing step: D's weights changed under loss_g
        with pytest.raises(RuntimeError, match="is at version 2; expected version 1"):
            calls[last]()
        return
    for name in order[len(before) :]:
        calls[name]()
    if backwards_first:
        assert all(torch.allclose(g, w) for g, w in zip(g_grads, through_old_d, strict=True)), order


# -- plot_residual_block ------------------------------------------------------------


def _residual_page() -> dict[str, Any]:
    return page_definitions(
        "situations/plot_residual_block.py",
        "Block",
        "OutOfPlaceBlock",
        "ReluThenAdd",
        "gradients",
        "same",
    )


def _saved_tensors_changed(model: nn.Module, x: torch.Tensor) -> list[tuple[int, ...]]:
    """Shapes of the tensors autograd saved during ``model(x)`` that a later write changed."""
    packed: list[tuple[torch.Tensor, int]] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        packed.append((t, t._version))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(x)
    return [tuple(t.shape) for t, version in packed if t._version != version]


def test_every_write_in_torchvisions_order_leaves_what_backward_saved() -> None:
    page = _residual_page()
    torch.manual_seed(0)
    x = torch.randn(2, 4, 5, 5, requires_grad=True)
    assert _saved_tensors_changed(page["Block"](), x) == []
    assert _saved_tensors_changed(page["ReluThenAdd"](), x), "the check sees no write at all"


def _written_after_use(model: nn.Module, x: torch.Tensor) -> set[str]:
    """Modules whose input or output is written in place after the module received or
    returned it (by the module itself, as an in-place ReLU writes its input, or later)."""
    seen: list[tuple[str, torch.Tensor, int]] = []
    written: set[str] = set()

    def before(name: str) -> Callable[..., None]:
        def hook(module: nn.Module, args: tuple[Any, ...]) -> None:
            seen.extend((name, a, a._version) for a in args if isinstance(a, torch.Tensor))

        return hook

    def after(name: str) -> Callable[..., None]:
        def hook(module: nn.Module, args: tuple[Any, ...], out: Any) -> None:
            outs = out if isinstance(out, tuple) else (out,)
            seen.extend((name, t, t._version) for t in outs if isinstance(t, torch.Tensor))

        return hook

    handles = []
    for name, module in model.named_modules():
        handles.append(module.register_forward_pre_hook(before(name or "block")))
        handles.append(module.register_forward_hook(after(name or "block")))
    try:
        model(x)
    finally:
        for handle in handles:
            handle.remove()
    for name, tensor, version in seen:
        if tensor._version != version:
            written.add(name)
    return written


def _hook_fails(page: dict[str, Any], inplace: bool, name: str, x: torch.Tensor) -> bool:
    model = page["Block"](inplace)
    module = model if name == "block" else model.get_submodule(name)
    module.register_full_backward_hook(lambda module, grad_in, grad_out: None)
    try:
        page["gradients"](model, x)
    except RuntimeError as exc:
        error = str(exc)
    else:
        return False
    assert "BackwardHookFunction" in error, error
    return True


@pytest.mark.parametrize("inplace", [True, False], ids=["ReLU(inplace=True)", "inplace=False"])
def test_a_full_backward_hook_fails_only_where_its_modules_tensors_are_written(
    inplace: bool,
) -> None:
    """Every module of the block, and the block: the hook fails exactly where a write follows."""
    page = _residual_page()
    torch.manual_seed(0)
    x = torch.randn(2, 4, 5, 5)
    written = _written_after_use(page["Block"](inplace), x.clone().requires_grad_())
    names = [name or "block" for name, _ in page["Block"](inplace).named_modules()]
    fails = {name for name in names if _hook_fails(page, inplace, name, x)}
    assert fails == written, (fails, written)
    assert fails, "no module of the block is written: the check checks nothing"


def test_the_out_of_place_block_takes_a_hook_on_every_module() -> None:
    page = _residual_page()
    torch.manual_seed(0)
    x = torch.randn(2, 4, 5, 5)
    block = page["Block"]()
    want = page["gradients"](block, x)
    for name, _ in page["OutOfPlaceBlock"]().named_modules():
        fixed = page["OutOfPlaceBlock"]()
        fixed.load_state_dict(block.state_dict())
        calls: list[str] = []
        module = fixed.get_submodule(name)
        module.register_forward_hook(lambda m, args, out, calls=calls: calls.append("forward"))
        module.register_full_backward_hook(lambda m, gi, go, calls=calls: calls.append("hook"))
        assert page["same"](page["gradients"](fixed, x), want), name or "block"
        if calls:  # the module runs (the out-of-place block calls torch.relu, not self.relu)
            assert "hook" in calls, f"the hook on {name or 'the block'} never fired"


# -- plot_torch_compile -------------------------------------------------------------

#: Every way of writing in place that the compile page's sentence covers: setitem with
#: each kind of index, augmented assignment, in-place methods and ``out=``.
WRITES: dict[str, Callable[[torch.Tensor], object]] = {
    "y[0] = v": lambda y: y.__setitem__(0, 0.0),
    "y[1:] = v": lambda y: y.__setitem__(slice(1, None), 0.0),
    "y[::2] = tensor": lambda y: y.__setitem__(slice(None, None, 2), torch.ones(2)),
    "y[mask] = v": lambda y: y.__setitem__(torch.tensor([True, False, True, False]), 0.0),
    "y[index tensor] = tensor": lambda y: y.__setitem__(torch.tensor([0, 2]), torch.ones(2)),
    "y[list] = v": lambda y: y.__setitem__([1, 3], 0.0),
    "y[...] = v": lambda y: y.__setitem__(Ellipsis, 1.0),
    "y[1:] *= 2": lambda y: y[1:].mul_(2),
    "add_": lambda y: y.add_(1),
    "mul_": lambda y: y.mul_(2),
    "clamp_": lambda y: y.clamp_(0, 1),
    "relu_": lambda y: y.relu_(),
    "copy_": lambda y: y.copy_(torch.ones(4)),
    "fill_": lambda y: y.fill_(1.0),
    "zero_": lambda y: y.zero_(),
    "index_put_": lambda y: y.index_put_((torch.tensor([1]),), torch.ones(1)),
    "masked_fill_": lambda y: y.masked_fill_(torch.tensor([True, False, False, True]), 0.0),
    "scatter_": lambda y: y.scatter_(0, torch.tensor([2]), torch.ones(1)),
    "index_add_": lambda y: y.index_add_(0, torch.tensor([0]), torch.ones(1)),
    "out=": lambda y: torch.mul(torch.ones(4), 3.0, out=y),
}


def _graph_ops(fn: Callable[..., Any], x: torch.Tensor, **aot: Any) -> list[Any]:
    """The aten ops of the graphs AOTAutograd hands its compilers (forward, then backward)."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    graphs: list[Any] = []

    def record(graph_module: Any, example_inputs: Any) -> Any:
        graphs.append(graph_module)
        return make_boxed_func(graph_module.forward)

    torch._dynamo.reset()
    try:
        backend = aot_autograd(fw_compiler=record, bw_compiler=record, **aot)
        out = torch.compile(fn, backend=backend, fullgraph=True)(x)
        if out.requires_grad:
            out.sum().backward()
    finally:
        torch._dynamo.reset()
    return [n for g in graphs for n in g.graph.nodes if n.op == "call_function"]


def _mutable(node: Any) -> bool:
    schema = getattr(node.target, "_schema", None)
    return schema is not None and schema.is_mutable


@pytest.mark.slow
@pytest.mark.parametrize("name", list(WRITES))
def test_functionalization_leaves_no_in_place_op(name: str) -> None:
    """A tensor the function made: no in-place op in the forward or backward graph. An
    input of the function: one ``copy_`` into it, last, where the backend keeps input
    mutations in the graph (inductor's choice, for a graph without backward); none otherwise."""
    write = WRITES[name]

    def on_a_new_tensor(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        write(y)
        return y.exp()

    def on_the_input(x: torch.Tensor) -> torch.Tensor:
        write(x)
        return x * 2

    grad = name != "out="  # out= into a tensor that requires grad: refused, eager code too
    if not grad:
        with pytest.raises(RuntimeError, match=r"out=\.\.\. arguments don't support automatic"):
            on_a_new_tensor(torch.rand(4, requires_grad=True))
    ops = _graph_ops(on_a_new_tensor, torch.rand(4, requires_grad=grad))
    assert ops, "nothing was recorded"
    assert not [str(n.target) for n in ops if _mutable(n)], name
    kept = _graph_ops(on_the_input, torch.rand(4), keep_inference_input_mutations=True)
    mutating = [n for n in kept if _mutable(n)]
    assert [str(n.target) for n in mutating] == ["aten.copy_.default"], name
    assert mutating[0] is kept[-1], "the copy into the input is not the graph's last op"
    assert mutating[0].args[0].op == "placeholder", "the copy_ writes something else"
    x = torch.rand(4)
    eager = x.clone()
    on_the_input(eager)
    assert not [n for n in _graph_ops(on_the_input, x) if _mutable(n)], name
    assert torch.equal(x, eager), "the input was not written as eager code writes it"


@pytest.mark.slow
def test_the_audit_of_the_compiled_in_place_write_finds_both_lines_none_harmful() -> None:
    import warnings

    page = page_definitions("situations/plot_torch_compile.py", "write_in_place")
    x = torch.tensor([0.0, 1.0, 2.0], requires_grad=True)
    torch._dynamo.reset()
    compiled = torch.compile(page["write_in_place"], backend="aot_eager")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The .grad attribute of a Tensor that is not a leaf")
            report = ir.audit(lambda: compiled(x).sum().backward())
    finally:
        torch._dynamo.reset()
    assert report.error is None, repr(report.error)
    records = report.to_records()
    assert {r["code"] for r in records} == {"y[0] = 0.0", "y[1:] *= 2"}, records
    assert all(r["consequence"] == "safe" for r in records), records


def _slower_than_compiled_inplace(committed: dict[str, Any]) -> set[str]:
    """The page's reading of the committed run: recipes slower than compiled in-place at
    1e6 elements for some write, beyond the noise band (neither faster nor tied)."""
    from inplace_recipes import bench
    from inplace_recipes.bench._statistics import measured_writes, tie

    band = bench.noise_band(committed, mode="compile", sizes=[10**6])
    beyond = set()
    for write in measured_writes(committed):
        for name in ir.RECIPES:
            record = bench.find_record(committed, name, write, 10**6, mode="compile")
            if record and record.get("ratio_forward_backward"):
                faster = record["ratio_forward_backward"] <= 1
                tied = tie(committed, name, "inplace", write, 10**6, band, mode="compile")
                if not (faster or tied):
                    beyond.add(name)
    return beyond


def test_not_every_recipe_is_as_fast_as_compiled_inplace() -> None:
    import copy

    committed = import_docs_module("committed").bench_results()
    assert _slower_than_compiled_inplace(committed), "every recipe ties: the sentence is false"
    as_fast = copy.deepcopy(committed)
    for record in as_fast["records"]:
        if record.get("mode") == "compile" and record.get("ratio_forward_backward"):
            record["ratio_forward_backward"] = 1.0
    assert not _slower_than_compiled_inplace(as_fast), "the reading cannot see a tie"


# -- plot_at -------------------------------------------------------------------------


def _cell(page: str, heading: str) -> str:
    """The source of the gallery cell under ``heading``, up to the next ``# %%``."""
    source = (ROOT / "recipes" / page).read_text()
    start = source.index(f"# {heading}\n")
    end = source.find("# %%", start)
    return source[start : end if end != -1 else None]


def _public_methods() -> set[str]:
    return {
        name
        for name, member in vars(at).items()
        if not name.startswith("_") and callable(member) and not isinstance(member, property)
    }


def test_every_method_of_at_is_on_the_page() -> None:
    shown = set(re.findall(r"at\(x\)\[index\]\.(\w+)\(", _cell("tools/plot_at.py", "Every method")))
    assert shown == _public_methods()


#: Every kind of index setitem takes, one of each, into a (2, 3, 4) tensor.
INDEX_KINDS: dict[str, Any] = {
    "int": 1,
    "negative int": -1,
    "slice": slice(0, 2),
    "slice with a step": (slice(None), slice(None, None, 2)),
    "ellipsis": (Ellipsis, 1),
    "None": (None, 0),
    "mask": torch.arange(24).view(2, 3, 4) % 5 == 0,
    "mask of some dims": torch.tensor([True, False]),
    "index tensor": torch.tensor([1, 0]),
    "list": [0, 1],
    "NumPy array": np.array([1, 0]),
    "Python bool": True,
    "int, slice and tensor": (0, slice(None), torch.tensor([3, 1])),
    "tensors apart": (torch.tensor([0, 1]), slice(None), torch.tensor([2, 3])),
}


def _value_for(x: torch.Tensor, index: Any) -> torch.Tensor:
    return torch.linspace(1.0, 2.0, max(x[index].numel(), 1)).reshape(x[index].shape)


@pytest.mark.parametrize("kind", list(INDEX_KINDS))
def test_at_and_every_recipe_but_clone_read_the_index_through_index_plan(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inplace_recipes._indexing import IndexPlan
    from inplace_recipes._pick import best_recipe, quick_recipe
    from inplace_recipes.recipes import RECORDS

    index = INDEX_KINDS[kind]
    x = torch.arange(24.0).view(2, 3, 4)
    value = _value_for(x, index)
    planned: list[Any] = []
    original = IndexPlan.of.__func__  # type: ignore[attr-defined]

    def spy(cls: type, tensor: torch.Tensor, idx: Any, *args: Any, **kwargs: Any) -> Any:
        planned.append(idx)
        return original(cls, tensor, idx, *args, **kwargs)

    monkeypatch.setattr(IndexPlan, "of", classmethod(spy))
    calls: dict[str, Callable[[], object]] = {
        **{
            f"at[].{m}": (lambda m=m: getattr(at(x)[index], m)(value))
            for m in _public_methods() - {"apply", "get"}
        },
        "at[].apply": lambda: at(x)[index].apply(torch.neg),
        "at[].get": lambda: at(x)[index].get(),
        **{f"RECIPES[{n!r}]": (lambda f=f: f(x, index, value)) for n, f in ir.RECIPES.items()},
    }
    unplanned = {f"RECIPES[{n!r}]" for n, record in RECORDS.items() if not record.planned}
    assert unplanned == {"RECIPES['clone']"}, "the page names clone as the one exception"
    for name, call in calls.items():
        planned.clear()
        with contextlib.suppress(ir.UnsupportedValueError, ir.UnsupportedIndexError):
            call()  # a recipe that refuses the index or value plans it first
        if name == "at[].set" and not planned:  # set picked clone: torch's setitem reads it
            assert (quick_recipe(index, value) or best_recipe(x, index, value)) == "clone", kind
            continue
        if name in unplanned:  # torch's own setitem reads the index
            assert not planned, f"{name} plans the index: the page must not call it an exception"
            continue
        assert planned, f"{name} read the {kind} index without the index model"
        assert planned[0] is index, f"{name} planned another index than the one it was given"


@pytest.mark.parametrize("kind", list(INDEX_KINDS))
def test_apply_is_setitem_of_fn_for_every_kind_of_index(kind: str) -> None:
    index = INDEX_KINDS[kind]
    x = torch.arange(24.0).view(2, 3, 4) - 10
    before = x.clone()
    for fn in (torch.sum, lambda t: t.flip(0) if t.ndim else t, torch.relu_):
        want = x.clone()
        want[index] = fn(x[index].clone())
        assert torch.equal(at(x)[index].apply(fn), want), (kind, fn)
        assert torch.equal(x, before), f"apply({fn}) changed x"


def test_torch_adds_one_value_at_a_repeated_position() -> None:
    """``y[i] += v``: each repeated position gets its start plus one of its values."""
    for positions in ([1, 1, 1], [0, 2, 0, 2], [3, 3], [2, 0, 2, 1, 2]):
        i = torch.tensor(positions)
        v = torch.tensor([10.0**k for k in range(len(positions))])
        y = torch.zeros(4)
        y[i] += v
        for p in set(positions):
            mine = v[i == p]
            assert any(y[p] == value for value in mine), (positions, y)
            assert len(mine) == 1 or y[p] != mine.sum(), positions


NUMPY_AT = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "power": np.power,
    "min": np.minimum,
    "max": np.maximum,
}


@pytest.mark.parametrize("method", list(NUMPY_AT))
def test_repeated_positions_apply_every_value_as_numpy_ufunc_at(method: str) -> None:
    """Each method but ``set`` and ``apply``, over repeats, zeros, negative bases and ties."""
    assert set(NUMPY_AT) == _public_methods() - {"set", "apply", "get"}
    gen = torch.Generator().manual_seed(0)
    starts = [
        torch.tensor([2.0, 3.0, 5.0], dtype=torch.float64),
        torch.tensor([1.0, -2.0, 0.0], dtype=torch.float64),
        torch.rand(3, generator=gen, dtype=torch.float64) * 4 - 2,
    ]
    cases = [
        (torch.tensor([1, 2, 1, 1]), torch.tensor([1.5, 0.5, 2.0, 4.0], dtype=torch.float64)),
        (torch.tensor([1, 1]), torch.tensor([0.0, 2.0], dtype=torch.float64)),
        (torch.tensor([1, 1]), torch.tensor([0.5, 2.0], dtype=torch.float64)),
        (torch.tensor([0, 0, 0]), torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64)),
        (torch.tensor([2, 0, 2, 2]), torch.rand(4, generator=gen, dtype=torch.float64) * 3),
    ]
    for start, (index, values) in itertools.product(starts, cases):
        want = start.numpy().copy()
        with np.errstate(all="ignore"):
            NUMPY_AT[method].at(want, index.numpy(), values.numpy())
        got = getattr(at(start)[index], method)(values)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, equal_nan=True)


def test_the_matrix_has_every_recipe_and_at_set() -> None:
    from inplace_recipes.matrix import default_rows

    rows = default_rows()
    assert set(ir.RECIPES) | {"at[].set"} <= set(rows)


def test_the_expected_answers_come_from_numpy_alone() -> None:
    """``tests/at_cases.py`` builds each case's expected answer: it imports none of the
    three libraries the ``at[]`` page compares (torch, JAX, array-api-extra)."""
    tree = ast.parse((ROOT / "tests" / "at_cases.py").read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level == 0
    }
    assert "numpy" in imported
    assert not imported & {"torch", "jax", "jaxlib", "array_api_extra", "inplace_recipes"}


@pytest.mark.parametrize(
    ("dtype", "number", "method"),
    list(
        itertools.product(
            [torch.bool, torch.uint8, torch.int64, torch.float32], [-2.5, 2.5], ["min", "max"]
        )
    ),
    ids=str,
)
def test_min_and_max_cast_only_where_torch_casts(
    dtype: torch.dtype, number: float, method: str
) -> None:
    x = torch.tensor([0, 1, 0]).to(dtype)
    value = torch.tensor(number)
    y = x.clone()
    y[0:2] = (torch.minimum if method == "min" else torch.maximum)(y[0:2], value)
    assert torch.equal(getattr(at(x)[0:2], method)(value), y)


#: Index kinds for the compile check: basic, a mask, an index tensor that repeats a position.
COMPILE_KINDS: dict[str, Any] = {
    "basic": (1, slice(None, None, 2)),
    "mask": torch.tensor([True, False, True]),
    "repeating tensor": torch.tensor([2, 0, 2]),
}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "kind"),
    [(m, k) for m in sorted(_public_methods() - {"get"}) for k in COMPILE_KINDS],
)
def test_every_method_compiles_with_fullgraph(method: str, kind: str) -> None:
    """``torch.compile(fullgraph=True)`` (traced with ``aot_eager``): eager's value and gradients."""
    index = COMPILE_KINDS[kind]
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(3, 4, generator=gen, dtype=torch.float64) + 0.5
    v = torch.rand(x[index].shape, generator=gen, dtype=torch.float64) + 0.5

    def write(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if method == "apply":
            return at(a)[index].apply(torch.sin)
        return getattr(at(a)[index], method)(b)

    def run(fn: Callable[..., torch.Tensor]) -> list[torch.Tensor]:
        a, b = x.clone().requires_grad_(), v.clone().requires_grad_()
        out = fn(a, b)
        grads = torch.autograd.grad((out * out).sum(), (a, b), allow_unused=True)
        return [out.detach(), *(torch.zeros(1) if g is None else g for g in grads)]

    torch._dynamo.reset()
    try:
        got = run(torch.compile(write, fullgraph=True, backend="aot_eager"))
    finally:
        torch._dynamo.reset()
    for g, w in zip(got, run(write), strict=True):
        torch.testing.assert_close(g, w)


_IN_PLACE = {
    "add": "__iadd__",
    "subtract": "__isub__",
    "multiply": "__imul__",
    "divide": "__itruediv__",
    "power": "__ipow__",
}


def _torch_writes(method: str, x: torch.Tensor, index: Any, value: torch.Tensor) -> torch.Tensor:
    """``y = x.clone()`` then the statement: setitem, ``y[i] op= v``, or min/max written back."""
    y = x.clone()
    if method == "set":
        y[index] = value
    elif method in ("min", "max"):
        y[index] = (torch.minimum if method == "min" else torch.maximum)(y[index], value)
    else:
        part = y[index]
        y[index] = getattr(part, _IN_PLACE[method])(value)
    return y


@pytest.mark.parametrize(
    "index", [1, slice(1, 2), torch.tensor([1])], ids=["int", "slice", "tensor"]
)
@pytest.mark.parametrize(
    "method",
    [
        "set",
        "add",
        "subtract",
        "multiply",
        "divide",
        "power",
        "min",
        "max",
    ],
)
def test_every_method_refuses_a_value_with_more_leading_dims_where_torch_does(
    method: str, index: Any
) -> None:
    """A value of ``x[index]``'s shape with one more leading 1: torch's statement and at[] agree."""
    x = torch.ones(3, 4)
    value = torch.full((1, *x[index].shape), 2.0)
    try:
        want = _torch_writes(method, x, index, value)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            getattr(at(x)[index], method)(value)
        return
    assert torch.equal(getattr(at(x)[index], method)(value), want)


# -- plot_compatibility_matrix ------------------------------------------------------


def test_only_masked_fill_is_run_with_a_one_element_value() -> None:
    """Of every row, the ones that refuse the table's value: the page names ``masked_fill``."""
    from inplace_recipes.matrix import compatibility_matrix, default_rows

    gen = torch.Generator().manual_seed(0)
    x = torch.randn((3, 4), generator=gen)
    index = (1, slice(None, None, 2))
    value = torch.randn(x[index].shape, generator=gen)
    single = set()
    for name, fn in default_rows().items():
        try:
            fn(x.clone(), index, value)
        except ir.UnsupportedValueError:
            single.add(name)
    assert single == {"masked_fill"}
    assert "(masked_fill: a one-element value" in compatibility_matrix(columns=["int64"]).setup


@pytest.mark.slow
def test_reading_the_matrix_holds_over_every_column() -> None:
    """The page's "Reading it": ``inplace`` refused in every column but ``jvp``, ``jacfwd``
    and ``int64`` (where it changes ``x``); ``clone``'s two errors; ``select_scatter`` works."""
    from inplace_recipes.matrix import COLUMNS, compatibility_matrix

    matrix = compatibility_matrix(["inplace", "clone", "select_scatter"])
    assert matrix.cols == list(COLUMNS)
    for column in COLUMNS:
        cell = matrix["inplace", column]
        if cell.status == "n/a":  # no CUDA here
            continue
        if column in ("jvp", "jacfwd", "int64"):
            assert cell.status == "wrong", (column, cell)
            assert cell.detail.startswith("changed its input x"), (column, cell)
        else:
            assert cell.status == "error", (column, cell)
    failing = {c for c in COLUMNS if matrix["clone", c].status not in ("works", "n/a")}
    assert failing == {"vmap value", "functionalize"}, failing
    assert "derivative for aten::copy is not implemented" in matrix["clone", "functionalize"].detail
    assert all(matrix["select_scatter", c].status in ("works", "n/a") for c in COLUMNS)
