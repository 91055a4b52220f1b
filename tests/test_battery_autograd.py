"""Issue 28's battery, derivatives: reverse mode, double backward, ``torch.func.jvp``,
dual tensors, ``torch.func.grad`` and autograd contexts, against torch's own write.

Sampled by default; every case under ``HYPOTHESIS_PROFILE=thorough`` (``tests/battery/``).
"""

from __future__ import annotations

import pytest

from battery.axes import selected
from battery.checks import check
from battery.spec import Case

pytestmark = pytest.mark.battery


@pytest.mark.parametrize("case", selected("autograd"), ids=str)
def test_autograd(case: Case) -> None:
    check(case)


@pytest.mark.parametrize("case", selected("contexts"), ids=str)
def test_contexts(case: Case) -> None:
    check(case)
