"""``python -m inplace_recipes audit train.py [args...]``: run a script unchanged under :func:`audit`.

Like ``python -m cProfile``, the script runs as ``__main__`` with its own
``sys.argv``; the report is printed to stderr when it ends, also when it
raises or calls ``sys.exit``. With ``--json`` the report is the only thing
on stdout, as JSON (:meth:`~inplace_recipes.auditing.AuditReport.to_json`);
the script's own prints go to stderr.

Exit codes: the script's own error gives 1 (as Python would); else, with
``--fail-on``, :data:`EXIT_FOUND` (3) when the report has a write of that
class (``backward-fails``: ``"backward fails"`` or ``"raises"``;
``wrong-gradients``; ``any``: either); else the script's own exit code.

>>> parser = argparse.ArgumentParser(prog="inplace_recipes")
>>> _ = add_parser(parser.add_subparsers(dest="command"))
>>> parser.parse_args(["audit", "--json", "train.py", "--lr", "0.1"]).args
['--lr', '0.1']
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import sys
from collections.abc import Sequence
from typing import Any

from . import AuditReport, audit

__all__ = ["EXIT_FOUND", "FAIL_ON", "add_parser", "main", "run_script"]

#: The exit code when ``--fail-on`` finds a write of its class.
EXIT_FOUND = 3
#: ``--fail-on`` choices and the consequences each fails on.
FAIL_ON = {
    "backward-fails": ("backward fails", "raises"),
    "wrong-gradients": ("wrong gradients",),
    "any": ("backward fails", "raises", "wrong gradients"),
}
HELP = "run a Python script unchanged under audit() and print its in-place writes"


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``audit`` on an ``argparse`` subparsers object; returns its parser."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "audit", help=HELP, description=HELP, epilog=_EPILOG
    )
    _arguments(parser)
    parser.set_defaults(handler=_handle)
    return parser


_EPILOG = (
    f"exit codes: 1 if the script raised; {EXIT_FOUND} if --fail-on found a write of its class; "
    "else the script's own exit code (0 when it ends normally)"
)


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    parser.add_argument(
        "--fail-on",
        choices=list(FAIL_ON),
        help=f"exit with {EXIT_FOUND} when a write of this class is found",
    )
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")


def _handle(options: argparse.Namespace) -> int:
    if options.json:
        with contextlib.redirect_stdout(sys.stderr):
            report, code = run_script(options.script, options.args)
    else:
        report, code = run_script(options.script, options.args)
    if options.json:
        sys.stdout.write(report.to_json() + "\n")
    else:
        sys.stderr.write(f"\ninplace_recipes audit of {options.script}:\n{report}\n")
    if report.error is not None and not isinstance(report.error, SystemExit):
        return 1
    if options.fail_on and any(f.consequence in FAIL_ON[options.fail_on] for f in report.findings):
        return EXIT_FOUND
    return code


def run_script(path: str, args: Sequence[str] = ()) -> tuple[AuditReport, int]:
    """Run ``path`` as ``__main__`` with ``args`` under :func:`audit`; the report and its exit code.

    The script's exception (if any) is in ``report.error``; its traceback is
    printed to stderr, as Python would.
    """
    argv, path0 = sys.argv[:], sys.path[0]
    sys.argv = [path, *args]
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    code = 0
    try:
        context = audit()
        with context as report:
            try:
                runpy.run_path(path, run_name="__main__")
            except SystemExit as exit_:
                code = _exit_code(exit_.code)
            except Exception as exc:  # noqa: BLE001 - reported, like Python would
                report.error = exc
                _print_traceback(exc)
                code = 1
    finally:
        sys.argv, sys.path[0] = argv, path0
    return report, code


def _print_traceback(exc: BaseException) -> None:
    """The traceback Python would print for the script: without the runner's and audit's frames."""
    import traceback

    own = os.path.dirname(__file__) + os.sep
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith(own)
        and not frame.filename.startswith("<frozen runpy")
        and not frame.filename.endswith(os.path.join("torch", "overrides.py"))
    ]
    sys.stderr.write("Traceback (most recent call last):\n")
    sys.stderr.write("".join(traceback.format_list(frames)))
    sys.stderr.write("".join(traceback.format_exception_only(exc)))


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """``inplace_recipes audit [--json] [--fail-on ...] script [args...]``.

    A script that does not exist is an argparse error (exit code 2).
    """
    parser = argparse.ArgumentParser(
        prog="python -m inplace_recipes audit", description=HELP, epilog=_EPILOG
    )
    _arguments(parser)
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isfile(options.script):
        parser.error(f"no such script: {options.script!r}")
    return _handle(options)


if __name__ == "__main__":
    sys.exit(main())
