"""Sentences of the error reference that an independent reader disproved, as checks.

Each test asserts what ``docs/errors.md`` and ``explain()`` now say, so the page
fails the build when torch stops doing it. The old sentences said: ``out=`` keeps
the shape; every ``out=`` function refuses an argument that requires grad; ``add_``
"and similar ops" report a shape error under ``vmap``; a no_grad view is safe when
its base is written in the same mode; any inference-mode view of a tensor that does
not require grad can be written outside; the message always names the in-place op;
every in-place write moves the version counter. A second reading found more: the
saved-tensor message names the op that last wrote an input (it names the grad_fn:
the op that made it after a write under no_grad, nothing for a leaf); any in-place op
on a hooked module's tensor fails at the write (under no_grad it fails at the next
use, and an input that does not require grad can be written); the custom-Function
and hook forms of "its base ... has been modified" are the unbind/split error; the
vmap message always says "inplace arithmetic" (index_put_ and ops without a
batching rule name themselves); torch.compile wraps every eager in-place error
(the overlap errors are unwrapped with the eager backend, and aot_eager computes
what eager refuses); an inference tensor cannot be written outside inference_mode
at all (.data and .numpy() writes pass); every tensor has a version counter and
only .data skips it (.numpy() does too); a no_grad view cannot be written with
gradients on (a write autograd does not record can); a tensor made by expand()
refuses every write (fill_, zero_ and setitem pass); the unbind fix leaves the
tensor unchanged; a leaf error always means a write of yours (ctx.mark_dirty on a
leaf raises it too).
"""

from __future__ import annotations

import warnings

import pytest
import torch

from inplace_recipes import explain
from inplace_recipes.error_reference import error_kind


def test_out_resizes_the_tensor_it_writes_with_a_warning() -> None:
    out = torch.zeros(3)
    with pytest.warns(UserWarning, match="resized"):
        torch.add(torch.zeros(3), torch.ones(2, 3), out=out)
    assert out.shape == (2, 3)
    empty = torch.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out= is resized without a warning
        torch.add(torch.zeros(3), torch.ones(2, 3), out=empty)
    assert empty.shape == (2, 3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.zeros(3).add_(torch.ones(2, 3))


def test_most_out_functions_refuse_grad_but_linalg_norm_records_one() -> None:
    a = torch.ones(3, requires_grad=True)
    for call in (
        lambda: torch.add(a, 1, out=torch.empty(3)),
        lambda: torch.sum(a, 0, out=torch.empty(())),
        lambda: torch.cat([a, a], out=torch.empty(6)),
    ):
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            call()
    m = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    r = torch.linalg.norm(m, out=torch.empty(()))
    r.backward()
    torch.testing.assert_close(m.grad, m.detach() / m.detach().norm())


def test_under_vmap_only_add_reports_a_shape_error() -> None:
    rows = torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        torch.func.vmap(lambda r: torch.zeros(3).add_(r))(rows)
    for name in ("mul_", "sub_", "div_", "copy_"):
        with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
            torch.func.vmap(lambda r, n=name: getattr(torch.zeros(3), n)(r))(rows)


def test_a_no_grad_view_breaks_when_its_base_is_written_under_no_grad_too() -> None:
    u = torch.ones(3, requires_grad=True) * 1
    with torch.no_grad():
        view = u[:2]
    with torch.no_grad():
        u.add_(1)  # the same mode as the view
    with pytest.raises(RuntimeError, match="created in no_grad mode and its base"):
        view.sum()
    again = u[:2]  # the fix: take the view again after the write
    again.sum().backward()


def test_an_inference_view_of_a_plain_tensor_refuses_a_write_autograd_would_record() -> None:
    plain = torch.ones(3)
    with torch.inference_mode():
        w = plain.view(-1)
    w.add_(1)  # not recorded: nothing requires grad
    assert plain.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="created in inference mode"):
        w.add_(torch.ones(3, requires_grad=True))


def test_a_saved_view_written_in_place_is_named_as_strided() -> None:
    x = torch.ones(3, requires_grad=True)
    w = torch.ones(3, requires_grad=True)
    h = x * 1
    v = h[:2]
    y = v * w[:2]
    v.add_(1)
    with pytest.raises(RuntimeError, match="output 0 of AsStrided") as caught:
        y.sum().backward()
    assert "saved-tensor" in explain(caught.value).url


