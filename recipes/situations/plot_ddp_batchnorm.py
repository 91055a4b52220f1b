"""
BatchNorm under ``DistributedDataParallel``: two forward passes, one backward
=============================================================================

A GAN discriminator sees the fake batch and the real batch in two forward
passes, then one ``backward()``. Wrapped in ``DistributedDataParallel`` with
its default buffer sync (``forward_sync_buffers=True`` in torch 2.13, formerly
``broadcast_buffers=True``, a name 2.13 deprecates), each forward first copies rank 0's
buffers, BatchNorm's running statistics among them, into every rank's module
in place, rank 0's own included. BatchNorm saves those buffers for backward,
so the second forward's copy can make backward fail with "... is at version
N; expected version N-1". Users reported it in
`pytorch/pytorch#22095 <https://github.com/pytorch/pytorch/issues/22095>`_
(2019, since closed) and again in
`pytorch/pytorch#175024 <https://github.com/pytorch/pytorch/issues/175024>`_.
This page runs it on a real
two-process ``gloo`` group on this machine, with the pinned torch, and shows
what happens: in torch 2.13 it does not fail.
"""

# %%
# The mechanism, in one process
# -----------------------------
#
# BatchNorm in training mode saves its running statistics for backward. Copy
# new values into them between two forward passes, as the buffer broadcast
# did, and backward fails:

import inspect
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import torch
from torch import nn

import inplace_recipes as ir

# sphinx_gallery_start_ignore
SOURCE = Path(inspect.currentframe().f_code.co_filename)  # this script, for the checks
PAGE = SOURCE.name
# sphinx_gallery_end_ignore

torch.manual_seed(0)
bn = nn.BatchNorm1d(4)
fake, real = torch.randn(8, 4, requires_grad=True), torch.randn(8, 4)
rank0_mean = torch.zeros(4)  # what rank 0 would send


def two_forwards_with_copy(bn, fake, real):
    loss = bn(fake).pow(2).sum()
    with torch.no_grad():
        bn.running_mean.copy_(rank0_mean)  # the buffer broadcast, by hand
    loss = loss + bn(real).pow(2).sum()
    loss.backward()


# sphinx_gallery_start_ignore
error = None
# sphinx_gallery_end_ignore
try:
    two_forwards_with_copy(bn, fake, real)
except RuntimeError as exc:
    error = exc
    print(exc)
# sphinx_gallery_start_ignore
assert error is not None, "copying into the running mean did not fail"
assert "[torch.FloatTensor [4]] is at version 2; expected version 1 instead" in str(error)
# sphinx_gallery_end_ignore

# %%
# The audit points at the copy, as a write to a tensor saved for backward by
# the first forward:

report = ir.audit(two_forwards_with_copy, nn.BatchNorm1d(4), fake, real)
print(report)
# sphinx_gallery_start_ignore
fails = [r for r in report.to_records() if r["consequence"] == "backward fails"]
assert [r["code"] for r in fails] == [
    "bn.running_mean.copy_(rank0_mean)  # the buffer broadcast, by hand"
], report.to_records()
assert fails[0]["file"].endswith(PAGE)
# sphinx_gallery_end_ignore

# %%
# What torch 2.13 does instead
# ----------------------------
#
# In torch 2.13, ``DistributedDataParallel._sync_buffers`` runs the
# broadcast inside ``torch.autograd._unsafe_preserve_version_counter``: the
# copy no longer bumps the buffers' version counters, so autograd no longer
# sees it. (`pytorch/pytorch#175851 <https://github.com/pytorch/pytorch/pull/175851>`_
# made that change.) The source of the installed torch says so:

from torch.nn.parallel import DistributedDataParallel

sync_source = inspect.getsource(DistributedDataParallel._sync_buffers)
print(torch.__version__, "_unsafe_preserve_version_counter" in sync_source)
# sphinx_gallery_start_ignore
assert "_unsafe_preserve_version_counter" in sync_source
# sphinx_gallery_end_ignore

# %%
# Two processes, a real ``gloo`` group
# ------------------------------------
#
# Each rank runs the script below, as ``torchrun`` would start it: a
# discriminator with BatchNorm in DDP, two forward passes, one backward, once
# with ``forward_sync_buffers=True`` and once with ``False``. The page starts the
# two processes itself; they meet at ``127.0.0.1``, though rank 0's rendezvous
# store (torch's ``TCPStore``) listens on its port on every interface. The page
# gives up after about four minutes.

