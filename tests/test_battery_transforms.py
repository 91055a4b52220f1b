"""Issue 28's battery, transforms: ``torch.func.vmap`` with each argument batched
(forward and backward through it) against a loop over the examples, and
``torch.compile(fullgraph=True)`` under aot_eager and inductor, static and
``dynamic=True``, with torch's own clone + setitem compiled as the control.

Sampled by default (one compile case per writer); every case under
``HYPOTHESIS_PROFILE=thorough`` (``tests/battery/``).
"""

from __future__ import annotations

import pytest

from battery.axes import selected
from battery.checks import check
from battery.spec import Case

pytestmark = pytest.mark.battery


@pytest.mark.parametrize("case", selected("vmap"), ids=str)
def test_vmap(case: Case) -> None:
    check(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", selected("compile"), ids=str)
def test_compile(case: Case) -> None:
    check(case)
