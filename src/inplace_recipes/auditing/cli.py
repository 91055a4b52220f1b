"""``python -m inplace_recipes audit [options] (script.py | -m module) [args...]``: run a script unchanged under :func:`audit`.

Like ``python -m cProfile``, the script (or, with ``-m``, the module) runs as
``__main__`` with its own ``sys.argv`` and an absolute ``__file__``; the
report is printed to stderr when it ends, also when it raises, calls
``sys.exit`` or is interrupted (Ctrl-C, ``SIGTERM``: the report then covers
what ran). The processes it starts with ``multiprocessing``
(``torch.multiprocessing.spawn``) or as Python subprocesses (``torchrun``'s
workers: ``-m torch.distributed.run``) are audited too, and their writes are
in the report (see :mod:`.children`); children that ran unaudited are
counted, and fail every ``--fail-on``.

``--json`` prints the report as JSON
(:meth:`~inplace_recipes.auditing.AuditReport.to_json`) on stdout, alone:
while the script runs, file descriptor 1 points at stderr, so that prints,
C code and subprocesses cannot mix into it. ``--json-out FILE`` writes it to
``FILE`` instead and leaves stdout to the script.

>>> options = parse(["--json", "train.py", "--lr", "0.1"])
>>> options.script, options.args
('train.py', ['--lr', '0.1'])
>>> parse(["--fail-on", "any", "-m", "torch.distributed.run", "--nproc-per-node", "2", "t.py"]).args
['--nproc-per-node', '2', 't.py']
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TextIO

from .children import ChildAudits, write_records
from .records import FAIL_ON
from .running import Outcome, load, run

__all__ = [
    "EXIT_FOUND",
    "EXIT_NOT_RUN",
    "EXIT_UNAUDITED",
    "FAIL_ON",
    "child_main",
    "main",
    "parse",
]

#: The exit code when ``--fail-on`` finds a write of its class.
EXIT_FOUND = 86
#: The exit code when ``--fail-on`` is given and child processes ran unaudited.
EXIT_UNAUDITED = 87
#: The exit code when there was nothing to run: no such file, a directory, a syntax error.
EXIT_NOT_RUN = 2
HELP = "run a Python script unchanged under audit() and print its in-place writes"

_EPILOG = (
    "exit codes: the script's own exit code, as Python gives it (1 when the script raised, "
    "an in-place error too; 130 after Ctrl-C, 143 after SIGTERM); with --fail-on, "
    f"{EXIT_FOUND} when a write of its class was found and {EXIT_UNAUDITED} when child "
    f"processes ran unaudited, in place of the script's own code; {EXIT_NOT_RUN} when "
    "nothing ran (no such script or module, a directory without __main__.py, a syntax "
    "error). The report's last line (and 'exit' in the JSON) says which code was given "
    "and why, and the script's own code. --fail-on classes: "
    + "; ".join(f"{name}: {', '.join(names)}" for name, names in FAIL_ON.items())
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m inplace_recipes audit",
        usage="%(prog)s [-h] [--json | --json-out FILE] [--fail-on CLASS] (script | -m module) [args ...]",
        description=HELP,
        epilog=_EPILOG,
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--json", action="store_true", help="print the report as JSON on stdout, alone"
    )
    output.add_argument(
        "--json-out",
        metavar="FILE",
        help="write the report as JSON to FILE (stdout is the script's)",
    )
    parser.add_argument(
        "--fail-on",
        choices=list(FAIL_ON),
        help=f"exit with {EXIT_FOUND} when a write of this class is found "
        f"({EXIT_UNAUDITED} when child processes ran unaudited)",
    )
    parser.add_argument(
        "-m",
        dest="module",
        metavar="module",
        help="run a library module as a script, like python -m",
    )
    parser.add_argument("script", nargs="?", help="the Python script to run")
    parser.add_argument("args", nargs="*", help="the script's own arguments")
    return parser


#: The audit's options that take a value.
_VALUED = ("--fail-on", "--json-out")


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The audit's options; everything from the script (or ``-m module``) on is the script's."""
    head: list[str] = []
    rest = list(argv)
    script: str | None = None
    module: str | None = None
    while rest:
        token = rest.pop(0)
        if token == "-m" or (token.startswith("-m") and not token.startswith("--")):
            module = token[2:] or (rest.pop(0) if rest else None)
            break
        if not token.startswith("-") or token == "-":
            script = token
            break
        head.append(token)
        if token in _VALUED and rest:
            head.append(rest.pop(0))
    parser = _parser()
    options = parser.parse_args(head)
    options.module, options.script, options.args = module, script, rest
    if module is None and script is None:
        parser.error("the following arguments are required: script (or -m module)")
    return options


