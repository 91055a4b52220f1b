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

``--diff`` prints, after the report, the unified diff of the fixes that are
changes of code (:mod:`.rewrite`), and writes nothing. ``--fix`` writes them
into the script's files (those under the working directory or the script's
folder), runs the script again under the audit, in a new process, and says
whether the rows it fixed are gone and the script ran to its end; the exit
code is then the new run's. Fixes that are advice are listed as not applied.
Without ``--fix`` no file is written.

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
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from ._children import ChildAudits, write_records
from ._paths import user_path
from ._records import FAIL_ON
from ._running import Outcome, load, run

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
        usage="%(prog)s [-h] [--json | --json-out FILE] [--fail-on CLASS] [--diff | --fix] "
        "(script | -m module) [args ...]",
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
    edits = parser.add_mutually_exclusive_group()
    edits.add_argument(
        "--diff",
        action="store_true",
        help="print the diff of the fixes that are changes of code; write nothing",
    )
    edits.add_argument(
        "--fix",
        action="store_true",
        help="write those fixes into the script's files, run it again under the audit "
        "and say whether the rows are gone (the exit code is the new run's)",
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
        for problem, count in children.problems.items():
            report.problems[problem] = report.problems.get(problem, 0) + count
        code, why = _exit(outcome, options.fail_on)
        report.exit = {"code": code, "script": outcome.code, "why": why}
        report.interrupted = outcome.signal
        fixes: dict[str, Any] | None = None
        if options.json and (options.fix or options.diff):
            fixes = _fixes(options, target.path, report.to_records(), say=None)
        if json_stream is not None:
            json_stream.write(_json(report, fixes) + "\n")
    if not options.json:
        where = f"-m {name}" if options.module else name
        sys.stderr.write(f"\ninplace_recipes audit of {where}:\n{report}\n{why}\n")
        if options.fix or options.diff:
            fixes = _fixes(options, target.path, report.to_records(), say=sys.stderr.write)
    if fixes is not None and options.fix and fixes["written"]:
        code = fixes["rerun"]["exit"]["code"]
    if options.json_out:
        with open(options.json_out, "w") as out:
            out.write(_json(report, fixes) + "\n")
    return code


def _json(report: Any, fixes: dict[str, Any] | None) -> str:
    """The report's JSON, with ``"fixes"`` when ``--fix`` or ``--diff`` was given."""
    if fixes is None:
        return str(report.to_json())
    data = json.loads(report.to_json())
    data["fixes"] = fixes
    return json.dumps(data, indent=2)


#: The folder this package is imported from: the new run of --fix imports the same one.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fixes(
    options: argparse.Namespace,
    path: str,
    records: list[dict[str, Any]],
    say: Callable[[str], object] | None,
) -> dict[str, Any]:
    """Plan the code fixes; with ``--fix``, write them and audit the script again.

    Returns the JSON-ready account; ``say`` (stderr, or ``None`` under ``--json``)
    is told each step as it happens, and ``--diff`` prints the diff on stdout.
    """
    try:
        from . import _rewrite as rewrite
    except ImportError as missing:  # libcst is the optional extra audit-fix
        raise SystemExit(
            f"inplace_recipes audit --fix and --diff need libcst ({missing}): "
            "pip install 'inplace-recipes[audit-fix]'"
        ) from missing

    def tell(text: str) -> None:
        if say is not None:
            say(text + "\n")

    folder = path if os.path.isdir(path) else os.path.dirname(path)
    planned = rewrite.plan(records, [os.getcwd(), folder])
    fixes: dict[str, Any] = {
        "applied": planned.applied,
        "not_applied": [{"record": r, "why": why} for r, why in planned.skipped],
        "diff": planned.diff(),
        "written": [],
        "rerun": None,
    }
    if say is not None and options.diff and fixes["diff"]:
        sys.stdout.write(fixes["diff"])
        sys.stdout.flush()
    count = len(planned.applied)
    files = ", ".join(sorted(user_path(p) for p in planned.sources)) or "no file"
    verb = "applied to" if options.fix else "would change"
    tell(
        f"\ninplace_recipes audit {'--fix' if options.fix else '--diff'}: {count} "
        f"fix{'es' * (count != 1)} of code {verb} {files}; {len(planned.skipped)} not applied."
    )
    if planned.summary():
        tell(planned.summary(written=options.fix))
    if options.fix and planned.sources:
        fixes["written"] = [user_path(p) for p in planned.write()]
        fixes["rerun"] = _verdict(records, planned.applied, _audit_again(options))
        tell(_verdict_text(fixes["rerun"], options))
    elif options.diff and planned.sources:
        tell("Nothing was written: run with --fix to apply the diff and audit again.")
    return fixes


def _audit_again(options: argparse.Namespace) -> dict[str, Any]:
    """The JSON of ``audit`` run again on the (now fixed) script, in a new process."""
    with tempfile.TemporaryDirectory(prefix="inplace-recipes-fix-") as folder:
        out = os.path.join(folder, "report.json")
        target = ["-m", options.module] if options.module else [options.script]
        fail_on = ["--fail-on", options.fail_on] if options.fail_on else []
        command = [sys.executable, "-m", "inplace_recipes", "audit", "--json-out", out]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH")]))
        sys.stderr.write("\ninplace_recipes audit --fix: running the fixed script again\n")
        sys.stderr.flush()
        subprocess.run(  # noqa: PLW1510 - its exit code is in the JSON
            [*command, *fail_on, *target, *options.args],
            stdout=sys.stderr.fileno(),
            env=env,
        )
        with open(out) as data:
            return dict(json.load(data))


def _code(record: dict[str, Any]) -> str:
    return str(record.get("code", "")).split("#")[0].strip()


def _verdict(
    before: list[dict[str, Any]], applied: list[dict[str, Any]], after: dict[str, Any]
) -> dict[str, Any]:
    """Which fixed rows are gone from the new run, which harmful rows are left, and how it ended."""
    left = [r for r in after["findings"] if r["fix"] is not None]
    fixed_code = {
        (r["file"], code)
        for r in applied
        for code in (_code(r), str(r["edit"].get("code", "")).strip())
        if code
    }
    still = [r for r in left if (r["file"], _code(r)) in fixed_code]
    known = {(r["file"], _code(r)) for r in before}
    return {
        "exit": after["exit"],
        "error": after["error"],
        "ran_to_end": after["error"] is None and after["interrupted"] is None,
        "fixed_rows_gone": not still,
        "still": still,
        "left": left,
        "new": [r for r in left if (r["file"], _code(r)) not in known | fixed_code],
    }


def _verdict_text(verdict: dict[str, Any], options: argparse.Namespace) -> str:
    name = options.module or options.script
    ended = (
        "it ran to its end"
        if verdict["ran_to_end"]
        else f"it did not run to its end ({verdict['error'] or 'interrupted'})"
    )
    gone = (
        "every fixed row is gone"
        if verdict["fixed_rows_gone"]
        else f"{len(verdict['still'])} fixed row(s) are still there"
    )
    left = len(verdict["left"])
    return (
        f"Audited {name} again: {ended}, {gone}, {left} harmful row{'s' * (left != 1)} left "
        f"({len(verdict['new'])} new). Exit code {verdict['exit']['code']}: the new run's."
    )


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
    write_records(folder, token, outcome.report.to_records(), outcome.report.problems)
    return outcome.code


def main(argv: Sequence[str] | None = None) -> int:
    """``inplace_recipes audit [--json | --json-out FILE] [--fail-on ...] (script | -m module) [args...]``."""
    return _handle(parse(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
