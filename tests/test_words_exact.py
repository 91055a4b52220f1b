"""The general words of issue 28's sentences (README's rule, the ``at[]`` page), each
checked over the set it names (``docs/general_words/exact.json``)."""

from __future__ import annotations

import contextlib
import sys
from typing import Any

import pytest
import torch

import inplace_recipes as ir
from inplace_recipes import _pick, at
from inplace_recipes._pick import best_recipe, quick_recipe
from inplace_recipes.recipes import RECORDS, _value
from test_words_situation_pages import INDEX_KINDS


def _spy_on_setitem_value(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every call of the one casting rule, in every module that imported it."""
    calls: list[Any] = []
    original = _value.setitem_value

    def spy(x: torch.Tensor, index: Any, plan: Any, value: Any, **kwargs: Any) -> Any:
        calls.append(value)
        return original(x, index, plan, value, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "setitem_value", None) is original:
            monkeypatch.setattr(module, "setitem_value", spy)
    return calls


@pytest.mark.parametrize("kind", list(INDEX_KINDS))
def test_what_set_min_and_max_write_goes_through_the_one_casting_rule(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The at[] page: "what ``set``, ``min`` and ``max`` write goes through setitem's
    one rule for casting a value". Over every index kind of the index-model check,
    a float64 value into a float32 ``x``: every planned recipe, ``at[].set``,
    ``min`` and ``max`` call ``recipes._value.setitem_value``; the one recipe
    that does not plan (``clone``, torch's own setitem) is where ``set`` or the
    write after ``min``/``max`` picked it."""
    index = INDEX_KINDS[kind]
    x = torch.arange(24.0).view(2, 3, 4)
    shape = x[index].shape
    value = torch.linspace(1.0, 2.0, max(shape.numel(), 1), dtype=torch.float64).reshape(shape)
    calls = _spy_on_setitem_value(monkeypatch)
    writers = {
        **{
            f"at[].{m}": (lambda m=m: getattr(at(x)[index], m)(value))
            for m in ("set", "min", "max")
        },
        **{
            f"RECIPES[{n!r}]": (lambda n=n: ir.RECIPES[n](x, index, value))
            for n, record in RECORDS.items()
            if record.planned
        },
    }
    assert {n for n, r in RECORDS.items() if not r.planned} == {"clone"}
    for name, write in writers.items():
        calls.clear()
        with contextlib.suppress(RuntimeError, ir.UnsupportedIndexError, ir.UnsupportedValueError):
            write()  # index tensors refuse another dtype: torch's error, from the rule
        if not calls:  # torch's own setitem, where the write picked the clone recipe
            assert name.startswith("at[]"), f"{name} wrote a {kind} value without the rule"
            assert (quick_recipe(index, value) or best_recipe(x, index, value)) == "clone", name


@pytest.mark.parametrize("kind", list(INDEX_KINDS))
@pytest.mark.parametrize("form", ["number", "one element", "tensor", "tensor requiring grad"])
def test_best_recipe_never_picks_a_recipe_that_is_not_exact(
    kind: str, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """README: "`best_recipe` never picks it" (a recipe whose record declares
    ``not_exact``), over every index kind of the index-model check and every form
    of value, eager and inside ``torch.func.vmap``, with such a recipe ranked first
    for every kind of write (so that its record, not the ranking, keeps it out)."""
    index = INDEX_KINDS[kind]
    x = torch.arange(24.0).view(2, 3, 4)
    shape = x[index].shape
    value: Any = {
        "number": 1.5,
        "one element": torch.tensor(1.5),
        "tensor": torch.ones(shape),
        "tensor requiring grad": torch.ones(shape, requires_grad=True),
    }[form]
    inexact = {name for name, record in RECORDS.items() if record.not_exact}
    assert inexact == {"mask"}, "the README names the mask blend alone"
    ranked = {
        k: [*sorted(inexact), *(n for n in names if n not in inexact)]
        for k, names in _pick.PREFERENCES.items()
    }
    monkeypatch.setattr(_pick, "PREFERENCES", ranked)
    assert best_recipe(x, index, value) not in inexact
    if isinstance(value, torch.Tensor) and kind not in ("mask", "mask of some dims"):
        picks: list[str] = []
        torch.func.vmap(lambda v: picks.append(best_recipe(x, index, v)) or v)(
            torch.stack([value.detach(), value.detach()])
        )
        assert picks
        assert picks[0] not in inexact
