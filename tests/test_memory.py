"""Peak memory, counted: the counter against known allocations, and both forms of the step.

The benchmark's peak is a sum of the CPU allocator's events, not a sample, so
each test here states its answer in bytes: a step of known allocations must
give exactly those bytes, forward and backward, whatever else runs, and the
two forms a caller holds a tensor in (a temporary, or kept alive through
backward) must differ by exactly the tensor a recipe keeps beside its result.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import torch

import inplace_recipes as ir
from inplace_recipes import bench
from inplace_recipes.bench import _cli as cli
from inplace_recipes.bench import _measure as measure
from inplace_recipes.bench import _statistics as statistics
from inplace_recipes.bench._memory import allocations, peak_of

CPU = torch.device("cpu")


# -- the counter, on steps whose allocations are known ------------------------------


@pytest.mark.parametrize(("k", "nbytes"), [(1, 4000), (3, 4000), (5, 1 << 20), (2, 40_000_000)])
def test_k_tensors_alive_together_peak_at_k_times_their_bytes(k: int, nbytes: int) -> None:
    def step() -> list[torch.Tensor]:
        return [torch.empty(nbytes // 4) for _ in range(k)]

    assert bench.peak_bytes(step, CPU) == k * nbytes


def test_a_freed_tensor_does_not_count_towards_the_peak_after_it() -> None:
    def step() -> torch.Tensor:
        first = torch.empty(1000, dtype=torch.int64)  # 8,000 bytes
        del first
        second = torch.empty(3000, dtype=torch.bool)  # 3,000 bytes
        third = torch.empty(500, dtype=torch.float64)  # 4,000 bytes, with the second alive
        return second, third

    assert allocations(step) == [8000, -8000, 3000, 4000, -4000, -3000]
    assert bench.peak_bytes(step, CPU) == 8000


def test_what_was_allocated_before_the_step_is_not_counted() -> None:
    kept = [torch.empty(10**6) for _ in range(3)]  # 12 MB before the step
    assert bench.peak_bytes(lambda: torch.empty(250), CPU) == 1000
    del kept


class _AllocatesInBackward(torch.autograd.Function):
    """Identity whose backward allocates ``k`` buffers of ``nbytes``, all alive at once."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, k: int, nbytes: int) -> torch.Tensor:
        ctx.k, ctx.nbytes = k, nbytes
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        buffers = [torch.empty(ctx.nbytes, dtype=torch.uint8) for _ in range(ctx.k)]
        del buffers
        return grad, None, None


@pytest.mark.parametrize(("k", "nbytes"), [(1, 4_000_000), (2, 4_000_000), (3, 123_457)])
def test_backward_allocations_are_counted(k: int, nbytes: int) -> None:
    x = torch.rand(1000, requires_grad=True)

    def step(k: int) -> Any:
        y = _AllocatesInBackward.apply(x, k, nbytes)
        return torch.autograd.grad(y.sum(), [x])

    # everything else in the step is the same with k = 0: the difference is the k buffers
    assert bench.peak_bytes(lambda: step(k), CPU) - bench.peak_bytes(lambda: step(0), CPU) == (
        k * nbytes
    )


def test_the_count_is_the_same_at_every_call() -> None:
    x = torch.rand(500, 500, requires_grad=True) * 1
    for name in ir.RECIPES:
        counted = {
            bench.peak_bytes(
                lambda name=name: torch.autograd.grad(
                    ir.RECIPES[name](x, (3, 4), 0.0).sum(), [x], retain_graph=True
                ),
                CPU,
            )
            for _ in range(4)
        }
        assert len(counted) == 1, (name, counted)


def test_another_threads_allocations_are_not_counted() -> None:
    stop = threading.Event()

    def busy() -> None:  # another thread allocating all along: load, as far as the counter goes
        while not stop.is_set():
            torch.empty(12345)

    other = threading.Thread(target=busy)
    other.start()
    try:
        assert bench.peak_bytes(lambda: [torch.empty(250) for _ in range(3)], CPU) == 3000
    finally:
        stop.set()
        other.join()


def test_peak_of_is_the_largest_running_sum() -> None:
    assert peak_of([]) == 0
    assert peak_of([5, -5, 3, 4, -7]) == 7
    assert peak_of([10, -3, -7, 2]) == 10


# -- the two forms of the benchmark's step -------------------------------------------


def _steps(name: str, shape: tuple[int, int], index: Any) -> tuple[int, int]:
    """``(temporary, held)`` peak bytes of ``name``'s benchmark step."""
    a = torch.rand(shape, requires_grad=True)
    b = torch.rand(shape, requires_grad=True)
    forward = bench._entries.forward_fn(name, index, 0.0, a)
    step = measure._make_step(forward, a, b, 0.0)
    held = measure._held_for(name, "eager", a, b, index, 0.0)
    return bench.peak_bytes(step.both, CPU), bench.peak_bytes(held, CPU)


@pytest.mark.parametrize("size", [10**3, 10**6])
def test_in_place_is_the_same_in_both_forms(size: int) -> None:
    temporary, held = _steps("inplace", bench._entries.shape_for(size), (1, 2))
    assert temporary == held


@pytest.mark.parametrize("size", [10**3, 10**6])
@pytest.mark.parametrize("name", ["clone", "index_put", "scatter", "where", "masked_fill"])
def test_a_recipe_kept_alive_holds_exactly_one_more_tensor_of_x(name: str, size: int) -> None:
    """These recipes save nothing of ``c`` for backward: kept alive, it is ``c``'s bytes more."""
    shape = bench._entries.shape_for(size)
    temporary, held = _steps(name, shape, (1, 2))
    assert held - temporary == size * 4


