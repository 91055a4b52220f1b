"""What to call a write, and the one line that removes it, written for the user's line.

A write made inside torch (an optimizer's ``addcdiv_``, ``Embedding(max_norm=...)``'s
renorm, ``nn.ReLU(inplace=True)``) is advised at the line that called torch:
move the step, pass a clone, build the module with ``inplace=False``.

Each fix is a :class:`Fix`: the line the report prints, and, when the fix is
a change of code, the :data:`edit <Fix.edit>` that ``audit --fix`` applies
(:mod:`.rewrite`); a fix that is advice (move a step, clone in another use)
has none.

Reads the records (:mod:`.records`); the recorder calls it, and it calls nothing back.

>>> label("__iadd__", {}, None)
'x += ...'
"""

from __future__ import annotations

import ast
import linecache
import os
import re
from dataclasses import dataclass
from typing import Any

import torch

from ._paths import user_path
from ._records import Write

__all__ = ["Fix", "fix_for", "label", "out_of_place"]


@dataclass(frozen=True)
class Fix:
    """The fix of one write: the line the report prints, and the edit ``audit --fix`` applies.

    ``edit`` is a JSON-ready dict, ``None`` when the fix is advice:
    ``{"action": "replace", "code": ...}`` replaces the statement on the write's
    line by ``code`` (``"imports"``: modules it needs; ``"then"``: a move after
    it); ``{"action": "move", "below": n}`` moves that statement (with the loop
    or block that holds it) below line ``n``, the backward that needs the old
    values; ``{"action": "keyword", "callee": "ReLU", "attribute": "relu",
    "keyword": "inplace", "value": False}`` builds the module (``attribute`` of
    ``self``, else every such call) with that keyword, and with ``"line": n``
    passes it to the call on line ``n``; ``{"action": "recompute", "loss":
    "g_loss", "forward": n, "step": m}`` computes the loss again after the step
    on line ``m``, from the forward on line ``n``.
    """

    text: str
    edit: dict[str, Any] | None = None


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


def fix_for(write: Write) -> Fix:
    """What removes ``write``'s harm: one line written for the user's line, and its edit."""
    marked = _mark_dirty(write)
    if marked is not None:
        return Fix(marked, _replace(marked))
    fix = _fix_for(write)
    text = fix.text
    if write.in_function and write.kind == "non-leaf under no_grad":
        text += "  # or keep the write: ctx.mark_dirty() the tensor and return it"
    if write.hooked:
        text += (
            "  # and every other in-place op on this module's input or output"
            " (or hook the enclosing module instead)"
        )
    if write.consequence == "fails if backpropagated" and not write.alias_of_leaf:
        text += "  # or, in an evaluation, run it under torch.no_grad()"
    return Fix(text, fix.edit)


def _replace(code: str, then: dict[str, Any] | None = None) -> dict[str, Any]:
    """The edit that replaces the write's statement by ``code`` (a fix line, its remark dropped)."""
    code = code.split("  #")[0].strip()
    edit: dict[str, Any] = {"action": "replace", "code": code}
    if "inplace_recipes." in code:
        edit["imports"] = ["inplace_recipes"]
    if then is not None:
        edit["then"] = then
    return edit


