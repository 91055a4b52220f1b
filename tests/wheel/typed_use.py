"""A user's typed code: ``nox -s build`` runs ``mypy --strict`` on it against the installed wheel."""

import torch
from torch import Tensor

import inplace_recipes as ir
from inplace_recipes import RECIPES, at, compare_gradients
from inplace_recipes.compare import GradientReport

x: Tensor = torch.rand(3, requires_grad=True) * 1
y: Tensor = RECIPES["index_put"](x, 0, 42.0)
z: Tensor = at(x)[torch.tensor([0, 2])].add(1.0)
w: Tensor = ir.where(x, 1, 0.0)
report: GradientReport = compare_gradients(x, 0, 42.0)
ok: bool = report.ok and ir.__version__ > ""
