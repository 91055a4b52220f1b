"""Sentences of the error reference that an independent reader disproved, as checks.

Each test asserts what ``docs/errors.md`` and ``explain()`` now say, so the page
fails the build when torch stops doing it. The old sentences said: ``out=`` keeps
the shape; every ``out=`` function refuses an argument that requires grad; ``add_``
"and similar ops" report a shape error under ``vmap``; a no_grad view is safe when
its base is written in the same mode; any inference-mode view of a tensor that does
not require grad can be written outside; the message always names the in-place op;
every in-place write moves the version counter.
"""

from __future__ import annotations

import pytest
import torch

from inplace_recipes import explain


def test_out_resizes_the_tensor_it_writes_with_a_warning() -> None:
    out = torch.zeros(3)
    with pytest.warns(UserWarning, match="resized"):
        torch.add(torch.zeros(3), torch.ones(2, 3), out=out)
    assert out.shape == (2, 3)
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
