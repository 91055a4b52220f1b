"""``inplace-recipes compare``: every recipe against clone + setitem, as a table.

The classic example ``c = a * 1; c[0] = 42`` on a 1-D tensor of ``--size``
elements: results, gradients, gradients of gradients and
:func:`torch.autograd.gradcheck` (a random projection above
:data:`~inplace_recipes.compare.FULL_GRADCHECK_MAX` elements, so the work
grows linearly with the size). Exit status 0 when every recipe agrees, 1
when one does not, 2 for a bad option.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ._cli_types import count

__all__ = ["MAX_SIZE", "main"]

#: A million elements take about a minute; more only takes longer, and finds nothing new.
MAX_SIZE = 1_000_000


def _size(text: str) -> int:
    size = count(text)
    if size > MAX_SIZE:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SIZE:,}, got {text!r}")
    return size


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inplace-recipes compare",
        description="Check every recipe against y = x.clone(); y[0] = 42.0, forward and backward.",
    )
    parser.add_argument(
        "--size", type=_size, default=3, help="elements of the 1-D tensor x (default 3)"
    )
    parser.add_argument(
        "--gradcheck",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run torch.autograd.gradcheck and gradgradcheck in float64 (default on)",
    )
    parser.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="name each recipe on stderr as it runs (default: when stderr is a terminal)",
    )
    return parser


def _reporter(total: int) -> tuple[Callable[[str], object], Callable[[], None]]:
    """Name each recipe on stderr as it starts: a tqdm bar when tqdm is installed, else a line."""
    try:
        from tqdm import tqdm
    except ImportError:
        started = [0]

        def line(name: str) -> None:
            started[0] += 1
            sys.stderr.write(f"[{started[0]}/{total}] {name}\n")

        return line, lambda: None
    bar = tqdm(total=total, unit="recipe", file=sys.stderr, leave=False)
    started = [0]

    def step(name: str) -> None:
        bar.update(started[0] - bar.n)  # the recipes before this one are done
        started[0] += 1
        bar.set_description(name)

    def close() -> None:
        bar.update(total - bar.n)
        bar.close()

    return step, close


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table; 0 when every recipe agrees with the reference."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    import torch

    from .compare import compare_gradients
    from .recipes import RECIPES

    show = sys.stderr.isatty() if args.progress is None else args.progress
    step, finish = _reporter(len(RECIPES)) if show else (None, lambda: None)
    torch.manual_seed(0)
    x = torch.rand(args.size, requires_grad=True) * 1
    try:
        report = compare_gradients(
            x, 0, 42.0, second_order=True, gradcheck=args.gradcheck, progress=step
        )
    finally:
        finish()
    sys.stdout.write(
        f"y = x.clone(); y[0] = 42.0 with x of shape {list(x.shape)}, torch {torch.__version__}\n"
        f"{report}\n"
    )
    return 0 if report.ok else 1
