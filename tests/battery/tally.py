"""``python -m battery.tally LOG``: the verdicts a ``BATTERY_LOG`` run wrote, counted.

Counts per class of difference, per axis and per writer, then every distinct
message (numbers and dtypes folded, so that one cause is one line) with its
count and a case that shows it; ``--json`` writes the same as JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

from .verdict import FAILING

_FOLD = (
    (re.compile(r"torch\.(u?int\d+|float\d+|bfloat16|complex\d+|bool)\b"), "torch.DTYPE"),
    (
        re.compile(
            r"\b(Half|BFloat16|Float|Double|ComplexFloat|ComplexDouble|Long|Int|Short|Char|Byte|Bool|UInt\d+)\b"
        ),
        "DTYPE",
    ),
    (re.compile(r"\bu?int\d+_t\b|\bat::(Half|BFloat16)\b"), "CTYPE"),
    (re.compile(r"-?\d+(\.\d+)?(e[+-]?\d+)?"), "N"),
    (re.compile(r"\[[N, ]*\]"), "[..]"),
)


def signature(detail: str) -> str:
    """The message with numbers, shapes and dtypes folded.

    >>> signature("values differ at 2 of 12 entries (first at 4: got 2, want 254)")
    'values differ at N of N entries (first at N: got N, want N)'
    """
    for pattern, word in _FOLD:
        detail = pattern.sub(word, detail)
    return detail[:220]


def tally(lines: list[dict[str, object]]) -> dict[str, object]:
    by_category: Counter[str] = Counter()
    by_axis: dict[str, Counter[str]] = defaultdict(Counter)
    by_writer: dict[str, Counter[str]] = defaultdict(Counter)
    messages: dict[tuple[str, str], list[str]] = defaultdict(list)
    seconds: Counter[str] = Counter()
    for line in lines:
        case, category = str(line["case"]), str(line["category"])
        axis, writer = case.split("/")[:2]
        by_category[category] += 1
        by_axis[axis][category] += 1
        by_writer[writer][category] += 1
        seconds[axis] += float(line.get("seconds", 0.0))  # type: ignore[arg-type]
        if category in FAILING or category == "documented difference":
            messages[category, signature(str(line["detail"]))].append(case)
    return {
        "cases": len(lines),
        "categories": dict(by_category),
        "axes": {a: dict(c) for a, c in by_axis.items()},
        "writers": {w: dict(c) for w, c in by_writer.items()},
        "seconds": {a: round(s, 1) for a, s in seconds.items()},
        "messages": [
            {
                "category": c,
                "message": m,
                "count": len(ids),
                "writers": sorted({i.split("/")[1] for i in ids}),
                "example": ids[0],
            }
            for (c, m), ids in sorted(messages.items(), key=lambda kv: (kv[0][0], -len(kv[1])))
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m battery.tally")
    parser.add_argument("log", type=Path)
    parser.add_argument("--json", type=Path, help="write the tally as JSON here")
    args = parser.parse_args(argv)
    lines = [json.loads(t) for t in args.log.read_text(encoding="utf-8").splitlines() if t.strip()]
    first: dict[str, dict[str, object]] = {}
    for line in lines:  # a case run twice counts once, as it first ran
        first.setdefault(str(line["case"]), line)
    lines = list(first.values())
    result = tally(lines)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    out = sys.stdout
    out.write(f"{result['cases']} cases: {result['categories']}\n")
    for axis, counts in result["axes"].items():  # type: ignore[attr-defined]
        out.write(f"  {axis:11} {counts}  ({result['seconds'][axis]} s)\n")  # type: ignore[index]
    for writer, counts in result["writers"].items():  # type: ignore[attr-defined]
        out.write(f"  {writer:15} {counts}\n")
    for m in result["messages"]:  # type: ignore[attr-defined]
        out.write(
            f"{m['count']:6}  {m['category']}: {m['message']}\n        {', '.join(m['writers'])}\n        e.g. {m['example']}\n"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
