"""Checked claims: every sentence the site says about torch, as code that runs.

A page that says "torch does X" (or "torch 2.13 gets X wrong") does not
assert it in prose alone: it calls :func:`verify` with the claim's name, which
runs a minimal repro and raises :class:`ClaimBroken`, naming the sentence,
the day torch stops doing X. The same registry is what the release
comparison runs against other torch versions (:func:`verify_all`).

A claim is registered with :func:`claim` on a function that runs the repro,
asserts the claimed behaviour with :func:`expect`, and returns a short string
of what it observed (the figures the page prints come from there).

>>> print(verify("scatter_reduce_prod_drops_tangent"))
jvp of scatter_reduce(reduce='prod') gives tangent [0.0, 0.0, 0.0]; expected [1.0, 2.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import torch

__all__ = ["CLAIMS", "Claim", "ClaimBroken", "claim", "expect", "verify", "verify_all"]


class ClaimBroken(AssertionError):
    """A claim about torch no longer holds on the torch that is running."""


@dataclass(frozen=True)
class Claim:
    """One sentence about torch and the repro that checks it."""

    name: str
    statement: str
    check: Callable[[], str]
    #: Where users report it (an upstream issue or forum thread), if anywhere.
    upstream: str = ""
    #: True when the claim is that torch has a bug: when it stops holding,
    #: torch has fixed it (and the page that says so must change).
    bug: bool = False


_CLAIMS: dict[str, Claim] = {}
#: Every registered claim, by name, in registration order.
CLAIMS: Mapping[str, Claim] = MappingProxyType(_CLAIMS)


def claim(
    name: str, statement: str, *, upstream: str = "", bug: bool = False
) -> Callable[[Callable[[], str]], Callable[[], str]]:
    """Register ``check`` as the repro behind ``statement``."""

    def register(check: Callable[[], str]) -> Callable[[], str]:
        if name in _CLAIMS:
            raise ValueError(f"claim {name!r} is registered twice")
        _CLAIMS[name] = Claim(name, statement, check, upstream, bug)
        return check

    return register


def expect(condition: bool, observed: str) -> str:
    """Return ``observed`` if ``condition`` holds, else raise :class:`ClaimBroken` with it."""
    if not condition:
        raise ClaimBroken(observed)
    return observed


def verify(name: str) -> str:
    """Run claim ``name``'s repro; return what it observed or raise :class:`ClaimBroken`.

    >>> verify("no such claim")
    Traceback (most recent call last):
        ...
    KeyError: "no claim named 'no such claim'"
    """
    try:
        found = CLAIMS[name]
    except KeyError:
        raise KeyError(f"no claim named {name!r}") from None
    try:
        return found.check()
    except ClaimBroken as broken:
        raise ClaimBroken(
            f"the site says {found.statement!r}, which no longer holds on torch "
            f"{torch.__version__}: {broken}"
        ) from None


def verify_all() -> list[dict[str, Any]]:
    """Every claim checked: one record each, for the release comparison."""
    records = []
    for found in CLAIMS.values():
        try:
            observed, holds = found.check(), True
        except Exception as error:  # a crash is an answer too: record it
            observed, holds = f"{type(error).__name__}: {error}", False
        records.append(
            {
                "name": found.name,
                "statement": found.statement,
                "bug": found.bug,
                "upstream": found.upstream,
                "holds": holds,
                "observed": observed,
            }
        )
    return records


# -- the claims -------------------------------------------------------------
# Keep each repro minimal: it is what a reader would paste into an upstream issue.


@claim(
    "scatter_reduce_prod_drops_tangent",
    "torch's scatter_reduce(reduce='prod') drops the forward-mode tangent of its input",
    bug=True,
)
def _scatter_reduce_prod_drops_tangent() -> str:
    x = torch.tensor([1.0, 2.0, 3.0])
    src = torch.tensor([2.0])
    index = torch.tensor([1])
    _, tangent = torch.func.jvp(
        lambda a: a.scatter_reduce(0, index, src, reduce="prod"), (x,), (torch.ones(3),)
    )
    # d/da of [a0, a1 * 2, a2] along ones is [1, 2, 1]
    expected = [1.0, 2.0, 1.0]
    got = tangent.tolist()
    return expect(
        got != expected,
        f"jvp of scatter_reduce(reduce='prod') gives tangent {got}; expected {expected}",
    )
