"""Run a script or a module as ``__main__`` under :func:`audit`, the way ``python`` and ``python -m`` run it.

:func:`load` checks first that there is something to run (a file, a
directory with ``__main__.py``, an importable module) and that it compiles,
so that a script that never ran is said once and is never reported on.
:func:`run` runs it; the script's exception, ``sys.exit`` and an interrupt
(``SIGINT``, ``SIGTERM``) end the run, and the report keeps what was audited.

>>> load("no_such_script.py", module=False).problem
"can't open file 'no_such_script.py': No such file or directory"
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import signal
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

from ._audit import audit
from ._report import AuditReport

__all__ = ["Interrupted", "Outcome", "Target", "load", "print_traceback", "run"]

_OWN = os.path.dirname(os.path.abspath(__file__)) + os.sep


class Interrupted(BaseException):
    """Raised in the main thread by ``SIGTERM`` while a script runs under the audit."""


@dataclass(frozen=True)
class Target:
    """What to run: ``path`` (absolute, what ``__file__`` will be) or ``module``; or why not."""

    name: str  # as the user wrote it
    path: str = ""
    module: str = ""
    problem: str = ""  # set when there is nothing to run, or it does not compile


@dataclass
class Outcome:
    """How the run ended: the script's exit code, and the signal that interrupted it, if any."""

    report: AuditReport
    code: int
    signal: str = ""  # "SIGINT" or "SIGTERM"


def load(name: str, module: bool) -> Target:
    """The script or module ``name``, checked to exist and compile."""
    if module:
        try:
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.submodule_search_locations is not None:
                spec = importlib.util.find_spec(f"{name}.__main__")
        except (ImportError, ValueError) as exc:
            return Target(name, problem=f"no module named {name!r} ({exc})")
        if spec is None:
            return Target(name, problem=f"no module named {name!r}")
        origin = spec.origin or ""
        problem = _compiles(origin) if origin.endswith(".py") else ""
        return Target(name, path=origin, module=name, problem=problem)
    path = os.path.abspath(name)
    if os.path.isdir(path):
        main = os.path.join(path, "__main__.py")
        if not os.path.isfile(main):
            return Target(name, problem=f"{name!r} is a directory with no __main__.py to run")
        return Target(name, path=path, problem=_compiles(main))
    if not os.path.isfile(path):
        return Target(name, problem=f"can't open file {name!r}: No such file or directory")
    return Target(name, path=path, problem=_compiles(path))


def _compiles(path: str) -> str:
    """``""`` if the file compiles, else its error as Python prints it."""
    try:
        with open(path, "rb") as source:
            compile(source.read(), path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return "".join(traceback.format_exception_only(exc)).rstrip()
    except (OSError, ValueError) as exc:
        return f"can't read {path!r}: {exc}"
    return ""


def run(target: Target, args: Sequence[str] = ()) -> Outcome:
    """Run ``target`` as ``__main__`` with ``args`` under :func:`audit`.

    The script's traceback is printed to stderr as Python prints it, without
    the audit's frames; its exception is in ``report.error``.
    """
    argv, path = sys.argv[:], sys.path[:]
    sys.argv = [target.path if target.module else target.name, *args]
    if target.module:
        sys.path[0] = os.getcwd()
    else:
        sys.path[0] = target.path if os.path.isdir(target.path) else os.path.dirname(target.path)
    code, stopped = 0, ""
    context = audit()
    try:
        with _terminate_raises(), context:
            try:
                if target.module:
                    runpy.run_module(target.module, run_name="__main__", alter_sys=True)
                else:
                    runpy.run_path(target.path, run_name="__main__")
            except SystemExit as exit_:
                code = _exit_code(exit_.code)
            except (KeyboardInterrupt, Interrupted) as exc:
                context.report.error = exc
                stopped = "SIGINT" if isinstance(exc, KeyboardInterrupt) else "SIGTERM"
                print_traceback(exc)
                code = 130 if stopped == "SIGINT" else 143
            except Exception as exc:  # noqa: BLE001 - reported, like Python would
                context.report.error = exc
                print_traceback(exc)
                code = 1
    finally:
        sys.argv, sys.path[:] = argv, path
    return Outcome(context.report, code, stopped)


@contextmanager
def _terminate_raises() -> Iterator[None]:
    """``SIGTERM`` raises :class:`Interrupted` (unless the script has its own handler)."""
    try:
        before = signal.signal(signal.SIGTERM, _raise_interrupted)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGTERM) is _raise_interrupted:
            signal.signal(signal.SIGTERM, before)


def _raise_interrupted(number: int, frame: FrameType | None) -> None:
    raise Interrupted("SIGTERM")


def print_traceback(exc: BaseException) -> None:
    """The traceback Python would print for the script: without the runner's and audit's frames."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith(_OWN)
        and not frame.filename.startswith("<frozen runpy")
        and os.path.basename(frame.filename) != "runpy.py"
        and not frame.filename.endswith(os.path.join("torch", "overrides.py"))
    ]
    text = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    if isinstance(exc, Interrupted):
        text.append("Terminated (SIGTERM)\n")
    else:
        text += traceback.format_exception_only(exc)
    sys.stderr.write("".join(text))


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1
