"""Where the committed runs live in the source tree, and how the site reads them.

The package measures (``inplace_recipes.bench``) but knows nothing of this
repository: its committed benchmark run, the runs on other torch releases
and against JAX and array-api-extra are files under ``docs/measurements/``,
read by the pages and the tests through this module.

>>> BENCH.name
'cpu-full.json'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inplace_recipes import bench

__all__ = ["BENCH", "MEASUREMENTS", "ROOT", "bench_results"]

#: The repository's root.
ROOT = Path(__file__).resolve().parents[1]
#: Every committed run, with its provenance, and the scripts that make them.
MEASUREMENTS = ROOT / "docs" / "measurements"
#: The committed benchmark run (``docs/measurements/bench/README.md`` says how it is made).
BENCH = MEASUREMENTS / "bench" / "cpu-full.json"


def bench_results() -> dict[str, Any]:
    """The committed benchmark run."""
    return bench.load_results(BENCH)
