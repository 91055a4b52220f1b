"""Apply the audit's code fixes to the user's files, keeping comments and formatting (libcst).

:func:`plan` takes the report's records and, for each one whose fix is a
change of code (its ``edit``, see :class:`~inplace_recipes.auditing._advice.Fix`),
rewrites its file with `libcst <https://libcst.readthedocs.io>`_, a concrete
syntax tree that keeps every comment, blank line and quote as written. It
writes nothing: :meth:`Plan.diff` gives the unified diff and :meth:`Plan.write`
writes the files. Records whose fix is advice, or whose edit does not fit the
code (a statement over several lines, a file outside the allowed folders),
are listed with the reason in :attr:`Plan.skipped`.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "train.py")
>>> with open(path, "w") as out:
...     _ = out.write("h = x.exp()\\nh += 1  # the bias\\n")
>>> record = {"file": path, "line": 2, "fix": "h = h + 1", "code": "h += 1  # the bias",
...           "edit": {"action": "replace", "code": "h = h + 1"}}
>>> print(plan([record], [folder], cwd=folder).diff(), end="")
--- train.py
+++ train.py
@@ -1,2 +1,2 @@
 h = x.exp()
-h += 1  # the bias
+h = h + 1  # the bias
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
import libcst.matchers as m
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from ._paths import user_path

__all__ = ["Plan", "plan"]


class CannotApply(Exception):
    """An edit that does not fit the code as it is written; the reason is the message."""


@dataclass
class Plan:
    """What ``audit --fix`` would write: each file's text before and after, and what it left out."""

    cwd: str = ""
    #: path -> (text before, text after), for each file an edit changed
    sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: the records whose edit was applied
    applied: list[dict[str, Any]] = field(default_factory=list)
    #: (record, why) for each harmful record whose fix was not applied
    skipped: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    def diff(self) -> str:
        """A unified diff of every changed file, paths as the report shows them."""
        chunks: list[str] = []
        for path, (before, after) in self.sources.items():
            name = user_path(path, self.cwd)
            chunks += difflib.unified_diff(
                before.splitlines(keepends=True),
                after.splitlines(keepends=True),
                fromfile=name,
                tofile=name,
            )
        return "".join(chunks)

    def write(self) -> list[str]:
        """Write the changed files; their paths."""
        for path, (_, after) in self.sources.items():
            with open(path, "w", encoding="utf-8") as out:
                out.write(after)
        return list(self.sources)

    def summary(self, written: bool = True) -> str:
        """One line per fix of code (applied, or to apply) and per fix left out, with why."""
        verb = "applied" if written else "to apply"
        lines = [f"  {verb} {_where(r, self.cwd)}: {r['fix']}" for r in self.applied]
        lines += [f"  not applied {_where(r, self.cwd)}: {why}" for r, why in self.skipped]
        return "\n".join(lines)


def _where(record: dict[str, Any], cwd: str) -> str:
    return f"{user_path(str(record['file']), cwd)}:{record['line']}"


def plan(records: Iterable[dict[str, Any]], roots: Sequence[str], cwd: str = "") -> Plan:
    """The rewrite of the files of ``records`` (``AuditReport.to_records()``) under ``roots``.

    Only files inside one of the folders ``roots`` are rewritten; the others
    (libraries, torch) are left as they are, and their records are skipped.
    """
    cwd = cwd or os.getcwd()
    result = Plan(cwd=cwd)
    by_file: dict[str, list[dict[str, Any]]] = {}
    seen: set[tuple[str, int, str]] = set()
    for record in records:
        if record.get("fix") is None:
            continue  # harmless
        path = os.path.abspath(os.path.join(cwd, str(record["file"])))
        if record.get("edit") is None:
            result.skipped.append((record, "advice, not a change of code"))
            continue
        if not _inside(path, roots):
            result.skipped.append((record, "the file is outside the folders --fix rewrites"))
            continue
        key = (path, int(record["line"]), repr(record["edit"]))
        if key in seen:
            continue  # one edit per line: several rows of one statement
        seen.add(key)
        by_file.setdefault(path, []).append(record)
    for path, file_records in by_file.items():
        with open(path, encoding="utf-8") as source:
            before = source.read()
        after = before
        for record in _ordered(file_records):
            try:
                after = _apply(after, int(record["line"]), record["edit"])
            except CannotApply as why:
                result.skipped.append((record, str(why)))
                continue
            except cst.ParserSyntaxError as error:
                result.skipped.append((record, f"the fixed code does not parse: {error.message}"))
                continue
            result.applied.append(record)
        if after != before:
            result.sources[path] = (before, after)
    return result


