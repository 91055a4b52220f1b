"""Aligned plain-text tables, for reports printed in a terminal or on a page.

>>> print(text_table(["recipe", "ok"], [["where", "yes"], ["index_put", "yes"]]))
recipe     ok
---------  --
where      yes
index_put  yes
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["text_table"]


def text_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    below: Sequence[Sequence[str]] | None = None,
) -> str:
    """``rows`` in columns two spaces apart under ``header`` and a dashed rule.

    The last column is free text: not padded, and its rule only as wide as
    its header, so a long message there widens nothing. ``below[i]`` are lines printed under row ``i``, indented past
    the first column.

    >>> print(text_table(["#", "what"], [["1", "a write"]], below=[["fix: y = ..."]]))
    #  what
    -  ----
    1  a write
       fix: y = ...
    """
    table = [list(header), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = []
    for n, row in enumerate(table):
        cells = [cell.ljust(w) for cell, w in zip(row[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in [*widths[:-1], len(row[-1])]))
        elif below is not None:
            lines += [" " * (widths[0] + 2) + extra for extra in below[n - 1]]
    return "\n".join(lines)
