"""``python -m battery`` (from ``tests/``): the battery's counts, per axis."""

from __future__ import annotations

from .axes import counts, header

if __name__ == "__main__":
    for axis, (total, sampled) in counts().items():
        print(f"{axis:12} {total:6} cases, {sampled:5} in the default sample")
    print(header())