def _fix_for(write: Write) -> Fix:
    saved_at = _saved_at(write)
    if write.inside is not None:
        return _fix_inside(write, saved_at)
    name, kwargs = write.name, write.call_kwargs
    code = _code(write)
    if write.alias_of_leaf:
        call = _call(code, name)
        edit = f"{call[0]}.{name}({call[1]})" if call else f"{_target(code, name)}.{name}(...)"
        text = f"with torch.no_grad(): {edit}  # not .data; {_moved(write)}"
        below = _below(write)
        if call is None or below is None:
            return Fix(text)
        return Fix(
            text, _replace(f"with torch.no_grad(): {edit}", {"action": "move", "below": below})
        )
    if write.parameter and not write.in_function:  # a Parameter cannot be reassigned
        below = _below(write)
        text = f"keep this write under torch.no_grad(), and {_moved(write)}"
        return Fix(text, None if below is None else {"action": "move", "below": below})
    if write.kind == "non-leaf under no_grad" and not write.in_function:
        return Fix("compute it out of place outside no_grad, or on a .clone()")
    if name == "__setitem__":
        found = re.fullmatch(r"([\w.]+)\[(.+)\]\s*=\s*(.+)", code)
        if found:
            target, index, value = found.groups()
            text = f"{target} = inplace_recipes.at({target})[{index}].set({value})"
            return Fix(text, _replace(text))
        return Fix(_setitem(write.call_args))
    if write.label.startswith("x ") and write.label.endswith("= ..."):
        symbol = write.label.split()[1][:-1]
        found = re.fullmatch(rf"([\w.]+)\s*{re.escape(symbol)}=\s*(.+)", code)
        if found:
            target, value = found.groups()
            text = f"{target} = {target} {symbol} {value}"
            return Fix(text, _replace(text))
        return Fix(f"write it out of place: a = a {symbol} b, not a {symbol}= b")
    if name.endswith("_") and not name.startswith("_"):
        rewritten = _rewrite_call(code, name, write.same_source)
        if rewritten is not None:
            return Fix(rewritten, _replace(rewritten))
    if kwargs.get("out") is not None:
        if hasattr(torch, name):
            return Fix(f"y = torch.{name}(...)  # without out=")
        return Fix("y = a new tensor from the op, without out=")
    if kwargs.get("inplace"):
        if hasattr(torch.nn.functional, name):
            return Fix(
                f"pass inplace=False to {name} on this line (or call torch.nn.functional.{name} without it)",
                {
                    "action": "keyword",
                    "callee": name,
                    "keyword": "inplace",
                    "value": False,
                    "line": write.line,
                },
            )
        return Fix("pass inplace=False")
    if name.endswith("_") and not name.startswith("_"):
        return Fix(
            f"call {name[:-1]} (out of place) instead of {name}, and use its result{saved_at}"
        )
    if hasattr(torch, name):
        return Fix(f"use the result of torch.{name}(...) out of place{saved_at}")
    return Fix(
        f"run this line after the last backward that needs the old values, or pass a .clone(){saved_at}"
    )


def _mark_dirty(write: Write) -> str | None:
    """The line with ``ctx.mark_dirty(x)`` after the write, for an unmarked write used again.

    Writing out of place instead would change what the later use reads; marking
    the write keeps the values and gives them their history. A leaf cannot be
    marked (autograd refuses an in-place write into it).
    """
    if not (write.context and write.consequence == "wrong gradients"):
        return None
    if write.kind != "non-leaf under no_grad":
        return None
    statements = _statements(_code(write))
    for n, statement in enumerate(statements):
        call = _call(statement, write.name)
        if call is not None:
            statements.insert(n + 1, f"{write.context}.mark_dirty({call[0]})")
            return "; ".join(statements) + (
                "  # and return it; or write out of place and rebind the name where "
                "the Function is called (h = f(h))"
            )
    return None


def _code(write: Write) -> str:
    return linecache.getline(write.file, write.line).split("#")[0].strip()


def _target(code: str, name: str) -> str:
    """The expression the line calls ``name`` on (``self.weight`` in ``self.weight.renorm_(...)``)."""
    found = re.search(rf"([\w.]+?)(?:\.data|\.detach\(\))?\.{re.escape(name)}\(", code)
    return found[1] if found else "the tensor"


def _call(code: str, name: str) -> tuple[str, str, int, int] | None:
    """``target``, the arguments, start and end of ``target[.data].name(arguments)`` in ``code``."""
    found = re.search(rf"(?<![\w.])([\w.]+?)(?:\.data|\.detach\(\))?\.{re.escape(name)}\(", code)
    if found is None:
        return None
    depth, end = 1, found.end()
    while end < len(code) and depth:
        depth += {"(": 1, ")": -1}.get(code[end], 0)
        end += 1
    if depth:
        return None
    return found[1], code[found.end() : end - 1], found.start(), end


