"""A wrong use that ``mypy --strict`` must refuse against the installed wheel: it sees real types."""

import torch

from inplace_recipes import compare_gradients

ok: str = compare_gradients(torch.rand(3), 0, 1.0).ok
