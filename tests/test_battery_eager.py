"""Issue 28's battery, eager axes: dtypes, edge values, every index and value shape,
extreme indices, meta tensors, layouts, subclasses, sparse tensors, repeated positions.

Each case is one writer (a recipe or an ``at()`` op) against torch's own
``y = x.clone(); y[i] = v`` (or ``y[i] op= v``), exception class included; see
``tests/battery/``. The default run takes a deterministic sample of each axis;
``HYPOTHESIS_PROFILE=thorough`` runs every case.
"""

from __future__ import annotations

import pytest

from battery.axes import selected
from battery.checks import check
from battery.spec import Case

pytestmark = pytest.mark.battery


@pytest.mark.parametrize("case", selected("dtypes"), ids=str)
def test_dtypes(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("literals"), ids=str)
def test_literals(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("indices"), ids=str)
def test_indices(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("extremes"), ids=str)
def test_extremes(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("devices"), ids=str)
def test_devices(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("layouts"), ids=str)
def test_layouts(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("subclasses"), ids=str)
def test_subclasses(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("sparse"), ids=str)
def test_sparse(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("repeats"), ids=str)
def test_repeats(case: Case) -> None:
    check(case)
