"""Read an error message the way users paste it, into the one form the error table matches.

Users paste a message wrapped over several lines, inside a logger's or a
launcher's prefix (``[rank0]:``, ``2024-05-01 12:00:00 ERROR``), as a whole
traceback with chained exceptions, or as a warning; and each torch release
names autograd's nodes its own way (``SigmoidBackward`` up to 1.9,
``SigmoidBackward0`` from 1.10, ``Sigmoid`` from 2.13 in most messages,
``struct torch::autograd::CopySlices`` from MSVC builds). :func:`read` undoes
all of that with the rewrites of :data:`READING`, in order, so that one
pattern per wording matches every paste of it. The rewrites are data: the
site's error box applies the same table in JavaScript (``docs/error_patterns.py``
exports it), so that the box and :func:`explain` read a paste alike.

>>> read("which is output 0 of struct torch::autograd::CopySlices, is at version 2")
'which is output 0 of CopySlices, is at version 2'
>>> read("[rank0]: Output 0 of SplitBackward0 is a view and\\n[rank0]: is being modified inplace.")
'Output 0 of Split is a view and is being modified inplace.'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["READING", "Rewrite", "message_of", "read"]


@dataclass(frozen=True)
class Rewrite:
    """Replace ``pattern`` by ``replacement`` everywhere (``\\1`` names a group).

    ``multiline`` makes ``^`` match at each line's start. Patterns and
    replacements use only syntax that Python and JavaScript read alike.
    """

    why: str
    pattern: str
    replacement: str
    multiline: bool = False


#: The rewrites, applied in this order.
READING: tuple[Rewrite, ...] = (
    Rewrite(
        "Windows and old Mac line ends: one line end",
        r"\r\n?",
        "\n",
    ),
    Rewrite(
        # torchrun prefixes each line of every rank's output; pytest marks its
        # failure lines with "E   "; e-mail and forum quotes with "> "
        "a launcher's, a test runner's or a quote's mark at each line's start",
        r"^[ ]*(?:\[(?:rank|default)\d{1,5}\]:|E {2,}|>+ ?|\|)[ ]?",
        "",
        multiline=True,
    ),
    Rewrite(
        "a logger's time stamp and level at a line's start",
        r"^[ ]*\[?\d{4}-\d\d-\d\d[ T][\d:,.]{5,15}\]?[ ]*(?:-[ ]*)?(?:\[?(?:ERROR|WARNING|WARN|"
        r"INFO|DEBUG|CRITICAL)\]?)?[ ]*(?:[\w.]{1,100}:\d{1,6}\]?[ ]*)?(?:-[ ]*)?",
        "",
        multiline=True,
    ),
    Rewrite(
        "line wrapping and runs of spaces: one space",
        r"[\s\u00a0]+",
        " ",
    ),
    Rewrite(
        # MSVC's typeid names a node "struct torch::autograd::CopySlices" (or
        # "class ..."); other compilers "torch::autograd::CopySlices"
        "a node's C++ namespace and MSVC's struct or class",
        r"\b(?:struct |class )?torch::autograd::(?:generated::)?(\w)",
        "\\1",
    ),
    Rewrite(
        # the node's class name: SigmoidBackward (torch 1.9 and before),
        # SigmoidBackward0 (1.10 to 2.12; 2.13 still in some messages), Sigmoid
        # (2.13); a custom Function's node is its name + "Backward"
        'a node\'s Backward suffix after "output N of"',
        r"\b([Oo]utput \d{1,6} of )(\w{1,200}?)Backward\d{0,3}\b",
        "\\1\\2",
    ),
)


def read(message: str) -> str:
    """``message`` in the form the error table matches (see :data:`READING`)."""
    for rewrite in READING:
        flags = re.ASCII | (re.MULTILINE if rewrite.multiline else 0)
        message = re.sub(rewrite.pattern, rewrite.replacement, message, flags=flags)
    return message.strip()


def message_of(error: object) -> str:
    """The text of ``error``; an exception whose ``str()`` fails is described instead."""
    if isinstance(error, str):
        return str.__str__(error)  # a plain str, whatever a subclass's __str__ does
    if not isinstance(error, BaseException):
        raise TypeError(
            f"explain() takes an exception or its message (a str), not {type(error).__name__}"
        )
    try:
        return str(error)
    except Exception as failure:  # noqa: BLE001 - an unreadable message: say so, do not fail
        return f"<{type(error).__name__} whose str() raised {type(failure).__name__}>"
