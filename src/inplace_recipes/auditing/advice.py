"""What to call a write, and the one line that removes it, written for the user's line.

A write made inside torch (an optimizer's ``addcdiv_``, ``Embedding(max_norm=...)``'s
renorm, ``nn.ReLU(inplace=True)``) is advised at the line that called torch:
move the step, pass a clone, build the module with ``inplace=False``.

>>> label("__iadd__", {}, None)
'x += ...'
>>> import torch
>>> short_path(torch.nn.functional.__file__)  # a library file: from its sys.path entry
'torch/nn/functional.py'
"""

from __future__ import annotations

import linecache
import os
import re
import sys
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from .recorder import Write

__all__ = ["HARMFUL", "HARMLESS", "fix_for", "label", "out_of_place", "short_path"]

#: Consequences that need a fix, worst first.
HARMFUL = ("wrong gradients", "backward fails", "raises")
#: Consequences that need none: summarised on one line each.
HARMLESS = ("fails if backward again", "safe")

_DUNDER = {
    "__iadd__": "+",
    "__isub__": "-",
    "__imul__": "*",
    "__itruediv__": "/",
    "__ifloordiv__": "//",
    "__imod__": "%",
    "__ipow__": "**",
    "__imatmul__": "@",
    "__iand__": "&",
    "__ior__": "|",
    "__ixor__": "^",
    "__ilshift__": "<<",
    "__irshift__": ">>",
}


def short_path(file: str) -> str:
    """``file`` relative to the working directory, else to its ``sys.path`` entry; never absolute.

    Library files read as their import path (``torch/optim/adamw.py``).
    """
    if not os.path.isabs(file):
        return file
    cwd = os.getcwd() + os.sep
    if file.startswith(cwd):
        return file[len(cwd) :]
    roots = [os.path.abspath(p) + os.sep for p in sys.path if p]
    roots += [os.path.dirname(os.path.dirname(os.path.dirname(__file__))) + os.sep]
    best = max((r for r in roots if file.startswith(r)), key=len, default=None)
    if best is not None:
        return file[len(best) :]
    return os.path.basename(file)


#: The in-place method Python calls for an augmented assignment.
_AUGMENTED = {"add_": "+", "sub_": "-", "mul_": "*", "div_": "/", "pow_": "**"}


def label(name: str, kwargs: dict[str, Any], module: Any, code: str = "") -> str:
    """How the report names the call that wrote; ``code`` is the source line.

    >>> label("add_", {}, None, "out += identity")
    'x += ...'
    """
    if module is not None and getattr(module, "inplace", False) is True:
        return f"{type(module).__name__}(inplace=True)"
    if name == "__setitem__":
        return "x[...] = v"
    if name in _DUNDER:
        return f"x {_DUNDER[name]}= ..."
    if module is None and name in _AUGMENTED and f"{_AUGMENTED[name]}=" in code:
        return f"x {_AUGMENTED[name]}= ..."
    if kwargs.get("out") is not None:
        return f"{name}(out=...)"
    if kwargs.get("inplace"):
        return f"{name}(inplace=True)"
    return name


def fix_for(write: Write) -> str:
    """One line that removes ``write``'s harm, written for the user's line."""
    fix = _fix_for(write)
    if write.in_function and write.kind == "non-leaf under no_grad":
        fix += "  # or keep the write: ctx.mark_dirty() the tensor and return it"
    return fix


def _fix_for(write: Write) -> str:
    saved_at = _saved_at(write)
    if write.inside is not None:
        return _fix_inside(write, saved_at)
    name, kwargs = write.name, write.call_kwargs
    code = linecache.getline(write.file, write.line).split("#")[0].strip()
    if write.alias_of_leaf:
        found = re.fullmatch(rf"([\w.]+)\.data\.{re.escape(name)}\((.*)\)", code)
        edit = f"{found[1]}.{name}({found[2]})" if found else f"p.{name}(...)"
        return f"with torch.no_grad(): {edit}  # not .data; {_moved(write)}"
    if write.kind == "non-leaf under no_grad" and not write.in_function:
        return "compute it out of place outside no_grad, or on a .clone()"
    if name == "__setitem__":
        found = re.fullmatch(r"([\w.]+)\[(.+)\]\s*=\s*(.+)", code)
        if found:
            target, index, value = found.groups()
            return f"{target} = inplace_recipes.at({target})[{index}].set({value})"
        return _setitem(write.call_args)
    if write.label.startswith("x ") and write.label.endswith("= ..."):
        symbol = write.label.split()[1][:-1]
        found = re.fullmatch(rf"([\w.]+)\s*{re.escape(symbol)}=\s*(.+)", code)
        if found:
            target, value = found.groups()
            return f"{target} = {target} {symbol} {value}"
        return f"x = x {symbol} y  # not x {symbol}= y"
    found = re.fullmatch(
        rf"(?:([\w.]+)\s*=\s*)?([\w.]+?)(?:\.data|\.detach\(\))?\.{re.escape(name)}\((.*)\)", code
    )
    if found and name.endswith("_") and not name.startswith("_"):
        assigned, target, arguments = found.groups()
        if assigned in (None, target):
            return f"{target} = {out_of_place(name, target, arguments, write.same_source)}"
    if kwargs.get("out") is not None:
        if hasattr(torch, name):
            return f"y = torch.{name}(...)  # without out="
        return "y = a new tensor from the op, without out="
    if kwargs.get("inplace"):
        if hasattr(torch.nn.functional, name):
            return f"x = torch.nn.functional.{name}(x)  # inplace=False"
        return "pass inplace=False"
    if name.endswith("_") and not name.startswith("_"):
        return f"x = {out_of_place(name, 'x', '...')}  # not x.{name}(...){saved_at}"
    if hasattr(torch, name):
        return f"x = torch.{name}(...)  # out of place"
    return f"run this line after the last backward that needs the old values, or pass a .clone(){saved_at}"