def _rewrite_call(code: str, name: str, same_source: bool) -> str | None:
    """The line with ``target.name(args)`` taken out of place, under the line's own names.

    ``y.add_(1)`` gives ``y = y.add(1)``; ``z = y.add_(1)`` gives ``y = y.add(1); z = y``.
    A line of several statements is rewritten in the statement that calls:
    ``h = x.exp(); h.mul_(2)`` gives ``h = x.exp(); h = h.mul(2)``, and a
    one-line ``with torch.no_grad(): h.mul_(2)`` gives ``h = h.mul(2)``
    (under ``no_grad`` the new ``h`` would have no gradient). ``None`` where
    the call is not a statement of its own line (in a lambda, a condition),
    or the rewritten line would not parse. A line from a function body
    (``return``) is read as one:

    >>> _rewrite_call("x.mul_(2); return x", "mul_", False)
    'x = x.mul(2); return x'
    >>> _rewrite_call("with torch.no_grad(): h.mul_(2)", "mul_", False)
    'h = h.mul(2)'
    """
    call = _call(code, name)
    if call is None:
        return None
    target, arguments, start, end = call
    span = _statement_span(code, start, end)
    if span is None:
        return None
    first, last, drop = span
    statement = code[first:last]
    assignment = f"{target} = {out_of_place(name, target, arguments, same_source)}"
    rest = statement[: start - first] + target + statement[end - first :]
    rewritten = assignment if rest.strip() == target else f"{assignment}; {rest.strip()}"
    line = rewritten if drop else code[:first] + rewritten + code[last:]
    return line if _parsed(line) is not None else None


def _statement_span(code: str, start: int, end: int) -> tuple[int, int, bool] | None:
    """Where the simple statement holding ``code[start:end]`` starts and ends, and
    whether it is the whole body of a one-line ``with torch.no_grad():`` (to be
    dropped with it); ``None`` if the call is inside a lambda or a compound
    statement's header, or ``code`` does not parse on its own."""
    parsed = _parsed(code)
    if parsed is None or not code.isascii():  # ast's offsets count bytes
        return None
    tree, shift, top = parsed
    for parent in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(parent, field, None)
            if not isinstance(body, list):
                continue
            for statement in body:
                if isinstance(statement, _COMPOUND) or not isinstance(statement, ast.stmt):
                    continue
                first = statement.col_offset - shift
                last = (statement.end_col_offset or 0) - shift
                if not (first <= start and end <= last):
                    continue
                if any(isinstance(n, ast.Lambda) for n in ast.walk(statement)):
                    return None
                drop = (
                    isinstance(parent, ast.With)
                    and len(body) == 1
                    and "no_grad" in ast.unparse(parent.items[0].context_expr)
                    and len(top) == 1
                )
                return first, last, drop
    return None


