"""``at[]`` next to its peers: the committed run of the same cases through JAX's
``x.at[]``, ``array_api_extra.at`` on torch tensors and :func:`inplace_recipes.at`.

``nox -s peers`` runs the conformance cases of ``tests/at_cases.py`` through
all three and commits ``docs/measurements/peers.json``; :func:`disagreements` reads
it for the ``at[]`` page, and :func:`case_fingerprint` tells whether it was
made on the cases the tree has today.

>>> case_fingerprint([]) == case_fingerprint(())
True
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import committed
from releases import HTMLTable

__all__ = [
    "CASE_INPUTS",
    "LIBRARIES",
    "PEERS_FILE",
    "by_kind",
    "by_source",
    "canonical",
    "case_fingerprint",
    "disagreements",
    "load_peers",
    "misses",
    "table",
    "to_html",
]

PEERS_FILE = committed.MEASUREMENTS / "peers.json"
#: The command that rewrites :data:`PEERS_FILE`.
REFRESH = "nox -s peers"
#: The three implementations, in table order.
LIBRARIES = ("inplace_recipes", "jax", "array_api_extra")


def canonical(obj: Any) -> Any:
    """A JSON-able form of a case field that keeps every distinction an index makes.

    >>> canonical((slice(1, None), None, Ellipsis, [True]))
    ['tuple', [['slice', 1, None, None], ['None'], ['Ellipsis'], ['list', [['bool', 'True']]]]]
    """
    if obj is None:
        return ["None"]
    if obj is Ellipsis:
        return ["Ellipsis"]
    if isinstance(obj, slice):
        return ["slice", obj.start, obj.stop, obj.step]
    if isinstance(obj, tuple | list):
        return [type(obj).__name__, [canonical(item) for item in obj]]
    if isinstance(obj, type):
        return ["type", obj.__name__]
    if hasattr(obj, "dtype") and hasattr(obj, "tolist"):  # a NumPy array or scalar
        return ["array", str(obj.dtype), list(getattr(obj, "shape", ())), obj.tolist()]
    if isinstance(obj, bool | int | float | complex | str):
        return [type(obj).__name__, repr(obj)]
    raise TypeError(f"no canonical form for {type(obj).__name__}")


#: The fields that say what a case is. ``expected`` is left out on purpose: it
#: is NumPy's computed answer, and ``np.power`` rounds the last bit of 46 of
#: the float64 answers differently with and without AVX-512, so a hash of it
#: changes with the machine that imports ``tests/at_cases.py``.
CASE_INPUTS = ("id", "source", "x", "index", "op", "values", "mode", "error", "note")


def _case_record(case: Any) -> list[Any]:
    return [canonical(getattr(case, name, None)) for name in CASE_INPUTS]


def case_fingerprint(cases: Iterable[Any]) -> str:
    """A short hash of what every case is (:data:`CASE_INPUTS`), in order.

    It depends on the cases' inputs alone, never on a computed answer, so it is
    the same on every machine and in every environment.
    """
    text = json.dumps([_case_record(case) for case in cases])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def load_peers(path: Path = PEERS_FILE) -> dict[str, Any]:
    """The committed run (see ``docs/measurements/README.md``)."""
    result: dict[str, Any] = json.loads(path.read_text())
    return result


def disagreements(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cases where the three do not all give the same value and gradients."""
    return [case for case in run["cases"] if not case["all_agree"]]


def by_source(run: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per source of the cases (the peer test they were ported from): how many agree,
    and how many each library got right against the case's own expected answer
    (NumPy's result, or the error the case expects), which no library computed.

    >>> case = {"source": "t", "all_agree": False, "differs": ["jax"],
    ...         "matches_expected": {"inplace_recipes": False, "jax": True}}
    >>> by_source({"cases": [case]})["t"]["inplace_recipes matches the expected"]
    0
    """
    counts: dict[str, dict[str, int]] = {}
    for case in run["cases"]:
        entry = counts.setdefault(
            case["source"],
            {"cases": 0, "all agree": 0, **{f"{n} matches the expected": 0 for n in LIBRARIES}},
        )
        entry["cases"] += 1
        entry["all agree"] += case["all_agree"]
        for name in case["differs"]:
            entry[f"{name} differs"] = entry.get(f"{name} differs", 0) + 1
        for name, matched in case["matches_expected"].items():
            entry[f"{name} matches the expected"] += matched is True
    return counts


def misses(run: Mapping[str, Any], name: str = "inplace_recipes") -> dict[str, int]:
    """The cases where ``name`` does not give the expected answer, by what it did
    instead: the error it raised, or ``"another result"`` (most cases first).

    >>> case = {"matches_expected": {"inplace_recipes": False},
    ...         "kinds": ["inplace_recipes raises, jax returns a result: ValueError: step"]}
    >>> misses({"cases": [case]})
    {'raises ValueError: step': 1}
    """
    counts: dict[str, int] = {}
    prefix = f"{name} raises, "
    for case in run["cases"]:
        if case["matches_expected"].get(name) is not False:
            continue
        raised = next((k for k in case["kinds"] if k.startswith(prefix)), None)
        kind = "raises " + raised.split(": ", 1)[1] if raised else "another result"
        counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def by_kind(run: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every kind of difference the run found (most cases first): how many cases show
    it, a few of their ids, and everything the run observed on the first one."""
    groups: dict[str, dict[str, Any]] = {}
    for case in run["cases"]:
        for kind in dict.fromkeys(case["kinds"]):
            group = groups.setdefault(kind, {"kind": kind, "cases": 0, "ids": [], "why": []})
            group["cases"] += 1
            if len(group["ids"]) < 3:
                group["ids"].append(case["id"])
            group["why"] = group["why"] or case["why"]
    return sorted(groups.values(), key=lambda g: (-g["cases"], g["kind"]))


def table(run: Mapping[str, Any]) -> HTMLTable:
    """:func:`to_html` of the run, as an object notebooks and the gallery show as a table."""
    return HTMLTable(to_html(by_kind(run)))


def to_html(groups: Iterable[Mapping[str, Any]]) -> str:
    """The kinds of difference as an HTML table, with what was observed on one case."""
    head = "<tr><th>what differs</th><th>cases</th><th>observed on the first case</th></tr>"
    body = []
    for group in groups:
        ids = "<br>".join(f"<code>{html.escape(i)}</code>" for i in group["ids"])
        observed = "<br>".join(html.escape(fact) for fact in group["why"])
        body.append(
            f"<tr><td>{html.escape(group['kind'])}</td><td>{group['cases']}<br>"
            f"<small>e.g. {ids}</small></td><td><small>{observed}</small></td></tr>"
        )
    return f'<table class="peers"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'
