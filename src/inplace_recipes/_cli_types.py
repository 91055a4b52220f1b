"""Argument types for the command line: a bad value is a one-line error, never a traceback.

argparse turns the ``ArgumentTypeError`` these raise into ``usage: ...``,
``inplace-recipes compare: error: argument --size: ...`` and exit status 2.
Every subcommand's numeric options use them.

>>> positive_int("3")
3
>>> count("1e4")
10000
"""

from __future__ import annotations

import argparse
import math

__all__ = ["count", "positive_int"]


def positive_int(text: str) -> int:
    """An integer of at least 1: a size, a number of threads or rounds.

    >>> positive_int("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number of at least 1, got '0'
    """
    try:
        number = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return number


def count(text: str) -> int:
    """A whole number of at least 1 that may be written like a float: ``1e6``, ``2.5e3``.

    >>> count("1.5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a whole number of at least 1 (e.g. 1000 or 1e6), got '1.5'
    """
    problem = f"must be a whole number of at least 1 (e.g. 1000 or 1e6), got {text!r}"
    try:
        number = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(problem) from None
    if not math.isfinite(number) or number < 1 or number != int(number):
        raise argparse.ArgumentTypeError(problem)
    return int(number)
