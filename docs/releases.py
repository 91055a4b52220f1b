"""Other torch releases: the committed runs of the site's checks, side by side.

``nox -s releases`` runs, on the pinned torch and on each other release it
installs, the error reference's repros, every claim of
:mod:`inplace_recipes.claims`, the compatibility matrix and the conformance
suites, and commits one JSON file per release to ``docs/measurements/releases/``.
:func:`side_by_side` lines them up against the pin; :func:`stale_reasons`
says when a file no longer covers what the tree checks today.

>>> row = Row("claim", "x", {"2.13.0": "holds", "2.14.1": "fixed"}, "2.13.0")
>>> row.changed, row.changed_in
(True, ['2.14.1'])
"""

from __future__ import annotations

import ast
import doctest
import hashlib
import html
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import committed

from inplace_recipes.claims import CLAIMS
from inplace_recipes.matrix import COLUMNS, default_rows

__all__ = [
    "CONFORMANCE_FILES",
    "ERRORS_PAGE",
    "RESULTS_DIR",
    "ROOT",
    "Comparison",
    "ErrorExample",
    "HTMLTable",
    "Row",
    "conformance_tests",
    "error_examples",
    "fingerprints",
    "load_results",
    "other_releases",
    "pinned_torch",
    "side_by_side",
    "stale_reasons",
    "supported_torch",
]

#: The source tree (the runs read the error page and the test suites there).
ROOT = committed.ROOT
RESULTS_DIR = committed.MEASUREMENTS / "releases"
ERRORS_PAGE = ROOT / "docs" / "errors.md"
#: The conformance suites the run executes.
CONFORMANCE_FILES: tuple[str, ...] = (
    "tests/test_conformance_torch_indexing.py",
    "tests/test_at_conformance.py",
)
#: What the page says of a bug claim that no longer holds.
FIXED = "fixed (the bug is gone)"
#: The command that rewrites every file in :data:`RESULTS_DIR`.
REFRESH = "nox -s releases"


def _toml_array(pyproject: Path, table: str, key: str) -> str:
    """The text inside ``key = [...]`` of ``[table]`` (read as text: tomllib is Python 3.11+)."""
    body = pyproject.read_text().partition(f"[{table}]")[2].partition("\n[")[0]
    found = re.search(rf"^{re.escape(key)}\s*=\s*\[(.*?)\]", body, re.MULTILINE | re.DOTALL)
    return found.group(1) if found else ""