def out_of_place(name: str, target: str, arguments: str, same_source: bool = False) -> str:
    """An expression with the values of ``target.name(arguments)``, in a new tensor.

    ``target`` itself is left unchanged. An op with no out-of-place method runs on a
    new tensor. ``same_source``: ``copy_``'s source has the target's shape, dtype and device.

    >>> out_of_place("clamp_", "y", "min=0")
    'y.clamp(min=0)'
    >>> out_of_place("fill_", "y", "1.0")
    'torch.full_like(y, 1.0)'
    >>> out_of_place("copy_", "buffer", "batch", same_source=True)
    'batch.clone()'
    >>> out_of_place("uniform_", "y", "")
    'y.clone().uniform_()'
    """
    if name == "copy_":
        if same_source and re.fullmatch(r"[\w.]+", arguments):
            return f"{arguments}.clone()"
        return f"torch.empty_like({target}).copy_({arguments})"
    if name == "zero_":
        return f"torch.zeros_like({target})"
    if name == "fill_" and arguments not in ("", "..."):
        return f"torch.full_like({target}, {arguments})"
    method = name[:-1]
    if hasattr(torch.Tensor, method) and method not in _NOT_THE_SAME:
        return f"{target}.{method}({arguments})"
    return f"{target}.clone().{name}({arguments})"


#: Out-of-place methods that exist but do not compute what the in-place one does.
_NOT_THE_SAME = frozenset(
    {"detach", "requires_grad", "resize", "set", "share_memory", "fill", "copy"}
)


def _fix_inside(write: Write, saved_at: str) -> str:
    inside = write.inside or ""
    if write.module is not None and getattr(write.module, "inplace", False) is True:
        kind = type(write.module).__name__
        return f"build {write.module_name or 'it'} as nn.{kind}(inplace=False)"
    if f"{os.sep}optim{os.sep}" in inside:
        at = _last_backward(write)
        where = f"after line {at}, " if at else "after "
        return f"run this step {where}the last backward that needs the old values{saved_at}"
    if write.name == "embedding" or write.name.startswith("embedding_renorm"):
        return (
            "Embedding(max_norm=...) renormalises its weight in place: "
            f"use weight.clone() in the other use of the weight{saved_at}"
        )
    return f"run this line after the last backward that needs the old values, or pass a .clone(){saved_at}"


def _saved_at(write: Write) -> str:
    if not write.nodes:
        return ""
    node = write.nodes[0]
    return f" (saved at {short_path(node.where[0])}:{node.where[1]})"


def _last_backward(write: Write) -> int | None:
    """The line of the last backward that ran through a node whose tensor ``write`` changed."""
    at = next((n.backward_at for n in reversed(write.nodes) if n.backward_at), None)
    return None if at is None or at[0] != write.file else at[1]


def _moved(write: Write) -> str:
    at = _last_backward(write)
    if at is not None:
        return f"move it below line {at}, the backward that uses the old value"
    if write.nodes:
        return f"move it below the backward of the graph made at line {write.nodes[0].where[1]}"
    return "move it where no graph uses the old value"


def _setitem(args: tuple[Any, ...]) -> str:
    recipe = "select_scatter"
    if len(args) >= 3:
        from ..recommend import best_recipe

        try:
            recipe = best_recipe(args[0], args[1], args[2])
        except Exception:  # noqa: BLE001 - a suggestion must never fail the audit
            recipe = "where"
    return f'x = inplace_recipes.RECIPES["{recipe}"](x, index, value)  # not x[index] = value'
