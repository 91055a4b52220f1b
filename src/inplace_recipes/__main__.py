"""Command line: ``python -m inplace_recipes <command> [options]``.

Every subcommand is registered once, in :data:`SUBCOMMANDS`: a module with
``main(argv: Sequence[str] | None) -> int`` that parses its own options
(``prog="inplace-recipes <command>"``, argument types from
:mod:`inplace_recipes.cli`) and returns the exit status. An unknown command
or option is named in a one-line error and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["SUBCOMMANDS", "Subcommand", "available", "main"]


@dataclass(frozen=True)
class Subcommand:
    """Where a subcommand lives and what it does, in one line for ``--help``."""

    module: str
    summary: str


#: Every subcommand, in ``--help`` order. To add one, add a line here.
SUBCOMMANDS: dict[str, Subcommand] = {
    "compare": Subcommand(
        "inplace_recipes._compare_cli", "check every recipe against clone + setitem"
    ),
    "matrix": Subcommand(
        "inplace_recipes.matrix", "which recipe works under which transform and dtype"
    ),
    "bench": Subcommand(
        "inplace_recipes.bench._cli", "benchmark every recipe against the in-place baseline"
    ),
    # Listed once its module exists (issue 13: `audit train.py [args...]`).
    "audit": Subcommand(
        "inplace_recipes.auditing._cli", "run a script and report its in-place writes"
    ),
}


def _exists(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # the parent is a module, not a package
        return False


def available() -> dict[str, Subcommand]:
    """The subcommands whose module is installed."""
    return {name: sub for name, sub in SUBCOMMANDS.items() if _exists(sub.module)}


def _parser(commands: dict[str, Subcommand]) -> argparse.ArgumentParser:
    lines = "\n".join(f"  {name:9} {sub.summary}" for name, sub in commands.items())
    return argparse.ArgumentParser(
        prog="inplace-recipes",
        usage="inplace-recipes <command> [options]",
        description="Out-of-place alternatives to x[index] = value under autograd.",
        epilog=f"commands:\n{lines}\n\n'inplace-recipes <command> --help' shows its options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def _run(argv: list[str]) -> int:
    commands = available()
    parser = _parser(commands)
    if not argv:
        parser.error(f"say which command to run: {', '.join(commands)}")
    first = argv[0]
    if first in ("-h", "--help"):
        parser.print_help()
        return 0
    if first.startswith("-"):
        parser.error(f"unrecognized option {first!r}; options go after the command")
    if first not in commands:
        parser.error(f"unknown command {first!r}; choose from {', '.join(commands)}")
    module = importlib.import_module(commands[first].module)
    return int(module.main(argv[1:]) or 0)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the subcommand ``argv[0]`` with the rest; return its exit status.

    argparse's exits (``--help``: 0, a bad option: 2) are returned, not raised.
    """
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
