"""The DistributedDataParallel fix that explain() prints, applied: two gloo ranks on the CPU.

explain() prints ``DistributedDataParallel(model, broadcast_buffers=False)`` for a
saved one-dimensional CUDA leaf (the threads' BatchNorm buffers) and for
``aten::copy_`` under a grad transform. Torch 2.13 raises neither error for the
threads' pattern here (a BatchNorm model called twice before one backward, on
the CPU); what is checked is that the fix runs and gives the model's own
gradients, and that the message of that pattern is not what 2.13 prints.
"""

from __future__ import annotations

import tempfile

import pytest
import torch
import torch.multiprocessing as mp

import ddp_ranks
from inplace_recipes import explain
from inplace_recipes._error_kinds import ERRORS


def test_broadcast_buffers_false_runs_and_gives_the_models_gradients() -> None:
    fix = "model = DistributedDataParallel(model, broadcast_buffers=False)"
    causes = [
        c for kind in ERRORS for c in kind.causes if c.key in ("ddp-buffers", "ddp-broadcast")
    ]
    assert len(causes) == 2
    assert all(c.fix.startswith(fix) for c in causes)
    folder = tempfile.mkdtemp()
    mp.spawn(ddp_ranks.rank_main, args=(folder,), nprocs=2, join=True)
    got = torch.load(f"{folder}/rank1.pt")
    plain = ddp_ranks.seeded_model()
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    (plain(x).sum() + plain(x).pow(2).sum()).backward()
    for broadcast in ("True", "False"):  # torch 2.13 raises nothing, broadcast or not
        assert not isinstance(got[broadcast], str), got[broadcast]
        for grad, param in zip(got[broadcast], plain.parameters(), strict=True):
            torch.testing.assert_close(grad, param.grad)
    # torch 2.13 deprecates broadcast_buffers for forward_sync_buffers, as the fix's comment says
    assert any("`broadcast_buffers` is deprecated" in w for w in got["warned False"])


@pytest.mark.parametrize(
    ("message", "key"),
    [
        (
            (
                "one of the variables needed for gradient computation has been modified by an "
                "inplace operation: [torch.cuda.FloatTensor [768]] is at version 3; expected "
                "version 2 instead."
            ),
            "ddp-buffers",
        ),
        (
            (
                "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to "
                "call in-place operation (aten::copy_) that would mutate a captured Tensor."
            ),
            "ddp-broadcast",
        ),
    ],
)
def test_the_ddp_fix_comes_first_for_the_threads_messages(message: str, key: str) -> None:
    assert explain(message).causes[0].key == key
