"""A difference inside the bootstrap interval is a tie, wherever the site ranks.

Synthetic runs with interleaved rounds: two recipes whose ratio lies beyond
the noise band but whose rounds overlap must tie (the interval of their ratio
holds 1), and two whose rounds are apart must not. Each ranking word the site
prints (fastest, slowest, "beats the copy", "saves time", compiled ties) goes
through the same rule; each test fails on code that looks at the band alone.
"""

from __future__ import annotations

from typing import Any

import pytest

from docs_modules import import_docs_module
from inplace_recipes import bench
from inplace_recipes.bench import _consistency as consistency
from inplace_recipes.bench import _intervals as intervals
from inplace_recipes.bench import _ranking as ranking_
from inplace_recipes.bench import _statistics as statistics
from inplace_recipes.bench._measure import _add_ratios

prose = import_docs_module("performance_prose")

SIZES = bench.RANKED_SIZES
#: Rounds that spread: their fastest is 1.0, the others up to 1.6 slower.
WIDE = [1.0, 1.6, 1.5, 1.55, 1.45, 1.6, 1.5, 1.58]


def _record(entry: str, rounds: list[float], size: int, write: str, mode: str) -> dict[str, Any]:
    timing = {
        "median": sorted(rounds)[len(rounds) // 2],
        "min": min(rounds),
        "round_minima": rounds,
    }
    return {
        "device": "cpu",
        "dtype": "float32",
        "size": size,
        "write": write,
        "mode": mode,
        "entry": entry,
        "correct": True,
        "applicable": True,
        "forward": dict(timing),
        "forward_backward": dict(timing),
        "saved_bytes": 0,
        "peak_bytes": 8.0,
    }


def run(
    times: dict[str, list[float]],
    *,
    writes: tuple[str, ...] = ("row",),
    sizes: tuple[int, ...] = SIZES,
    mode: str = "eager",
) -> dict[str, Any]:
    """A run where every entry has the given rounds at every size and write."""
    records = [
        _record(entry, rounds, size, write, m)
        for write in writes
        for size in sizes
        for m in {"eager", mode}
        for entry, rounds in times.items()
    ]
    _add_ratios(records)
    return {"records": records, "config": {"writes": list(writes)}}


def steady(t: float) -> list[float]:
    return [t * (1 + 0.001 * k) for k in range(8)]


def test_ratios_and_the_self_consistency_check_use_the_fastest_round() -> None:
    results = run({"inplace": steady(1.0), "inplace_again": [1.02] + [2.0] * 7})
    again = bench.find_record(results, "inplace_again", "row", SIZES[0])
    assert again is not None
    assert again["ratio_forward_backward"] == pytest.approx(1.02)  # not the medians' 2.0
    assert again["ratio_forward_backward_median"] == pytest.approx(2.0 / 1.004, rel=1e-3)
    assert consistency.inconsistencies(results["records"]) == []


def test_a_ratio_beyond_the_band_with_overlapping_rounds_is_a_tie() -> None:
    # where's fastest round is 1.15x clone's, beyond a 10% band, but its other
    # rounds spread so far that the interval of the ratio holds 1
    results = run({"inplace": steady(1.0), "clone": steady(1.15), "where": WIDE})
    ranked = bench.ranking(results)["row"]
    assert [name for name, _ in ranked] == ["where", "clone"]
    lo, hi = ranking_.interval_between(results, "row", "clone", "where") or (0, 0)
    assert lo <= 1 <= hi
    assert bench.tied_with_fastest(ranked, 1.10) == ["where"]  # the band alone
    assert bench.tied_with_fastest(ranked, 1.10, results, "row") == ["where", "clone"]
    assert bench.preferences(results, band=1.10) == {"row": ("clone",)}
    assert bench.tied_with_slowest(ranked, 1.10, results, "row") == ["where", "clone"]


def test_rounds_that_stay_apart_are_ranked() -> None:
    results = run({"inplace": steady(1.0), "clone": steady(1.3), "where": steady(1.0)})
    ranked = bench.ranking(results)["row"]
    assert ranking_.interval_between(results, "row", "clone", "where")[0] > 1  # type: ignore[index]
    assert bench.tied_with_fastest(ranked, 1.10, results, "row") == ["where"]
    assert bench.preferences(results, band=1.10) == {"row": ("where", "clone")}
    assert bench.tied_with_slowest(ranked, 1.10, results, "row") == ["clone"]


def test_beating_the_copy_needs_an_interval_below_one() -> None:
    sizes = (10**5,)
    apart = run(
        {"inplace": steady(1.0), "inplace_on_clone": steady(1.5), "where": steady(1.0)},
        sizes=sizes,
    )
    assert statistics.floor_beaten(apart, sizes) == [("row", 10**5, ["where"])]
    spread = [1.0, 1.6, 1.6, 1.6, 1.6, 1.6, 1.6, 1.6]
    overlapping = run(
        {"inplace": steady(1.0), "inplace_on_clone": steady(1.2), "where": spread}, sizes=sizes
    )
    assert statistics.between(overlapping, "where", "inplace_on_clone", "row", 10**5)[1] > 1  # type: ignore[index]
    assert statistics.floor_beaten(overlapping, sizes) == []


def test_compiled_recipes_tie_inside_their_interval() -> None:
    results = run(
        {"inplace": steady(1.0), "clone": steady(1.15), "where": WIDE},
        sizes=(10**6,),
        mode="compile",
    )
    (line,) = prose.compiled_lines(results)
    assert "tied within the noise (where, clone)" in line
    apart = run(
        {"inplace": steady(1.0), "clone": steady(1.3), "where": steady(1.0)},
        sizes=(10**6,),
        mode="compile",
    )
    (line,) = prose.compiled_lines(apart)
    assert "the fastest compiled recipe, where," in line


def test_in_place_saves_time_only_beyond_the_interval(answer_table: Any) -> None:
    inplace = {"seconds": 1.0, "peak_bytes": 8.0, "rounds": steady(1.0)}
    apart = {"seconds": 1.5, "peak_bytes": 8.0, "rounds": steady(1.5)}
    spread = {"seconds": 1.5, "peak_bytes": 8.0, "rounds": [1.5, 0.9] + [2.0] * 6}
    assert answer_table.verdict(inplace, apart, 1.2) == "In place saves time, not memory."
    assert answer_table.verdict(inplace, spread, 1.2) == "In place saves neither time nor memory."


def test_the_noise_band_is_given_per_size() -> None:
    rounds = {"inplace": steady(1.0), "inplace_again": steady(1.05)}
    results = run(rounds, sizes=(10**3, 10**5))
    for r in results["records"]:
        if r["entry"] == "inplace_again" and r["size"] == 10**3:
            r["forward_backward"]["min"] = 1.4
    assert statistics.noise_by_size(results) == {10**3: 1.4, 10**5: 1.05}


def test_the_geometric_interval_brackets_every_configuration() -> None:
    pairs = [(steady(2.0), steady(1.0)), (steady(1.0), steady(1.0))]
    lo, hi = intervals.geometric_ratio_interval(pairs)
    assert lo == pytest.approx(2**0.5, rel=1e-3)
    assert hi == pytest.approx(2**0.5, rel=1e-3)


@pytest.mark.parametrize("factor", [1.23449, 1.23451, 1.0004, 1.9999])
def test_identical_work_ties_with_itself_at_the_band_it_sets(factor: float) -> None:
    # The performance page's live run asserts that ``inplace_again`` ties with
    # ``inplace`` at the run's own band. When that pair sets the band and its
    # rounds are apart (the interval misses 1), only the band can make the tie,
    # so the band must be the pair's exact factor: rounded to 3 decimals, a
    # factor such as 1.23449 became 1.234 and the page failed on CI.
    results = run(
        {"inplace": steady(1.0), "inplace_again": steady(factor)},
        writes=("element", "boolean"),
        sizes=(10**4,),
    )
    band = statistics.noise(results)
    assert band == pytest.approx(factor, rel=1e-12)
    again = statistics.between(results, "inplace_again", "inplace", "boolean", 10**4)
    assert not intervals.holds_one(again)  # the band alone decides
    for write in ("element", "boolean"):
        assert statistics.tie(results, "inplace_again", "inplace", write, 10**4, band)
    assert consistency.worst(results["records"]) == pytest.approx(factor, rel=1e-12)


def test_the_clone_pair_ties_with_itself_whichever_way_its_factor_is_computed() -> None:
    # The band is clone / inplace_on_clone; tie() divides their ratios to inplace,
    # (o / i) / (c / i), which differs from o / c in the last bit: a falsifying
    # reader found floor_beaten() reporting "clone beats the copy" for identical work.
    i, o, c = 2.931912904548431e-05, 7.832693891256283e-05, 6.439329103547352e-05
    results = run(
        {"inplace": steady(i), "inplace_again": steady(i), "inplace_on_clone": steady(o),
         "clone": steady(c)},
        sizes=(10**4,),
    )  # fmt: skip
    band = statistics.noise(results, [10**4])
    assert band == pytest.approx(o / c)
    assert statistics.tie(results, "clone", "inplace_on_clone", "row", 10**4, band)
    assert statistics.floor_beaten(results, [10**4]) == []


def test_clone_never_beats_the_copy_it_runs() -> None:
    # below CLONE_FROM the clone pair sets no band, and noise can time the clone
    # recipe under inplace_on_clone; it runs that very copy, so it is no candidate
    results = run(
        {"inplace": steady(1.0), "inplace_again": steady(1.0), "inplace_on_clone": steady(2.0),
         "clone": steady(1.8)},
        sizes=(10**3,),
    )  # fmt: skip
    assert statistics.floor_beaten(results, [10**3]) == []