def test_a_write_through_data_does_not_move_the_version_counter() -> None:
    x = torch.tensor([0.5], requires_grad=True)
    h = torch.sigmoid(x)
    h.data.mul_(2)
    assert h._version == 0
    h.sum().backward()  # no error: backward used the new value
    s = torch.sigmoid(torch.tensor([0.5]))
    assert not torch.allclose(x.grad, s * (1 - s))


def test_a_hooked_module_refuses_writes_on_what_it_returns_not_on_the_callers_tensor() -> None:
    a = torch.ones(3, requires_grad=True)
    tanh = torch.nn.Tanh()
    tanh.register_full_backward_hook(lambda *args: None)
    h = a * 1
    y = tanh(h)
    h.add_(1)  # the caller's own tensor: not wrapped, and tanh saved its output
    (y.sum() + (h * 2).sum()).backward()
    torch.testing.assert_close(a.grad, 1 - torch.tanh(torch.ones(3)) ** 2 + 2)
    out = tanh(a * 1)
    with pytest.raises(RuntimeError, match="Output 0 of BackwardHookFunction is a view"):
        out.add_(1)  # what the hooked module returned


def test_an_unbind_piece_written_under_no_grad_cannot_be_used_with_grad() -> None:
    t = torch.ones(2, 3, requires_grad=True) * 1
    first, _second = t.unbind()
    with torch.no_grad():
        first.add_(1)  # raises nothing at the write
    with pytest.raises(RuntimeError, match="Output 0 of Unbind is a view"):
        first.sum()


def test_matmul_saves_a_copy_of_a_folded_non_contiguous_batched_input() -> None:
    a = torch.randn(4, 3, 2).transpose(0, 1)  # non-contiguous, batched
    b = torch.randn(2, 5, requires_grad=True)
    y = a @ b
    old = a.clone()
    a.mul_(2)  # no error: backward uses the saved copy
    y.sum().backward()
    torch.testing.assert_close(b.grad, old.reshape(-1, 2).sum(0).unsqueeze(1).expand(2, 5))
    a2 = torch.randn(3, 2)
    y2 = a2 @ b
    a2.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y2.sum().backward()


def _saved_tensor_message(write_under_no_grad: bool, leaf: bool) -> str:
    x, w = torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    h = x if leaf else x.exp()
    y = h * w
    with torch.set_grad_enabled(not write_under_no_grad):
        if leaf:
            with torch.no_grad():
                h.add_(1)
        else:
            h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation") as caught:
        y.sum().backward()
    return str(caught.value)


def test_the_saved_tensor_message_names_the_grad_fn_not_always_the_write() -> None:
    assert "which is output 0 of Add," in _saved_tensor_message(False, leaf=False)
    assert "which is output 0 of Exp," in _saved_tensor_message(True, leaf=False)
    leaf = _saved_tensor_message(True, leaf=True)
    assert "which is output" not in leaf
    assert "has no grad_fn: a leaf" in str(explain(leaf))


class _ClampThenDouble(torch.nn.Module):
    def forward(self, x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            x.clamp_(max=5)
        scale.add_(1)
        return x * 2 * scale


def test_a_hooked_tensor_written_under_no_grad_fails_at_its_next_use() -> None:
    module = _ClampThenDouble()
    module.register_full_backward_hook(lambda *args: None)
    with pytest.raises(RuntimeError, match="its base or another view of its base") as caught:
        module(torch.ones(3, requires_grad=True) * 1, torch.ones(3))
    assert explain(caught.value).slug == "backward-hook-view"
    assert "under no_grad" in error_kind("backward-hook-view").why
    plain = _ClampThenDouble()
    plain.forward = lambda x, scale: x * scale.add_(1)  # type: ignore[method-assign]
    plain.register_full_backward_hook(lambda *args: None)
    out = plain(torch.ones(3, requires_grad=True) * 1, torch.ones(3))  # scale: no grad, written
    assert out.tolist() == [2.0, 2.0, 2.0]


class _Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx: object, x: torch.Tensor) -> torch.Tensor:
        return x.view_as(x)

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        return grad