WORKER = textwrap.dedent(
    """
    import datetime, json, os, sys, warnings
    import torch, torch.distributed as dist
    from torch import nn
    import inplace_recipes as ir

    rank, out = int(os.environ["RANK"]), sys.argv[1]
    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{os.environ['PORT']}",
        rank=rank, world_size=2, timeout=datetime.timedelta(seconds=120),
    )

    DDP = nn.parallel.DistributedDataParallel
    warned = []  # FutureWarnings of the DDP constructor, as each call passed it

    def wrap(D, **sync):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ddp = DDP(D, **sync)
        warned.extend(
            [str(sync), str(w.message)] for w in caught if w.category is FutureWarning
        )
        return ddp

    def step(sync):
        torch.manual_seed(0)
        D = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        ddp = wrap(D, forward_sync_buffers=sync)
        torch.manual_seed(100 + rank)
        fake, real = torch.randn(16, 4), torch.randn(16, 4)
        loss = ddp(fake).mean()  # first forward
        loss = loss - ddp(real).mean()  # second forward: broadcasts the buffers again
        loss.backward()  # one backward
        return [p.grad.tolist() for p in D.parameters()]

    from torch.utils._python_dispatch import TorchDispatchMode

    class BufferWrites(TorchDispatchMode):
        # every op that writes into one of the BatchNorm buffers, by name

        def __init__(self, buffers):
            super().__init__()
            self.buffers, self.seen = buffers, set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            for arg, spec in zip(args, func._schema.arguments):
                written = spec.alias_info is not None and spec.alias_info.is_write
                if written and isinstance(arg, torch.Tensor):
                    name = self.buffers.get(arg.untyped_storage().data_ptr())
                    if name:
                        self.seen.add(f"{func.overloadpacket.__name__} into {name}")
            return func(*args, **(kwargs or {}))

    changed = {}  # whether the running mean changed in the second forward

    def second_forward_writes(sync):
        torch.manual_seed(0)
        D = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        ddp = wrap(D, forward_sync_buffers=sync)
        bn = D[1]
        names = {b.untyped_storage().data_ptr(): n for n, b in bn.named_buffers()}
        x = torch.randn(16, 4)
        ddp(x)
        before = bn.running_mean.clone()
        with BufferWrites(names) as mode:
            ddp(torch.randn(16, 4))
        changed[str(sync)] = not torch.equal(before, bn.running_mean)
        return sorted(mode.seen)

    result = {"writes": {str(b): second_forward_writes(b) for b in (True, False)}}
    result["changed"] = changed
    for sync in (True, False):
        try:
            result[str(sync)] = {"grads": step(sync), "error": None}
        except RuntimeError as exc:
            result[str(sync)] = {"grads": None, "error": str(exc)}
    report = ir.audit(step, True)
    result["audit"] = {
        "records": report.to_records(), "text": str(report), "error": repr(report.error)
    }
    result["warned"] = list(warned)
    # the default, and the deprecated name
    result["default"] = wrap(nn.Linear(2, 2)).forward_sync_buffers
    del warned[:]
    wrap(nn.Linear(2, 2), broadcast_buffers=False)
    result["deprecated"] = list(warned)

    # the broadcast of a torch before #175851: the same calls, version counters bumped
    def old_sync_buffers(self):
        with torch.no_grad():
            self._assign_modules_buffers()
            self._sync_module_buffers(0)

    new_sync_buffers, DDP._sync_buffers = DDP._sync_buffers, old_sync_buffers
    try:
        report = ir.audit(step, True)
    finally:
        DDP._sync_buffers = new_sync_buffers
    result["old"] = {
        "records": report.to_records(), "text": str(report), "error": str(report.error)
    }
    with open(out, "w") as f:
        json.dump(result, f)
    dist.barrier()
    dist.destroy_process_group()
    # After the group is destroyed, torch 2.13's exit-time destructors can abort the
    # process ("terminate called without an active exception": about 1 run in 50 on a
    # loaded two-core machine). Everything is written: leave without running them.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
    """
)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_two_ranks(timeout=240):
    """Run WORKER on two local processes; return each rank's result."""
    folder = Path(tempfile.mkdtemp())
    script = folder / "worker.py"
    script.write_text(WORKER)
    env = {**os.environ, "PORT": str(free_port()), "GLOO_SOCKET_IFNAME": "lo"}
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(folder / f"rank{rank}.json")],
            env={**env, "RANK": str(rank)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for rank in range(2)
    ]
    deadline = time.monotonic() + timeout
    logs = []
    try:
        for proc in procs:
            output, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
            logs.append(output)
    finally:
        for proc in procs:
            proc.kill()
    for rank, proc in enumerate(procs):
        if proc.returncode != 0:
            raise RuntimeError(f"rank {rank} exited with {proc.returncode}:\n{logs[rank]}")
    return [json.loads((folder / f"rank{rank}.json").read_text()) for rank in range(2)]