def test_clone_and_write_matches_in_place_only_while_the_old_tensor_is_freed() -> None:
    shape = bench._entries.shape_for(10**6)
    inplace, _ = _steps("inplace", shape, (1, 2))
    temporary, held = _steps("clone", shape, (1, 2))
    assert temporary == inplace
    assert held == inplace + 4 * 10**6


def test_the_held_step_keeps_the_tensor_and_gives_the_same_gradients() -> None:
    a = torch.rand(4, 5, requires_grad=True)
    b = torch.rand(4, 5, requires_grad=True)
    seen: list[torch.Tensor] = []

    def write(c: torch.Tensor) -> torch.Tensor:
        seen.append(c)
        return ir.RECIPES["clone"](c, (1, 2), 0.0)

    y, grads = measure.held_step(write, a, b, 0.0)()
    reference = torch.autograd.grad(ir.RECIPES["clone"](a + b, (1, 2), 0.0).sum(), [a, b])
    assert torch.equal(y, ir.RECIPES["clone"](a + b, (1, 2), 0.0))
    for got, want in zip(grads, reference, strict=True):
        assert torch.equal(got, want)
    assert torch.equal(seen[0], a + b)  # written from a + b, not from a copy


# -- the benchmark's records, and --memory -------------------------------------------

TINY = bench.Config(
    sizes=(100, 1000),
    dtypes=("float32",),
    writes=("element", "boolean"),
    entries=("inplace", "inplace_again", "plain_clone", "inplace_on_clone", "clone", "mask"),
    compile_sizes=(),
    overhead_sizes=(),
    min_run_time=0.001,
    rounds=1,
    peak=True,
    attempts=1,
    instruction_sizes=(),
    audit=False,
)


@pytest.fixture(scope="module")
def counted() -> dict[str, Any]:
    return bench.run(TINY)


def test_every_timed_record_has_both_peaks(counted: dict[str, Any]) -> None:
    for r in counted["records"]:
        if r["entry"] == "plain_clone":  # a copy of a tensor made before the step
            assert isinstance(r["peak_bytes"], int)
            assert r["peak_bytes_held"] is None
            continue
        assert isinstance(r["peak_bytes"], int), r
        assert isinstance(r["peak_bytes_held"], int), r
    for size in TINY.sizes:
        for write in TINY.writes:
            inplace = statistics.peak(counted, "inplace", write, size, "held")
            assert inplace == statistics.peak(counted, "inplace", write, size)
            clone = statistics.peak(counted, "clone", write, size, "held")
            assert clone == statistics.peak(counted, "clone", write, size) + 4 * size


def test_fill_memory_counts_every_record_again_and_says_what_changed(
    counted: dict[str, Any],
) -> None:
    results = copy.deepcopy(counted)
    for r in results["records"]:
        r["peak_bytes_held"] = None
    moved = bench.find_record(results, "clone", "element", 1000)
    moved["peak_bytes"] += 1
    was = moved["peak_bytes"]
    memory = measure.fill_memory(results, command="test")
    assert results["records"] == counted["records"]  # the same counts, in both forms
    assert results["provenance"]["memory"] is memory
    assert memory["command"] == "test"
    assert memory["records_counted"] == len(counted["records"])
    assert memory["peak_bytes_changed"] == [
        {
            "device": "cpu",
            "dtype": "float32",
            "size": 1000,
            "write": "element",
            "mode": "eager",
            "entry": "clone",
            "was": was,
            "now": was - 1,
        }
    ]
    for key in ("date", "git_commit", "torch", "threads", "seconds"):
        assert key in memory


def test_fill_memory_leaves_what_was_not_timed_empty(counted: dict[str, Any]) -> None:
    results = copy.deepcopy(counted)
    record = bench.find_record(results, "mask", "boolean", 100)
    record["correct"] = False
    measure.fill_memory(results)
    assert record["peak_bytes"] is None
    assert record["peak_bytes_held"] is None


def test_the_memory_option_fills_a_file_in_place(
    tmp_path: Path, counted: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    stripped = copy.deepcopy(counted)
    for r in stripped["records"]:
        r["peak_bytes"] = r["peak_bytes_held"] = None
    path = tmp_path / "run.json"
    path.write_text(json.dumps(stripped))
    assert cli.main(["--memory", str(path), "--no-progress"]) == 0
    filled = bench.load_results(path)
    assert filled["records"] == json.loads(json.dumps(counted["records"]))
    memory = filled["provenance"]["memory"]
    assert memory["command"].endswith(f"bench --memory {path} --no-progress")
    printed = capsys.readouterr().out
    assert f"counted the peaks of {memory['records_counted']} records" in printed
    assert "peak memory of one step (MiB)" in printed


def test_the_committed_run_carries_both_peaks(bench_results: dict[str, Any]) -> None:
    memory = bench_results["provenance"]["memory"]
    assert "bench --memory docs/measurements/bench/cpu-full.json" in memory["command"]
    assert memory["torch"] == bench_results["provenance"]["torch"]
    timed = [r for r in bench_results["records"] if r["applicable"] and r["correct"]]
    assert len(timed) == memory["records_counted"]
    for r in timed:
        assert isinstance(r["peak_bytes"], int), r
        if r["entry"] != "plain_clone":
            assert isinstance(r["peak_bytes_held"], int), r
    # the landing page's configuration, by hand: clone-and-write keeps c (4e6 bytes) beside y
    inplace = bench.find_record(bench_results, "inplace", "element", 10**6)
    clone = bench.find_record(bench_results, "clone", "element", 10**6)
    assert inplace["peak_bytes_held"] == inplace["peak_bytes"] == clone["peak_bytes"]
    assert clone["peak_bytes_held"] == clone["peak_bytes"] + 4 * 10**6