def test_a_custom_function_view_written_later_is_its_own_error_not_unbinds() -> None:
    out = _Identity.apply(torch.ones(3, requires_grad=True) * 1)
    with torch.no_grad():
        out.add_(1)
    with pytest.raises(RuntimeError, match="created inside a custom Function") as caught:
        out.sum()
    assert explain(caught.value).slug == "custom-function-view"
    x = torch.ones(3, requires_grad=True) * 1
    out = _Identity.apply(x)
    x.add_(1)
    with pytest.raises(RuntimeError, match="its base or another view") as caught:
        out.sum()
    assert explain(caught.value).slug == "custom-function-view"


def test_every_form_of_the_vmap_message_is_recognised() -> None:
    def put(index: torch.Tensor) -> object:
        def run(value: torch.Tensor) -> torch.Tensor:
            out = torch.zeros(3)
            out[index] = value
            return out

        return run

    for index in (torch.tensor([0]), torch.tensor([True, False, False])):
        with pytest.raises(RuntimeError, match=r"vmap: index_put_\(self") as caught:
            torch.func.vmap(put(index))(torch.arange(2.0))
        assert explain(caught.value).slug == "vmap"
    with (
        pytest.warns(UserWarning, match="performance drop"),
        pytest.raises(RuntimeError, match=r"vmap: aten::clamp_\(self") as caught,
    ):
        torch.func.vmap(lambda low: torch.zeros(3).clamp_(min=low))(torch.ones(2, 3))
    assert explain(caught.value).slug == "vmap"


def _compiled_leaf(a: torch.Tensor) -> torch.Tensor:
    return a.add_(1)


def _compiled_view_of_leaf(a: torch.Tensor) -> torch.Tensor:
    a[0] = 0.0
    return a


def _compiled_unbind(a: torch.Tensor) -> torch.Tensor:
    t = a * 1
    first, _second, _third = t.unbind()
    first.add_(1)
    return t


def _compiled_no_grad_view(a: torch.Tensor) -> torch.Tensor:
    t = a * 1
    with torch.no_grad():
        v = t[:2]
    v.add_(1)
    return t


def _compiled_custom_view(a: torch.Tensor) -> torch.Tensor:
    out = _Identity.apply(a * 1)
    return out.add_(1)  # type: ignore[no-any-return]


def _compiled_out(a: torch.Tensor) -> torch.Tensor:
    return torch.add(a, 1, out=torch.empty(3))


@pytest.mark.parametrize(
    ("function", "slug"),
    [
        (_compiled_leaf, "leaf"),
        (_compiled_view_of_leaf, "view-of-leaf"),
        (_compiled_unbind, "multi-output-view"),
        (_compiled_no_grad_view, "no-grad-view"),
        (_compiled_custom_view, "custom-function-view"),
        (_compiled_out, "out-argument"),
    ],
)
# Dynamo's tracing of a custom Function warns that it instantiated one (torch's own code)
@pytest.mark.filterwarnings("ignore:.*should not be instantiated:DeprecationWarning")
def test_compile_wraps_the_errors_eager_raises_at_the_op(function: object, slug: str) -> None:
    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.TorchRuntimeError) as caught:
        torch.compile(function, backend="eager")(torch.ones(3, requires_grad=True))
    explained = explain(caught.value)
    assert explained.slug == slug
    assert "torch.compile raised it" in str(explained)
    torch._dynamo.reset()


def test_compile_does_not_wrap_the_overlap_errors_and_aot_eager_computes_them() -> None:
    def shift(x: torch.Tensor) -> torch.Tensor:
        x[1:].copy_(x[:-1])
        return x

    torch._dynamo.reset()
    with pytest.raises(RuntimeError, match="refer to a single memory location") as caught:
        torch.compile(shift, backend="eager")(torch.arange(5.0))
    assert type(caught.value) is RuntimeError  # not Dynamo's exception
    assert "torch.compile raised it" not in str(explain(caught.value))
    torch._dynamo.reset()
    assert torch.compile(shift, backend="aot_eager")(torch.arange(5.0)).tolist() == [
        0.0,
        0.0,
        1.0,
        2.0,
        3.0,
    ]
    base = torch.zeros(1, 4)
    torch.compile(lambda b: b.expand(3, 4).add_(torch.ones(3, 4)), backend="aot_eager")(base)
    assert base.tolist() == [[3.0, 3.0, 3.0, 3.0]]
    torch._dynamo.reset()