started = time.monotonic()
ranks = run_two_ranks()
print(f"two ranks finished in {time.monotonic() - started:.0f} s")
for rank, result in enumerate(ranks):
    for flag in ("True", "False"):
        outcome = result[flag]["error"] or "backward ran"
        print(f"rank {rank}, forward_sync_buffers={flag}: {outcome}")
# sphinx_gallery_start_ignore
for result in ranks:
    assert result["True"]["error"] is None, result["True"]["error"]
    assert result["False"]["error"] is None, result["False"]["error"]
# sphinx_gallery_end_ignore

# %%
# ``forward_sync_buffers`` defaults to ``True``; passing it gives no warning,
# while the older name ``broadcast_buffers`` gives a ``FutureWarning``:

print("default:", ranks[0]["default"])
print("forward_sync_buffers warnings:", ranks[0]["warned"])
print("broadcast_buffers=False:", ranks[0]["deprecated"][0][1].split(". ")[0])
# sphinx_gallery_start_ignore
for result in ranks:
    assert result["default"] is True, result["default"]
    assert result["warned"] == [], result["warned"]
    (deprecated,) = result["deprecated"]
    assert deprecated[1].startswith("`broadcast_buffers` is deprecated."), deprecated
# sphinx_gallery_end_ignore

# %%
# The broadcast writes in place on every rank, rank 0 (the source) too: each
# rank recorded, during its second forward, the ops whose schema marks a
# write into one of BatchNorm's buffers. BatchNorm's own update of
# ``running_mean`` and ``running_var`` is not among them: it changes them
# (``changed`` below), but ``native_batch_norm``'s schema does not mark that
# write.

for rank, result in enumerate(ranks):
    for flag in ("True", "False"):
        writes = ", ".join(result["writes"][flag]) or "none"
        print(f"rank {rank}, forward_sync_buffers={flag}: in-place writes: {writes}")
    print(f"rank {rank}: running_mean changed: {result['changed']}")
# sphinx_gallery_start_ignore
schema = torch.ops.aten.native_batch_norm.default._schema
marked = {a.name: a.alias_info is not None for a in schema.arguments}
assert marked["running_mean"] is False, marked
assert marked["running_var"] is False, marked
for result in ranks:
    assert result["changed"] == {"True": True, "False": True}, result["changed"]
    assert not any(w.startswith("native_batch_norm") for w in result["writes"]["False"])
for result in ranks:  # rank 0 included
    assert "copy_ into running_mean" in result["writes"]["True"], result["writes"]
    assert "copy_ into running_var" in result["writes"]["True"], result["writes"]
    assert not any(w.startswith("copy_") for w in result["writes"]["False"]), result["writes"]
# sphinx_gallery_end_ignore

# %%
# Both ranks ran backward, with either setting. Their gradients are the
# average over the ranks of each rank's own gradient (what DDP promises),
# which this page recomputes without DDP or processes:


def local_gradient(rank):
    torch.manual_seed(0)
    D = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    torch.manual_seed(100 + rank)
    fake, real = torch.randn(16, 4), torch.randn(16, 4)
    return torch.autograd.grad(D(fake).mean() - D(real).mean(), list(D.parameters()))


expected = [(a + b) / 2 for a, b in zip(local_gradient(0), local_gradient(1), strict=True)]
for rank, result in enumerate(ranks):
    for flag in ("True", "False"):
        grads = [torch.tensor(g) for g in result[flag]["grads"]]
        match = all(torch.allclose(g, e, atol=1e-6) for g, e in zip(grads, expected, strict=True))
        print(f"rank {rank}, forward_sync_buffers={flag}: gradients match: {match}")
        # sphinx_gallery_start_ignore
        assert match
        # sphinx_gallery_end_ignore

