"""best_recipe names a recipe that agrees with the reference for every kind of index."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import inplace_recipes as ir
from docs_modules import import_docs_module
from inplace_recipes._pick import PREFERENCES, best_recipe, write_kind

committed = import_docs_module("committed")


def _mask() -> torch.Tensor:
    mask = torch.zeros(4, 5, dtype=torch.bool)
    mask[0, 1] = mask[2, 3] = mask[3, 0] = True
    return mask


CASES: list[tuple[str, Any, Any]] = [
    ("element", (1, 2), 42.0),
    ("element, tensor value", (1, 2), torch.tensor(3.0, requires_grad=True)),
    ("row", 1, 42.0),
    ("row, value row", 1, torch.rand(5, requires_grad=True)),
    ("column", (slice(None), 2), 42.0),
    ("slice with step", (slice(None), slice(1, None, 2)), 42.0),
    ("slice, value", (slice(None), slice(1, None, 2)), torch.rand(4, 2, requires_grad=True)),
    ("ellipsis and None", (..., None, 3), 42.0),
    ("whole tensor", ..., 42.0),
    ("boolean", _mask(), 42.0),
    ("mask, values", _mask(), torch.rand(3, requires_grad=True)),
    ("row mask", torch.tensor([True, False, True, False]), 42.0),
    ("index tensor", torch.tensor([0, 3]), 42.0),
    ("index tensors", (torch.tensor([0, 3]), torch.tensor([1, 4])), torch.rand(2)),
    ("duplicates", torch.tensor([1, 1]), torch.rand(2, 5, requires_grad=True)),
    ("mixed", (torch.tensor([0, 2]), slice(1, 3)), 42.0),
]


@pytest.mark.parametrize(("label", "index", "value"), CASES, ids=[c[0] for c in CASES])
def test_best_recipe_is_correct(label: str, index: Any, value: Any) -> None:
    x = torch.rand(4, 5, requires_grad=True) * 1
    name = best_recipe(x, index, value)
    assert name in ir.RECIPES
    result = ir.compare_gradients(x, index, value, [name])[name]
    assert result.not_applicable is None, (label, name, result.not_applicable)
    assert result.ok, (label, name, result.problems)


def test_duplicates_fall_back_to_the_reference() -> None:
    assert best_recipe(torch.zeros(4), torch.tensor([1, 1]), 0.0) == "clone"


def test_every_preference_names_a_recipe_and_ends_with_clone() -> None:
    for prefs in PREFERENCES.values():
        assert set(prefs) <= set(ir.RECIPES)
        assert prefs[-1] == "clone"


def test_write_kinds() -> None:
    x = torch.zeros(4, 5)
    assert write_kind(x, (1, 2)) == "element"
    assert write_kind(x, 1) == "row"
    assert write_kind(x, (slice(None), slice(None, None, 2))) == "slice"
    assert write_kind(x, _mask()) == "boolean"
    assert write_kind(x, torch.tensor([0])) == "advanced"


def test_at_default_is_exported() -> None:
    assert ir.best_recipe is best_recipe


def test_preferences_follow_the_committed_measurements() -> None:
    """Re-running the benchmark can change the choice: then PREFERENCES must follow."""
    from inplace_recipes.bench import preferences

    chosen = preferences(committed.bench_results())
    # index tensors and lists are one kind of write for best_recipe: "advanced"
    key = {"index": "advanced", "list": "advanced"}
    assert chosen == {write: PREFERENCES[key.get(write, write)] for write in chosen}


def _ranked_run(ratios: dict[str, float], *, noise: float) -> dict[str, Any]:
    """A run of one write (row) whose same-work pairs disagree by ``noise``."""
    rows = [*ratios.items(), ("inplace", 1.0), ("inplace_again", noise)]
    return {
        "records": [
            {
                "device": "cpu",
                "dtype": "float32",
                "mode": "eager",
                "size": 10**6,
                "write": "row",
                "entry": entry,
                "correct": True,
                "ratio_forward_backward": ratio,
                "forward_backward": {"median": ratio},
            }
            for entry, ratio in rows
        ]
    }


@pytest.mark.parametrize(
    ("ratios", "noise", "pick"),
    [
        ({"select_scatter": 1.29, "clone": 1.36}, 1.2, ("clone",)),  # a tie: clone
        ({"select_scatter": 1.0, "clone": 1.36}, 1.2, ("select_scatter", "clone")),
        ({"select_scatter": 1.29, "clone": 1.36}, 1.02, ("select_scatter", "clone")),
        ({"where": 1.5, "clone": 1.2}, 1.02, ("clone",)),
    ],
)
def test_preferences_rank_only_outside_the_noise_band(
    ratios: dict[str, float], noise: float, pick: tuple[str, ...]
) -> None:
    from inplace_recipes.bench import preferences

    assert preferences(_ranked_run(ratios, noise=noise)) == {"row": pick}


def test_ranking_counts_recipes_only() -> None:
    """Baselines, raw one-liners and at() are measured beside the recipes, never recommended."""
    from inplace_recipes.bench import ranking

    records = [
        {
            "device": "cpu",
            "dtype": "float32",
            "mode": "eager",
            "size": 10**6,
            "write": "row",
            "entry": entry,
            "correct": True,
            "ratio_forward_backward": ratio,
        }
        for entry, ratio in [
            ("inplace", 1.0),
            ("inplace_again", 0.9),
            ("inplace_on_clone", 1.1),
            ("raw_where", 0.5),
            ("at", 0.6),
            ("where", 2.0),
            ("clone", 1.2),
        ]
    ]
    assert ranking({"records": records}, sizes=[10**6]) == {"row": [("clone", 1.2), ("where", 2.0)]}
