"""The two gloo ranks of tests/test_explain_ddp.py, in a module of their own.

``torch.multiprocessing.spawn`` pickles the rank function by its module's
name. Under pytest's ``--import-mode=importlib`` a function of the test file
lives in ``tests.test_explain_ddp``, which a spawned process cannot import when
pytest was started without the repository root on ``sys.path`` (as nox does);
this module is imported through ``pythonpath = ["tests"]``, which spawned
processes inherit.
"""

from __future__ import annotations

import warnings

import torch
import torch.distributed as dist
from torch import nn


def seeded_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()


def rank_main(rank: int, folder: str) -> None:
    store = dist.FileStore(f"{folder}/store", 2)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=2)
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    out: dict[str, object] = {}
    for broadcast in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model = nn.parallel.DistributedDataParallel(seeded_model(), broadcast_buffers=broadcast)
        out[f"warned {broadcast}"] = [str(w.message) for w in caught]
        try:
            (model(x).sum() + model(x).pow(2).sum()).backward()
            out[str(broadcast)] = [p.grad.clone() for p in model.parameters()]
        except RuntimeError as error:
            out[str(broadcast)] = str(error)
    torch.save(out, f"{folder}/rank{rank}.pt")
    dist.barrier()