def _handle(options: argparse.Namespace) -> int:
    name, args = options.module or options.script, options.args
    target = load(name, module=options.module is not None)
    if target.problem:
        sys.stderr.write(
            f"{target.problem}\ninplace_recipes audit: {name} did not run; nothing was audited.\n"
        )
        return EXIT_NOT_RUN
    with _stdout_for_json(options.json) as json_stream:
        with ChildAudits() as children:
            outcome = run(target, args)
        found, audited, unaudited = children.collect()
        report = outcome.report
        report.findings.extend(found)
        report.children, report.unaudited = audited, unaudited
        code, why = _exit(outcome, options.fail_on)
        report.exit = {"code": code, "script": outcome.code, "why": why}
        report.interrupted = outcome.signal
        if json_stream is not None:
            json_stream.write(report.to_json() + "\n")
    if options.json_out:
        with open(options.json_out, "w") as out:
            out.write(report.to_json() + "\n")
    if not options.json:
        where = f"-m {name}" if options.module else name
        sys.stderr.write(f"\ninplace_recipes audit of {where}:\n{report}\n{why}\n")
    return code


def _exit(outcome: Outcome, fail_on: str | None) -> tuple[int, str]:
    """The exit code and the sentence that says why."""
    report, own = outcome.report, outcome.code
    if fail_on:
        count = sum(f.consequence in FAIL_ON[fail_on] for f in report.findings)
        if count:
            return EXIT_FOUND, (
                f"Exit code {EXIT_FOUND}: --fail-on {fail_on} found {count} "
                f"write{'s' if count != 1 else ''} of its class (the script's own exit code was {own})."
            )
        if report.unaudited:
            return EXIT_UNAUDITED, (
                f"Exit code {EXIT_UNAUDITED}: --fail-on {fail_on} cannot pass with "
                f"{report.unaudited} child process{'es' if report.unaudited != 1 else ''} "
                f"unaudited (the script's own exit code was {own})."
            )
    if outcome.signal:
        return own, f"Exit code {own}: the script was interrupted by {outcome.signal}."
    if report.error is not None:
        return own, f"Exit code {own}: the script raised {type(report.error).__name__}."
    return own, f"Exit code {own}: the script's own."


@contextlib.contextmanager
def _stdout_for_json(active: bool) -> Iterator[TextIO | None]:
    """While active, file descriptor 1 is stderr; yields a stream to the real stdout."""
    if not active:
        yield None
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    stream = os.fdopen(os.dup(saved), "w")
    try:
        yield stream
    finally:
        sys.stdout.flush()
        _flush_c_stdout()
        os.dup2(saved, 1)
        os.close(saved)
        stream.close()


def _flush_c_stdout() -> None:
    """Flush C's ``stdout`` buffer (``printf`` in an extension) while it still goes to stderr."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)


def child_main(argv: Sequence[str]) -> int:
    """A Python child of an audited script: ``FOLDER TOKEN (script | -m module) [args...]``.

    Runs the child as Python would (its output and exit code unchanged) and
    writes its records to ``FOLDER`` for the parent's report.
    """
    folder, token, *rest = argv
    module = bool(rest) and rest[0] == "-m"
    name, args = (rest[1], rest[2:]) if module else (rest[0], rest[1:])
    target = load(name, module=module)
    if target.problem:
        sys.stderr.write(f"{target.problem}\n")
        return EXIT_NOT_RUN
    with ChildAudits(folder):
        outcome = run(target, args)
    write_records(folder, token, outcome.report.to_records())
    return outcome.code


def main(argv: Sequence[str] | None = None) -> int:
    """``inplace_recipes audit [--json | --json-out FILE] [--fail-on ...] (script | -m module) [args...]``."""
    return _handle(parse(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
