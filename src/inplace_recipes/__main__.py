"""Command line: ``python -m inplace_recipes {compare,bench,matrix,audit}``."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

COMMANDS = {
    "compare": "the gradient comparison table for the classic example",
    "bench": "benchmark every recipe against the in-place baseline",
    "matrix": "the compatibility matrix of every recipe and at[]",
    "audit": "run a script unchanged and report its in-place writes",
}


def compare(argv: Sequence[str]) -> int:
    """Print the table for ``c = a * 1; c[0] = 42`` with every recipe."""
    import torch

    from .compare import compare_gradients

    parser = argparse.ArgumentParser(
        prog="inplace-recipes compare", description=COMMANDS["compare"]
    )
    parser.add_argument("--size", type=int, default=3, help="elements of the 1-D tensor")
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    x = torch.rand(args.size, requires_grad=True) * 1
    report = compare_gradients(x, 0, 42.0, second_order=True, gradcheck=True)
    print(f"y = x.clone(); y[0] = 42.0 with x of shape {list(x.shape)}, torch {torch.__version__}")
    print(report)
    return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in {"-h", "--help"} or argv[0] not in COMMANDS:
        print("usage: python -m inplace_recipes {" + ",".join(COMMANDS) + "} [options]\n")
        for name, text in COMMANDS.items():
            print(f"  {name:8} {text}")
        return 0 if not argv or argv[0] in {"-h", "--help"} else 2
    command, rest = argv[0], argv[1:]
    if command == "compare":
        return compare(rest)
    if command == "audit":  # a module of the auditing package
        from .auditing.cli import main as audit_main

        return audit_main(rest)
    module = importlib.import_module(f"inplace_recipes.{command}")
    return int(module.main(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