_COMPOUND = (
    ast.With,
    ast.AsyncWith,
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


#: A line read as the body of a function, for lines with ``return`` or ``yield``.
_FUNCTION = "def _line():\n "


def _parsed(code: str) -> tuple[ast.Module, int, list[ast.stmt]] | None:
    """``code`` parsed on its own, or as a function's body line; with the column shift of
    that reading and its top-level statements. ``None`` if it parses neither way."""
    try:
        tree = ast.parse(code)
        return tree, 0, tree.body
    except SyntaxError:
        pass
    try:
        tree = ast.parse(_FUNCTION + code)
    except SyntaxError:
        return None
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    return tree, 1, function.body


def _statements(code: str) -> list[str]:
    """The ``;``-separated statements of one line (a ``;`` in brackets or quotes stays).

    >>> _statements("x.mul_(2); return x")
    ['x.mul_(2)', 'return x']
    """
    parts, depth, quote, start = [], 0, "", 0
    for n, char in enumerate(code):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ";" and depth == 0:
            parts.append(code[start:n].strip())
            start = n + 1
    parts.append(code[start:].strip())
    return [part for part in parts if part]


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


def _fix_inside(write: Write, saved_at: str) -> Fix:
    inside = write.inside or ""
    if write.module is not None and getattr(write.module, "inplace", False) is True:
        kind = type(write.module).__name__
        attribute = (write.module_name or "").removeprefix("self.") or None
        return Fix(
            f"build {write.module_name or 'it'} as nn.{kind}(inplace=False)",
            {
                "action": "keyword",
                "callee": kind,
                "attribute": attribute,
                "keyword": "inplace",
                "value": False,
            },
        )
    if f"{os.sep}optim{os.sep}" in inside:
        return _fix_step(write, saved_at)
    if write.name == "embedding" or write.name.startswith("embedding_renorm"):
        return Fix(
            "Embedding(max_norm=...) renormalises its weight in place: "
            f"use weight.clone() in the other use of the weight{saved_at}"
        )
    return Fix(
        f"run this line after the last backward that needs the old values, or pass a .clone(){saved_at}"
    )


def _fix_step(write: Write, saved_at: str) -> Fix:
    """An optimizer step between a forward and the backward that needs its weights.

    Moving the step below that backward would add that loss's gradient into
    this optimizer's ``.grad`` before it steps; the fix that keeps both updates
    right computes the loss again after the step, from a new forward.
    """
    backward = _last_backward(write)
    node = write.nodes[0] if write.nodes else None
    if backward is None or node is None:
        return Fix(f"run this step after the last backward that needs the old values{saved_at}")
    file, line, loss = backward
    made = node.line_in(write.function)
    forward = _where(made, write.cwd)
    what = f"{loss} " if loss else "the loss "
    name = loss or "that loss"
    text = (
        f"compute {what}after this step, from a new forward (not from the output made at "
        f"{forward}), so that the backward at {_where((file, line), write.cwd)} "
        f"uses the stepped weights; or, if {name} should train what this step updates "
        "(one model, two losses), run this step after that backward"
    )
    if not loss or made[0] != write.file or file != write.file:
        return Fix(text)
    return Fix(
        text,
        {"action": "recompute", "loss": loss, "forward": made[1], "backward": line},
    )


def _where(at: tuple[str, int], cwd: str) -> str:
    """``file:line`` under the working-directory rule."""
    return f"{user_path(at[0], cwd)}:{at[1]}"


def _saved_at(write: Write) -> str:
    if not write.nodes:
        return ""
    return f" (saved at {_where(write.nodes[0].where, write.cwd)})"


def _last_backward(write: Write) -> tuple[str, int, str] | None:
    """File, line and loss name of the last backward through a node whose tensor ``write`` changed.

    When none ran through one after the write, it is the backward that raised
    first after it (on another tensor the same optimizer step wrote): the one
    that would have reached this node next.
    """
    node = next((n for n in reversed(write.nodes) if n.backward_at), None)
    at = node.backward_at if node is not None else None
    if write.raised_at is not None and (node is None or node.runs == 0 or at is None):
        at = write.raised_at
    if at is None:
        return None
    file, line = at
    code = linecache.getline(file, line)
    found = re.search(r"([\w.]+)\.backward\(", code) or re.search(
        r"autograd\.(?:backward|grad)\(\s*([\w.]+)", code
    )
    return file, line, found[1] if found else ""


def _below(write: Write) -> int | None:
    """The line, in the write's file, of the backward that needs the old value; else ``None``."""
    at = _last_backward(write)
    return at[1] if at is not None and at[0] == write.file else None


def _moved(write: Write) -> str:
    at = _last_backward(write)
    if at is not None:
        return (
            f"move it below {_where(at[:2], write.cwd)}, the backward that uses the old value "
            "(a weight constraint goes after opt.step())"
        )
    if write.nodes:
        where = _where(write.nodes[0].where, write.cwd)
        return f"move it below the backward of the graph made at {where} (or after opt.step())"
    return "move it where no graph uses the old value (after opt.step())"


def _setitem(args: tuple[Any, ...]) -> str:
    recipe = "select_scatter"
    if len(args) >= 3:
        from .._pick import best_recipe

        try:
            recipe = best_recipe(args[0], args[1], args[2])
        except Exception:  # noqa: BLE001 - a suggestion must never fail the audit
            recipe = "where"
    return f'x = inplace_recipes.RECIPES["{recipe}"](x, index, value)  # not x[index] = value'