def test_data_and_numpy_write_an_inference_tensor_outside_inference_mode() -> None:
    with torch.inference_mode():
        cache = torch.zeros(3)
    cache.data.add_(1)
    cache.numpy()[0] = 9
    assert cache.tolist() == [9.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        cache.add_(1)
    assert ".numpy()" in error_kind("inference-tensor").why


def test_a_write_through_numpy_does_not_move_the_version_counter() -> None:
    x = torch.tensor([0.5], requires_grad=True)
    h = torch.sigmoid(x)
    h.detach().numpy()[0] = 5.0
    assert h._version == 0
    h.sum().backward()  # no error: backward used the new value
    assert x.grad is not None
    assert x.grad.item() == pytest.approx(5.0 * (1 - 5.0))


def test_a_no_grad_view_takes_a_write_that_autograd_does_not_record() -> None:
    plain = torch.zeros(3)
    with torch.no_grad():
        view = plain[:2]
    view.add_(1)
    assert plain.tolist() == [1.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="created in no_grad mode"):
        view.add_(torch.ones(2, requires_grad=True))
    assert "autograd records" in error_kind("no-grad-view").why


def test_fill_zero_and_setitem_write_an_expanded_tensor_everywhere() -> None:
    base = torch.zeros(1, 4)
    row = base.expand(3, 4)
    row[0] = 5
    assert base.tolist() == [[5.0] * 4]
    row.fill_(2)
    assert base.tolist() == [[2.0] * 4]
    row.zero_()
    with pytest.raises(RuntimeError, match="more than one element"):
        row.add_(torch.ones(3, 4))
    assert "fill_, zero_" in error_kind("expanded").why


def test_the_unbind_fix_writes_the_whole_tensor() -> None:
    assert 'RECIPES["select_scatter"](x, i, x[i] + 1)' in error_kind("multi-output-view").fix


class _DoubleMarked(torch.autograd.Function):
    @staticmethod
    def forward(ctx: torch.autograd.function.FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx: object, grad: torch.Tensor) -> torch.Tensor:
        return 2 * grad


def test_mark_dirty_on_a_leaf_raises_the_leaf_error_with_its_own_fix() -> None:
    a = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad has been used") as e:
        _DoubleMarked.apply(a)
    explained = explain(e.value)
    assert explained.slug == "leaf"
    assert "F.apply(x.clone())" in str(explained)
    _DoubleMarked.apply(a.clone()).sum().backward()
    assert a.grad is not None
    assert a.grad.tolist() == [2.0, 2.0, 2.0]


def _optimizers() -> list[type[torch.optim.Optimizer]]:
    """Every optimizer class torch.optim exports, but LBFGS (its step needs a closure) and
    SparseAdam (it takes sparse gradients only)."""
    apart = (torch.optim.Optimizer, torch.optim.LBFGS, torch.optim.SparseAdam)
    classes = [getattr(torch.optim, name) for name in dir(torch.optim)]
    return [
        cls
        for cls in classes
        if isinstance(cls, type) and issubclass(cls, torch.optim.Optimizer) and cls not in apart
    ]


def _version_after_a_step(cls: type[torch.optim.Optimizer], **options: object) -> int:
    w = torch.ones(3, 4, requires_grad=True)  # two-dimensional: Muon takes no other
    w.grad = -torch.ones(3, 4)
    cls([w], **options).step()
    return w._version


def test_every_optimizers_default_step_is_counted_and_a_fused_one_is_not() -> None:
    """errors.md: "In torch 2.13 a step counts by default, but not a fused one
    (``fused=True``)", over every optimizer of torch.optim that takes a dense step without a
    closure, and every one of them that takes ``fused=True`` on the CPU."""
    optimizers = _optimizers()
    assert len(optimizers) >= 10
    assert all(_version_after_a_step(cls) >= 1 for cls in optimizers)
    fused = []
    for cls in optimizers:
        try:
            version = _version_after_a_step(cls, fused=True)
        except (TypeError, RuntimeError):  # no fused form, or none on the CPU
            continue
        fused.append(cls.__name__)
        assert version == 0, cls.__name__
    assert {"SGD", "Adam", "AdamW"} <= set(fused), fused
