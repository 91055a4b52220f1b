"""Every refusal a recipe makes by design is shown by a doctest of the package (issue 28).

The probes below are one write of each kind a record can refuse (an index
tensor, a mask, a value of several elements, one value that requires grad at
duplicate positions, a mask batched by ``vmap``), run through every recipe.
Each refusal message they draw must be the expected exception of some
doctest in ``inplace_recipes``, word for word, with its class: a new
refusal, or a reworded one, fails here until a docstring shows it. The
refusals ``clone`` inherits from torch's own setitem under ``vmap`` (its
pitfall) are held to a doctest the same way.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import traceback
from collections.abc import Callable
from typing import Any

import pytest
import torch

import inplace_recipes
from inplace_recipes import RECIPES, NotApplicable, clone_setitem

Probe = Callable[[Callable[..., torch.Tensor]], object]


def _batched_masks(recipe: Callable[..., torch.Tensor]) -> object:
    masks = torch.tensor([[True, False], [False, True]])
    return torch.func.vmap(lambda x, m: recipe(x, m, 1.0))(torch.zeros(2, 2), masks)


#: One write per kind of refusal the records name (``RecipeRecord.refusal``).
PROBES: dict[str, Probe] = {
    "an index tensor": lambda r: r(torch.zeros(3), torch.tensor([0, 2]), 1.0),
    "a mask": lambda r: r(torch.zeros(3), torch.tensor([True, False, True]), 1.0),
    "a list": lambda r: r(torch.zeros(3), [0, 2], 1.0),
    "a value of several elements": lambda r: r(torch.zeros(3), [0, 1], torch.tensor([1.0, 2.0])),
    "one value that requires grad at duplicate positions": lambda r: r(
        torch.zeros(3), torch.tensor([0, 0]), torch.tensor(1.0, requires_grad=True)
    ),
    "a mask batched by vmap": _batched_masks,
}


def _doctested_errors() -> set[str]:
    """``Class: message`` of every doctest example of the package that expects an exception."""
    found: set[str] = set()
    finder = doctest.DocTestFinder()
    names = [inplace_recipes.__name__] + [
        m.name for m in pkgutil.walk_packages(inplace_recipes.__path__, "inplace_recipes.")
    ]
    for name in names:
        module = importlib.import_module(name)
        for test in finder.find(module):
            found.update(e.exc_msg.strip() for e in test.examples if e.exc_msg)
    return found


DOCTESTED = _doctested_errors()


def _shown(error: BaseException) -> bool:
    """Whether a doctest expects ``error``, as doctest itself formats it (``...`` allowed)."""
    got = traceback.format_exception_only(type(error), error)[-1].strip()
    checker = doctest.OutputChecker()
    return any(checker.check_output(want, got, doctest.ELLIPSIS) for want in DOCTESTED)


def _refusals() -> list[tuple[str, str, NotApplicable]]:
    drawn = []
    for name, recipe in RECIPES.items():
        for probe_name, probe in PROBES.items():
            try:
                probe(recipe)
            except NotApplicable as error:
                drawn.append((name, probe_name, error))
            except Exception:  # noqa: BLE001, S112  torch's own error: not a refusal of ours
                continue
    return drawn


REFUSALS = _refusals()


def test_the_probes_draw_every_kind_of_refusal_the_records_name() -> None:
    """The probes reach each refusal of the rule: the index kind, the single value, the
    duplicates with grad and the batched mask (so that the next test is over all of them)."""
    kinds = {
        "takes only": "index kind",
        "writes a single value": "single value",
        "duplicate positions": "duplicates",
        "batched by torch.func.vmap": "batched mask",
    }
    reached = {kind for phrase, kind in kinds.items() for *_, e in REFUSALS if phrase in str(e)}
    assert reached == set(kinds.values())


@pytest.mark.parametrize(
    ("name", "probe", "error"), REFUSALS, ids=[f"{n}-{p}" for n, p, _ in REFUSALS]
)
def test_each_refusal_is_shown_by_a_doctest(name: str, probe: str, error: NotApplicable) -> None:
    assert isinstance(error, (TypeError, ValueError)), type(error).__mro__
    assert _shown(error), f"no doctest of the package shows {name}'s refusal of {probe}: {error}"


@pytest.mark.parametrize(
    "write",
    [
        lambda: torch.func.vmap(lambda v: clone_setitem(torch.zeros(3), 0, v))(torch.ones(2)),
        lambda: _batched_masks(clone_setitem),
    ],
    ids=["a batched value into an unbatched x", "a batched mask"],
)
def test_the_clone_recipes_vmap_pitfall_is_shown_by_a_doctest(write: Callable[[], Any]) -> None:
    with pytest.raises(RuntimeError) as caught:
        write()
    assert _shown(caught.value), caught.value


def test_an_undocumented_refusal_fails_here() -> None:
    """The check can fail: a reworded refusal is shown by no doctest."""
    assert not _shown(NotApplicable("recipe 'where' takes only ints (advanced index)"))