# %%
# What the audit sees inside DDP
# ------------------------------
#
# Each rank also ran the step under :func:`~inplace_recipes.auditing.audit`.
# Its findings, from rank 1 (rank 0's are the same: its buffers are written
# in place too, with its own values):

records = ranks[1]["audit"]["records"]
print(ranks[1]["audit"]["text"])
# sphinx_gallery_start_ignore
for result in ranks:
    assert result["audit"]["records"] == [], result["audit"]["records"]
    assert result["audit"]["text"].startswith("No in-place writes on tensors of an autograd")
assert ranks[1]["audit"]["error"] == "None"
# sphinx_gallery_end_ignore

# %%
# The audit sees no write here at all, though the broadcast's ``copy_``
# writes the running statistics that BatchNorm saved: DDP's broadcast runs in
# C++, out of the audit's reach, and BatchNorm's own update of them moves no
# version counter. Backward ran, and the gradients are right, because
# BatchNorm's backward in training mode does not read the running statistics
# it saved; overwrite them with nonsense, hidden from the version counter as
# DDP hides its copy, and the gradient does not move:

torch.manual_seed(0)
x = torch.randn(8, 4, requires_grad=True)
clean = torch.autograd.grad(nn.BatchNorm1d(4)(x).pow(3).sum(), x)[0]
bn = nn.BatchNorm1d(4)
loss = bn(x).pow(3).sum()
buffers = (bn.running_mean, bn.running_var)
with torch.no_grad(), torch.autograd._unsafe_preserve_version_counter(buffers):
    bn.running_var.fill_(1e6)
    bn.running_mean.fill_(-1e6)
same = torch.equal(torch.autograd.grad(loss, x)[0], clean)
print("same gradient:", same)
# sphinx_gallery_start_ignore
assert same
# sphinx_gallery_end_ignore

# %%
# On a torch before #175851, where the broadcast's copy bumps the version
# counters (as users report in `#22095
# <https://github.com/pytorch/pytorch/issues/22095>`_, `#65907
# <https://github.com/pytorch/pytorch/issues/65907>`_, `#110363
# <https://github.com/pytorch/pytorch/issues/110363>`_ and `#175024
# <https://github.com/pytorch/pytorch/issues/175024>`_), it is the error of
# the one-process repro at the top of this page. Each rank ran the step once
# more with that broadcast (``_sync_buffers`` without
# ``_unsafe_preserve_version_counter``): the audit does not see the copy,
# made inside DDP's C++ broadcast, so it reports the error but no line.

print(ranks[1]["old"]["text"])
# sphinx_gallery_start_ignore
for result in ranks:
    assert result["old"]["records"] == [], result["old"]["records"]
    assert "is at version" in result["old"]["error"], result["old"]["error"]
    assert result["old"]["text"].startswith("No in-place writes on tensors of an autograd")
# sphinx_gallery_end_ignore

# %%
# The fix, on those releases
# --------------------------
#
# - ``forward_sync_buffers=False`` (``broadcast_buffers=False`` on a torch
#   without it; 2.13 deprecates that name): the same gradients, as checked
#   above, without a warning.
# - `nn.SyncBatchNorm <https://pytorch.org/docs/stable/generated/torch.nn.SyncBatchNorm.html>`_
#   instead of BatchNorm, the usual choice for BatchNorm under DDP.
# - Upgrade: torch 2.13 runs the original code, as this page shows.
#
# Learn more
# ----------
#
# - `pytorch/pytorch#22095 <https://github.com/pytorch/pytorch/issues/22095>`_:
#   "Inplace error if DistributedDataParallel module that contains a buffer is
#   called twice", and `pytorch/pytorch#175024
#   <https://github.com/pytorch/pytorch/issues/175024>`_, the same with
#   BatchNorm in a GAN discriminator.
# - `DistributedDataParallel
#   <https://pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html>`_:
#   ``forward_sync_buffers`` (formerly ``broadcast_buffers``).
# - :doc:`/auto_recipes/situations/plot_gan_training`: the other in-place
#   error of GAN training.