def _inside(path: str, roots: Sequence[str]) -> bool:
    installed = {"site-packages", "dist-packages"}
    if installed & set(path.split(os.sep)):
        return False
    return any(path.startswith(os.path.abspath(root) + os.sep) for root in roots)


#: Edits that keep every line where it is run first, so that the lines of the others still hold.
_IN_PLACE = ("replace", "keyword")


def _ordered(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Line-keeping edits first; then the moves, from the bottom of the file up."""
    keeping = [r for r in records if r["edit"]["action"] in _IN_PLACE and "then" not in r["edit"]]
    moving = [r for r in records if r not in keeping]
    return keeping + sorted(moving, key=lambda r: -int(r["line"]))


# -- one edit ---------------------------------------------------------------------------------


def _apply(source: str, line: int, edit: dict[str, Any]) -> str:
    """``source`` with ``edit`` applied to the statement on ``line``."""
    action = edit["action"]
    module = cst.parse_module(source)
    tree = _Tree(module)
    if action == "replace":
        statement = tree.statement_on(line)
        replacement = _one_statement(edit["code"], statement)
        module = _replaced(tree.module, statement, replacement)
        for name in edit.get("imports", ()):
            context = CodemodContext()
            AddImportsVisitor.add_needed_import(context, name)
            module = AddImportsVisitor(context).transform_module(module)
        after = module.code
        then = edit.get("then")
        return _apply(after, line, then) if then else after
    if action == "move":
        return _move(tree, line, int(edit["below"])).code
    if action == "keyword":
        return _keyword(tree, edit).code
    if action == "recompute":
        return _recompute(tree, line, edit).code
    raise CannotApply(f"unknown edit {action!r}")


class _Tree:
    """A parsed module with each statement's lines and parent."""

    def __init__(self, module: cst.Module) -> None:
        wrapper = MetadataWrapper(module)
        self.module = wrapper.module
        self.positions = wrapper.resolve(PositionProvider)
        self.parents = wrapper.resolve(ParentNodeProvider)

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node]
        return where.start.line, where.end.line

    def statements(self) -> list[cst.BaseStatement]:
        return [n for n in self.positions if isinstance(n, cst.BaseStatement)]

    def statement_on(self, line: int) -> cst.BaseStatement:
        """The outermost statement that starts and ends on ``line``."""
        found = [s for s in self.statements() if self.lines(s) == (line, line)]
        if not found:
            if any(self.lines(s)[0] <= line <= self.lines(s)[1] for s in self._simple()):
                raise CannotApply("the statement spans several lines")
            raise CannotApply(f"no statement on line {line}")
        return min(found, key=self._depth)

    def statement_at(self, line: int) -> cst.BaseStatement:
        """The innermost statement whose lines hold ``line``."""
        found = [s for s in self.statements() if self.lines(s)[0] <= line <= self.lines(s)[1]]
        if not found:
            raise CannotApply(f"no statement on line {line}")
        return max(found, key=self._depth)

    def _simple(self) -> list[cst.BaseStatement]:
        return [s for s in self.statements() if isinstance(s, cst.SimpleStatementLine)]

    def _depth(self, node: cst.CSTNode) -> int:
        depth = 0
        while node in self.parents:
            node = self.parents[node]
            depth += 1
        return depth

    def chain(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """``node`` and its ancestors, innermost first."""
        found = [node]
        while found[-1] in self.parents:
            found.append(self.parents[found[-1]])
        return found

    def siblings(
        self, first: cst.CSTNode, second: cst.CSTNode
    ) -> tuple[cst.CSTNode, cst.BaseStatement, cst.BaseStatement]:
        """The innermost block holding both, and the statements of it that hold each."""
        up_first, up_second = self.chain(first), self.chain(second)
        for block in up_first:
            if block in up_second and _body(block) is not None:
                a = up_first[up_first.index(block) - 1]
                b = up_second[up_second.index(block) - 1]
                if a is b:
                    raise CannotApply("the write and the backward are one statement")
                return block, a, b  # type: ignore[return-value]
        raise CannotApply("no block holds both lines")


def _replaced(module: cst.Module, old: cst.CSTNode, new: cst.CSTNode) -> cst.Module:
    """``module`` with the node ``old`` (by identity) replaced by ``new``."""
    replaced = module.deep_replace(old, new)
    assert isinstance(replaced, cst.Module)
    return replaced


def _body(block: cst.CSTNode) -> Sequence[cst.BaseStatement] | None:
    if isinstance(block, (cst.Module, cst.IndentedBlock)):
        return block.body
    return None


def _one_statement(code: str, original: cst.BaseStatement) -> cst.BaseStatement:
    """``code`` as one statement, with the comments above and beside ``original`` kept."""
    body = cst.parse_module(code.strip() + "\n").body
    if len(body) != 1:
        raise CannotApply("the fix is not one statement")
    new = body[0]
    new = new.with_changes(leading_lines=getattr(original, "leading_lines", ()))
    trailing = _trailing(original)
    if trailing is not None:
        if isinstance(new, cst.SimpleStatementLine):
            new = new.with_changes(trailing_whitespace=trailing)
        elif isinstance(getattr(new, "body", None), cst.SimpleStatementSuite):
            suite = new.body
            new = new.with_changes(body=suite.with_changes(trailing_whitespace=trailing))
    return new


def _trailing(statement: cst.BaseStatement) -> cst.TrailingWhitespace | None:
    if isinstance(statement, cst.SimpleStatementLine):
        return statement.trailing_whitespace
    suite = getattr(statement, "body", None)
    if isinstance(suite, cst.SimpleStatementSuite):
        return suite.trailing_whitespace
    return None


def _with_body(block: cst.CSTNode, body: list[cst.BaseStatement]) -> cst.CSTNode:
    return block.with_changes(body=body)


def _move(tree: _Tree, line: int, below: int) -> cst.Module:
    """The statement on ``line`` (with the block of the backward's level that holds it) below ``below``."""
    write = tree.statement_at(line)
    backward = tree.statement_at(below)
    block, moved, anchor = tree.siblings(write, backward)
    body = list(_body(block) or ())
    if body.index(moved) > body.index(anchor):
        raise CannotApply("the write is already below that backward")
    body.remove(moved)
    body.insert(body.index(anchor) + 1, moved)
    return _replaced(tree.module, block, _with_body(block, body))


def _callee_name(call: cst.Call) -> str:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _position_of(callee: str, keyword: str) -> int | None:
    """Where ``keyword`` comes among the positional parameters of torch's ``callee``."""
    import torch

    target = getattr(torch.nn, callee, None) or getattr(torch.nn.functional, callee, None)
    if target is None:
        return None
    try:
        parameters = list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return None
    parameters = [p for p in parameters if p != "self"]
    return parameters.index(keyword) if keyword in parameters else None


def _set_keyword(call: cst.Call, keyword: str, value: bool) -> cst.Call | None:
    """``call`` with ``keyword=value``, where it passed that parameter; else ``None``."""
    args = list(call.args)
    new_value = cst.Name(str(value))
    for n, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == keyword:
            args[n] = arg.with_changes(value=new_value)
            return call.with_changes(args=args)
    index = _position_of(_callee_name(call), keyword)
    positional = [n for n, arg in enumerate(args) if arg.keyword is None and not arg.star]
    if index is not None and index < len(positional):
        n = positional[index]
        args[n] = args[n].with_changes(value=new_value)
        return call.with_changes(args=args)
    return None


def _keyword(tree: _Tree, edit: dict[str, Any]) -> cst.Module:
    """Every call of ``edit["callee"]`` it names (the module's constructor, or the call on its line)."""
    callee, keyword, value = edit["callee"], edit["keyword"], bool(edit["value"])
    calls = [n for n in tree.positions if isinstance(n, cst.Call) and _callee_name(n) == callee]
    if "line" in edit:
        calls = [c for c in calls if tree.lines(c)[0] <= int(edit["line"]) <= tree.lines(c)[1]]
    elif edit.get("attribute"):
        attribute = edit["attribute"]
        calls = [c for c in calls if _assigned_to_self(tree, c, attribute)]
    module = tree.module
    changed = 0
    for call in calls:
        new = _set_keyword(call, keyword, value)
        if new is not None and not new.deep_equals(call):
            module = _replaced(module, call, new)
            changed += 1
    if not changed:
        where = f"self.{edit['attribute']}" if edit.get("attribute") else callee
        raise CannotApply(f"no call that builds {where} with {keyword}= in this file")
    return module


def _assigned_to_self(tree: _Tree, call: cst.Call, attribute: str) -> bool:
    parent = tree.parents.get(call)
    if not isinstance(parent, cst.Assign):
        return False
    target = m.Attribute(value=m.Name("self"), attr=m.Name(attribute))
    return any(m.matches(t.target, target) for t in parent.targets)


def _names(node: cst.CSTNode) -> set[str]:
    return {n.value for n in m.findall(node, m.Name()) if isinstance(n, cst.Name)}


def _assigned(statement: cst.CSTNode) -> set[str]:
    found = set()
    for assign in m.findall(statement, m.Assign()):
        for target in assign.targets:  # type: ignore[attr-defined]
            found |= _names(target.target)
    return found


def _recompute(tree: _Tree, step_line: int, edit: dict[str, Any]) -> cst.Module:
    """The loss, and the statements from the forward it needs, computed again after the step.

    The loss's statement before the step moves below it (it stays where it is
    when a statement between them reads it); the statements from the forward's
    line to it that the loss depends on are repeated below the step first, so
    that the loss comes from a forward of the stepped weights.
    """
    loss = str(edit["loss"])
    step = tree.statement_at(step_line)
    forward = tree.statement_at(int(edit["forward"]))
    step_lines = tree.lines(step)
    assignments = [
        s
        for s in tree.statements()
        if isinstance(s, cst.SimpleStatementLine)
        and loss in _assigned(s)
        and tree.lines(s)[1] < step_lines[0]
    ]
    if not assignments:
        raise CannotApply(f"no assignment of {loss} before the step")
    statement = max(assignments, key=lambda s: tree.lines(s)[0])
    block, kept, anchor = tree.siblings(statement, step)
    body = list(_body(block) or ())
    start = body.index(kept)
    chain = [kept]
    forward_up = [n for n in tree.chain(forward) if n in body]
    if forward_up and forward_up[0] is not kept:
        first = body.index(forward_up[0])  # type: ignore[arg-type]  # a statement of body
        if first < start:
            tainted = _assigned(body[first])
            chain = [body[first]]
            for s in body[first + 1 : start]:
                if _names(s) & tainted:
                    chain.append(s)
                    tainted |= _assigned(s)
            chain.append(kept)
    between = body[start + 1 : body.index(anchor)]
    move = not any(loss in _names(s) for s in between)
    copies = [s.deep_clone() for s in chain]
    if move:
        body.remove(kept)
    at = body.index(anchor) + 1
    body[at:at] = copies
    return _replaced(tree.module, block, _with_body(block, body))