def pinned_torch(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The torch release the docs are verified on: ``torch==X`` in the ``pin`` dependency group.

    The nox sessions that build and test the site install that group; the
    package itself asks only for :func:`supported_torch`.
    """
    found = re.search(
        r"[\"']torch\s*==\s*([\w.+]+)[\"']", _toml_array(pyproject, "dependency-groups", "pin")
    )
    if found:
        return found.group(1)
    raise ValueError(f"{pyproject} pins no torch release (no 'torch==X' in dependency group 'pin')")


def other_releases(noxfile: Path = ROOT / "noxfile.py") -> list[str]:
    """The releases besides the pin that ``nox -s releases`` runs: ``OTHER_TORCH_RELEASES``.

    Read from the noxfile's text, not imported (nox need not be installed).
    """
    for node in ast.parse(noxfile.read_text()).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            named = any(getattr(t, "id", None) == "OTHER_TORCH_RELEASES" for t in targets)
            if named and node.value is not None:
                return list(ast.literal_eval(node.value))
    raise ValueError(f"{noxfile} sets no OTHER_TORCH_RELEASES")


def supported_torch(pyproject: Path = ROOT / "pyproject.toml") -> str:
    """The torch releases the package installs beside: its ``torch`` dependency's specifier."""
    found = re.search(
        r"[\"']torch\s*([<>=!~][^\"';]*)[\"']", _toml_array(pyproject, "project", "dependencies")
    )
    if found:
        return found.group(1).strip()
    raise ValueError(f"{pyproject} declares no torch dependency with a version range")


# -- the error reference's repros ----------------------------------------------


@dataclass(frozen=True)
class ErrorExample:
    """One ``>>>`` example of the error page: its section, code, expected output."""

    section: str
    source: str
    want: str
    exc_msg: str | None
    flags: int


_LABEL = re.compile(r"^\((error-[\w-]+)\)=\s*$")
_HEADING = re.compile(r"^#{2,}\s+(.+?)\s*$")
_FENCE = re.compile(r"^```\{doctest\}\s*$")


def error_examples(page: Path = ERRORS_PAGE) -> list[ErrorExample]:
    """Every doctest example of the error page, in order, with its section.

    The section is the label above the example's heading (``error-leaf``), or
    the heading itself where it has no label. The flags are the site's (``ELLIPSIS``) with each block's ``:options:``.

    >>> import tempfile
    >>> from pathlib import Path
    >>> page = Path(tempfile.mkdtemp()) / "errors.md"
    >>> _ = page.write_text("(error-leaf)=\\n## A leaf\\n```{doctest}\\n>>> 1 + 1\\n2\\n```\\n")
    >>> [(e.section, e.source, e.want) for e in error_examples(page)]
    [('error-leaf', '1 + 1\\n', '2\\n')]
    """
    parser = doctest.DocTestParser()
    examples: list[ErrorExample] = []
    section = ""
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        label = _LABEL.match(lines[i])
        if label:
            section = label.group(1)
        heading = _HEADING.match(lines[i])
        if heading and not (i and _LABEL.match(lines[i - 1])):
            section = heading.group(1).replace("`", "")
        if _FENCE.match(lines[i]):
            i += 1
            flags = doctest.ELLIPSIS | doctest.DONT_ACCEPT_TRUE_FOR_1
            while lines[i].startswith(":"):
                for option in re.findall(r"([+-])(\w+)", lines[i].partition(":options:")[2]):
                    bit = doctest.OPTIONFLAGS_BY_NAME[option[1]]
                    flags = flags | bit if option[0] == "+" else flags & ~bit
                i += 1
            block = []
            while not lines[i].startswith("```"):
                block.append(lines[i])
                i += 1
            for example in parser.get_examples("\n".join(block) + "\n"):
                examples.append(
                    ErrorExample(section, example.source, example.want, example.exc_msg, flags)
                )
        i += 1
    return examples


# -- what a run covers -----------------------------------------------------------


def _digest(items: Iterable[Any]) -> str:
    text = json.dumps(list(items), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def fingerprints() -> dict[str, str]:
    """What the tree checks today, one short hash per part of a run.

    A committed run whose hashes differ was made on other examples, claims,
    matrix rows or suites: it is stale.
    """
    return {
        "errors": _digest((e.section, e.source, e.want) for e in error_examples()),
        "claims": _digest((c.name, c.statement, c.bug) for c in CLAIMS.values()),
        "matrix": _digest([list(default_rows()), list(COLUMNS)]),
        "conformance": _digest(conformance_tests()),
    }


def conformance_tests() -> list[str]:
    """The ids of every test in the conformance suites, as pytest collects them.

    They, not the files' text, decide freshness: reformatting a suite does not
    make a run stale; adding, removing or renaming a test or a case does.
    """
    present = [name for name in CONFORMANCE_FILES if (ROOT / name).exists()]
    if not present:
        return []
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            *present,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 5):  # 5: no tests collected
        raise RuntimeError(f"pytest cannot collect the conformance suites:\n{done.stdout[-2000:]}")
    return sorted(line for line in done.stdout.splitlines() if "::" in line)


_PARTS = {
    "errors": "error page examples",
    "claims": "claims",
    "matrix": "matrix rows or columns",
    "conformance": "conformance suites",
}


def load_results(directory: Path = RESULTS_DIR) -> dict[str, dict[str, Any]]:
    """Every committed run, by torch release (``2.14.1``), oldest release first."""
    runs = {}
    for path in directory.glob("torch-*.json"):
        run = json.loads(path.read_text())
        runs[run["provenance"]["release"]] = run
    return dict(sorted(runs.items(), key=lambda item: _release_key(item[0])))


def _release_key(release: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", release))


def stale_reasons(
    runs: Mapping[str, Mapping[str, Any]], pin: str, releases: Sequence[str] = ()
) -> list[str]:
    """Why the committed runs do not describe the tree today (empty when they do).

    ``releases`` are the ones the comparison promises besides the pin.
    """
    reasons = []
    if pin not in runs:
        reasons.append(f"no run on the pinned torch {pin}")
    for release in releases:
        if release not in runs:
            reasons.append(f"no run on torch {release}")
    now = fingerprints()
    for release, run in runs.items():
        made = run.get("fingerprints", {})
        changed = [part for part, digest in now.items() if made.get(part) != digest]
        if changed:
            what = ", ".join(_PARTS[part] for part in changed)
            reasons.append(f"torch-{release}.json was made on other {what} than the tree has")
    return reasons


# -- side by side ------------------------------------------------------------------


class HTMLTable(str):
    """An HTML table that Jupyter and sphinx-gallery render as HTML."""

    def _repr_html_(self) -> str:
        return str(self)


@dataclass(frozen=True)
class Row:
    """One thing checked (a message, a claim, a matrix cell) on every release."""

    kind: str
    label: str
    values: dict[str, str]
    baseline: str
    note: str = ""

    @property
    def changed_in(self) -> list[str]:
        """The releases whose value differs from the baseline's."""
        base = self.values.get(self.baseline)
        return [r for r, v in self.values.items() if r != self.baseline and v != base]

    @property
    def changed(self) -> bool:
        """Whether any release differs from the baseline."""
        return bool(self.changed_in)


@dataclass
class Comparison:
    """Every row of every part, and the runs they come from."""

    baseline: str
    releases: list[str]
    provenance: dict[str, dict[str, Any]]
    rows: dict[str, list[Row]] = field(default_factory=dict)

    def changes(self, kind: str | None = None) -> list[Row]:
        """The rows where another release differs from the baseline."""
        kinds = [kind] if kind else list(self.rows)
        return [row for k in kinds for row in self.rows.get(k, []) if row.changed]

    def fixed_bugs(self) -> list[tuple[Row, list[str]]]:
        """Bug claims that hold on the baseline and not on a newer release."""
        return [
            (row, [r for r in row.changed_in if row.values[r] == FIXED])
            for row in self.rows.get("claims", [])
            if row.note == "bug" and row.values.get(self.baseline) == "holds"
        ]

    def table(self, kind: str, *, only_changed: bool = False) -> HTMLTable:
        """:meth:`to_html` as an object that notebooks and the gallery show as a table."""
        return HTMLTable(self.to_html(kind, only_changed=only_changed))

    def to_html(self, kind: str, *, only_changed: bool = False) -> str:
        """One part as an HTML table; a value that differs from the baseline is marked."""
        head = "".join(f"<th>{html.escape(h)}</th>" for h in ["", *self.releases])
        body = []
        for row in self.rows.get(kind, []):
            if only_changed and not row.changed:
                continue
            cells = []
            for release in self.releases:
                text = html.escape(row.values.get(release, "(not run)"))
                if release in row.changed_in:
                    text = f"<mark>{text}</mark>"
                cells.append(f"<td>{text}</td>")
            body.append(f"<tr><th>{html.escape(row.label)}</th>{''.join(cells)}</tr>")
        if not body:
            return f"<p>None differs from torch {html.escape(self.baseline)}.</p>"
        return (
            f'<table class="release-comparison"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>"
        )

    def summary(self) -> str:
        """One line per part: how many rows, how many differ from the baseline."""
        lines = []
        for kind, rows in self.rows.items():
            changed = sum(row.changed for row in rows)
            lines.append(f"{kind}: {len(rows)} checked, {changed} differ from {self.baseline}")
        return "\n".join(lines)


def _error_rows(runs: Mapping[str, Mapping[str, Any]], baseline: str) -> list[Row]:
    by_key: dict[tuple[str, str], dict[str, str]] = {}
    for release, run in runs.items():
        for example in run["errors"]["examples"]:
            if not example["expected_exception"]:
                continue
            key = (example["section"], example["source"].strip())
            by_key.setdefault(key, {})[release] = example["observed"]
    return [
        Row("errors", f"{section}: {source.splitlines()[-1]}", values, baseline)
        for (section, source), values in by_key.items()
    ]


def _claim_rows(runs: Mapping[str, Mapping[str, Any]], baseline: str) -> list[Row]:
    by_name: dict[str, dict[str, str]] = {}
    notes: dict[str, str] = {}
    for release, run in runs.items():
        for record in run["claims"]["records"]:
            state = "holds"
            if not record["holds"]:
                broken = record["observed"].startswith("ClaimBroken")
                state = "no longer holds" if broken else f"repro fails: {record['observed']}"
                if record["bug"] and broken:
                    state = FIXED
            by_name.setdefault(record["statement"], {})[release] = state
            notes[record["statement"]] = "bug" if record["bug"] else ""
    return [Row("claims", s, v, baseline, notes[s]) for s, v in by_name.items()]


def _matrix_rows(runs: Mapping[str, Mapping[str, Any]], baseline: str) -> list[Row]:
    by_cell: dict[str, dict[str, str]] = {}
    for release, run in runs.items():
        for cell in run["matrix"]["cells"]:
            text = cell["status"] + (f": {cell['detail']}" if cell["detail"] else "")
            by_cell.setdefault(f"{cell['row']} / {cell['column']}", {})[release] = text
    return [Row("matrix", label, values, baseline) for label, values in by_cell.items()]


def _conformance_rows(runs: Mapping[str, Mapping[str, Any]], baseline: str) -> list[Row]:
    by_test: dict[str, dict[str, str]] = {}
    for release, run in runs.items():
        for test in run["conformance"]["tests"]:
            outcome = test["outcome"] + (f": {test['message']}" if test["message"] else "")
            by_test.setdefault(test["id"], {})[release] = outcome
    return [Row("conformance", test, values, baseline) for test, values in by_test.items()]


def side_by_side(
    runs: Mapping[str, Mapping[str, Any]] | None = None, baseline: str | None = None
) -> Comparison:
    """Line up every committed run against the baseline (the pin by default)."""
    runs = load_results() if runs is None else runs
    baseline = pinned_torch() if baseline is None else baseline
    if baseline not in runs:
        raise ValueError(f"no run on the baseline torch {baseline}; run: {REFRESH}")
    releases = [baseline, *(r for r in runs if r != baseline)]
    ordered = {r: runs[r] for r in releases}
    return Comparison(
        baseline,
        releases,
        {r: dict(run["provenance"]) for r, run in ordered.items()},
        {
            "errors": _error_rows(ordered, baseline),
            "claims": _claim_rows(ordered, baseline),
            "matrix": _matrix_rows(ordered, baseline),
            "conformance": _conformance_rows(ordered, baseline),
        },
    )
