"""Run the ``at[]`` conformance cases through JAX, array-api-extra and inplace_recipes.

``nox -s peers`` calls this:

    python docs/measurements/run_peers.py --output docs/measurements/peers.json

For every case of ``tests/at_cases.py`` (``AT_CASES``) it applies the case's
operation with

- ``jax.numpy``: ``jnp.asarray(x).at[index].<op>(values, mode=mode)``, with 64-bit
  mode on when ``x`` or the values are 64-bit;
- ``array_api_extra.at(x, index).<op>(values)`` on torch tensors, with its default
  ``copy=None`` (``mode`` is passed only when the case has one);
- ``inplace_recipes.at(x)[index].<op>(values, mode=mode)``;

and records each result, whether the input changed, and, for floating-point
cases, the gradient of ``sum(w * out)`` to ``x`` and to the values
(``jax.grad``; torch autograd, where array-api-extra runs with ``copy=True``,
since its default writes into the leaf). Index arrays go to torch as tensors.
What differs between the three is stated from the results, with what NumPy
says about the index (out of bounds, repeated positions).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import json
import multiprocessing
import platform
import re
import shlex
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import array_api_extra as xpx
import jax
import jax.numpy as jnp
import numpy as np
import torch

import inplace_recipes

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # docs/: the site's tooling
from peers import LIBRARIES, case_fingerprint

ROOT = Path(__file__).resolve().parents[2]
GRAD_OPS = {"set", "add", "subtract", "multiply", "divide", "power", "min", "max", "get"}


def _error(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:300]


def _torch_index(index: Any) -> Any:
    if isinstance(index, np.ndarray):
        return torch.as_tensor(index)
    if isinstance(index, tuple):
        return tuple(_torch_index(item) for item in index)
    return index


def _torch_values(values: Any) -> Any:
    """Arrays become tensors; NumPy scalars Python numbers (torch takes both in setitem)."""
    if isinstance(values, np.ndarray):
        return torch.as_tensor(values)
    if isinstance(values, np.generic):
        return values.item()
    return values


def _is_float(array: Any) -> bool:
    return isinstance(array, np.ndarray) and np.issubdtype(array.dtype, np.floating)


def _needs_x64(case: Any) -> bool:
    return any(
        isinstance(a, np.ndarray) and a.dtype.itemsize == 8 and a.dtype.kind in "fiuc"
        for a in (case.x, case.values)
    )


def _kwargs(case: Any) -> dict[str, Any]:
    return {"mode": case.mode} if case.mode is not None else {}


def _call(updater: Any, case: Any, values: Any, **extra: Any) -> Any:
    method = getattr(updater, case.op)
    if case.op == "get":
        return method(**_kwargs(case), **extra)
    return method(values, **_kwargs(case), **extra)


def _as_numpy(out: Any) -> np.ndarray:
    if isinstance(out, torch.Tensor):
        return out.detach().cpu().numpy()
    return np.asarray(out)


def _summary(out: Any) -> dict[str, Any]:
    array = _as_numpy(out)
    return {"value": array.tolist(), "dtype": str(array.dtype), "shape": list(array.shape)}


# -- one library, one case -------------------------------------------------------


def run_inplace_recipes(case: Any) -> dict[str, Any]:
    x = torch.as_tensor(case.x.copy())
    before = x.clone()
    try:
        out = _call(
            inplace_recipes.at(x)[_torch_index(case.index)], case, _torch_values(case.values)
        )
    except Exception as error:  # noqa: BLE001 - recorded
        return {"error": _error(error), "input_changed": not torch.equal(x, before)}
    return {**_summary(out), "error": None, "input_changed": not torch.equal(x, before)}


def run_array_api_extra(case: Any) -> dict[str, Any]:
    x = torch.as_tensor(case.x.copy())
    before = x.clone()
    updater = xpx.at(x, _torch_index(case.index))
    if not hasattr(updater, case.op):
        return {"n/a": f"array_api_extra.at has no {case.op}", "input_changed": False}
    try:
        out = _call(updater, case, _torch_values(case.values))
    except TypeError as error:
        if "unexpected keyword argument 'mode'" not in str(error):
            return {"error": _error(error), "input_changed": not torch.equal(x, before)}
        return {"n/a": _error(error), "input_changed": not torch.equal(x, before)}
    except Exception as error:  # noqa: BLE001 - recorded
        return {"error": _error(error), "input_changed": not torch.equal(x, before)}
    changed = not torch.equal(x, before)
    return {**_summary(out), "error": None, "input_changed": changed, "returned_input": out is x}


def run_jax(case: Any) -> dict[str, Any]:
    jax.config.update("jax_enable_x64", _needs_x64(case))
    x = case.x.copy()
    try:
        out = _call(jnp.asarray(x).at[case.index], case, case.values)
        result = {**_summary(out), "error": None}
    except Exception as error:  # noqa: BLE001 - recorded
        result = {"error": _error(error)}
    result["input_changed"] = not np.array_equal(x, case.x, equal_nan=_is_float(case.x))
    result["x64"] = _needs_x64(case)
    return result


# -- gradients -------------------------------------------------------------------------


def _weights(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    n = int(np.prod(shape))
    return (np.arange(1, n + 1, dtype=np.float64) / max(n, 1)).reshape(shape).astype(dtype)


def torch_gradients(case: Any, library: str, weights: np.ndarray) -> dict[str, Any]:
    x = torch.as_tensor(case.x.copy()).requires_grad_(True)
    leaves = [x]
    values = _torch_values(case.values)
    if isinstance(values, torch.Tensor) and values.is_floating_point():
        values = values.clone().requires_grad_(True)
        leaves.append(values)
    index = _torch_index(case.index)
    try:
        if library == "inplace_recipes":
            out = _call(inplace_recipes.at(x)[index], case, values)
        else:
            out = _call(xpx.at(x, index), case, values, copy=True)
        loss = (out * torch.as_tensor(weights)).sum()
        grads = torch.autograd.grad(loss, leaves, allow_unused=True)
    except Exception as error:  # noqa: BLE001 - recorded
        return {"error": _error(error)}
    named = dict(zip(["x", "values"], grads, strict=False))
    return {
        "error": None,
        **{
            f"grad_{name}": None if g is None else g.detach().numpy().tolist()
            for name, g in named.items()
        },
    }


def jax_gradients(case: Any, weights: np.ndarray) -> dict[str, Any]:
    jax.config.update("jax_enable_x64", _needs_x64(case))
    wrt_values = _is_float(case.values)

    def loss(x: Any, values: Any) -> Any:
        return jnp.sum(_call(x.at[case.index], case, values) * weights)

    try:
        grads = jax.grad(loss, argnums=(0, 1) if wrt_values else 0)(
            jnp.asarray(case.x), jnp.asarray(case.values) if wrt_values else case.values
        )
    except Exception as error:  # noqa: BLE001 - recorded
        return {"error": _error(error)}
    grads = grads if wrt_values else (grads,)
    names = ["x", "values"]
    return {
        "error": None,
        **{f"grad_{n}": np.asarray(g).tolist() for n, g in zip(names, grads, strict=False)},
    }


# -- comparing -------------------------------------------------------------------------


def _close(a: Any, b: Any, dtype: str) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if np.issubdtype(a.dtype, np.inexact) or np.issubdtype(b.dtype, np.inexact):
        tol = 1e-3 if "16" in dtype else 1e-5
        return bool(np.allclose(a, b, rtol=tol, atol=tol, equal_nan=True))
    return bool(np.array_equal(a, b))


def _short(value: Any, limit: int = 90) -> str:
    text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind_of(error: str) -> str:
    """An error without its figures: one kind for every case that raises it."""
    message = re.split(r": \[|\. |; ", error)[0]
    return re.sub(r"-?\d+", "N", message)[:120]


Difference = tuple[str, str]  # (kind, fact): the kind groups cases on the page


def _differences(name: str, ref: dict[str, Any], other: dict[str, Any]) -> list[Difference]:
    """What ``other`` did differently from inplace_recipes, in words made from the data."""
    found: list[Difference] = []
    mine, theirs = ref.get("error"), other.get("error")
    if mine or theirs:
        if mine and not theirs:
            found.append(
                (
                    f"inplace_recipes raises, {name} returns a result: {_kind_of(mine)}",
                    f"inplace_recipes raised {mine}; {name} returned {_short(other['value'])}",
                )
            )
        elif theirs and not mine:
            found.append((f"{name} raises: {_kind_of(theirs)}", f"{name} raised {theirs}"))
        elif mine.split(":")[0] != theirs.split(":")[0]:
            found.append(
                (
                    f"both raise, other exceptions: {name} {_kind_of(theirs)}",
                    f"{name} raised {theirs}; inplace_recipes {mine}",
                )
            )
        return found
    if ref["shape"] != other["shape"]:
        found.append(
            (
                f"{name} result has another shape",
                f"{name} result has shape {other['shape']}, inplace_recipes {ref['shape']}",
            )
        )
    elif not _close(ref["value"], other["value"], ref["dtype"]):
        a, b = np.asarray(ref["value"]), np.asarray(other["value"])
        differ = int(np.sum(~np.isclose(a, b, equal_nan=True))) if a.size else 0
        found.append(
            (
                f"{name} gives other values",
                (
                    f"{name} differs at {differ} of {a.size} positions: "
                    f"{_short(other['value'])} vs {_short(ref['value'])}"
                ),
            )
        )
    if ref["dtype"] != other["dtype"]:
        found.append(
            (
                f"{name} result dtype {other['dtype']}, inplace_recipes {ref['dtype']}",
                f"{name} result dtype {other['dtype']}, inplace_recipes {ref['dtype']}",
            )
        )
    return found


def _grad_differences(name: str, ref: dict[str, Any], other: dict[str, Any]) -> list[Difference]:
    mine, theirs = ref.get("error"), other.get("error")
    if mine or theirs:
        if bool(mine) != bool(theirs):
            who, error = (name, theirs) if theirs else ("inplace_recipes", mine)
            return [(f"{who} gradient raises: {_kind_of(error)}", f"{who} gradient raised {error}")]
        return []
    found: list[Difference] = []
    for part in ("x", "values"):
        a, b = ref.get(f"grad_{part}"), other.get(f"grad_{part}")
        if (a is None) != (b is None) or (
            a is not None and not _close(a, b, str(np.asarray(a).dtype))
        ):
            found.append(
                (
                    f"{name} gradient to {part} differs",
                    f"{name} gradient to {part}: {_short(b)} vs inplace_recipes {_short(a)}",
                )
            )
    return found


def numpy_facts(case: Any) -> list[str]:
    """What NumPy says about the case's index: out of bounds, repeated positions."""
    facts = []
    x = np.asarray(case.x)
    try:
        x[case.index]
    except IndexError as error:
        facts.append(f"NumPy: {_error(error)}")
        return facts
    except Exception as error:  # noqa: BLE001 - recorded as a fact too
        facts.append(f"NumPy refuses the index: {_error(error)}")
        return facts
    counts = np.zeros(x.shape, dtype=np.int64)
    try:
        np.add.at(counts, case.index, 1)
    except Exception:  # noqa: BLE001, S110 - not every index NumPy reads, ufunc.at takes
        pass
    else:
        if counts.max(initial=0) > 1:
            facts.append(f"the index writes {int((counts > 1).sum())} position(s) more than once")
    return facts


def run_case(case: Any) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = {
            "inplace_recipes": run_inplace_recipes(case),
            "jax": run_jax(case),
            "array_api_extra": run_array_api_extra(case),
        }
        ref = results["inplace_recipes"]
        gradients: dict[str, Any] = {}
        if _is_float(case.x) and case.op in GRAD_OPS and not ref.get("error"):
            weights = _weights(tuple(ref["shape"]), case.x.dtype)
            gradients = {
                "inplace_recipes": torch_gradients(case, "inplace_recipes", weights),
                "jax": jax_gradients(case, weights),
            }
            if "n/a" not in results["array_api_extra"]:
                gradients["array_api_extra"] = torch_gradients(case, "array_api_extra", weights)
    why: list[str] = []
    kinds: list[str] = []
    differs = []
    not_applicable = {n: r["n/a"] for n, r in results.items() if "n/a" in r}
    for name in LIBRARIES[1:]:
        if name in not_applicable:
            continue
        found = _differences(name, ref, results[name])
        if name in gradients and not results[name].get("error"):
            found += _grad_differences(name, gradients["inplace_recipes"], gradients[name])
        if found:
            differs.append(name)
            kinds += [kind for kind, _ in found]
            why += [fact for _, fact in found]
    for name, result in results.items():
        if result.get("error") and result.get("input_changed"):
            kinds.append(f"{name} raises after changing x")
            why.append(f"{name} raised, and x had already been changed")
    if why:
        facts = numpy_facts(case)
        why += facts + ([f"case note: {case.note}"] if case.note else [])
        # what NumPy says about the index qualifies each kind
        if any("more than once" in fact for fact in facts):
            kinds = [f"{kind} (index repeats positions)" for kind in kinds]
        if any(fact.startswith("NumPy: IndexError") for fact in facts):
            kinds = [f"{kind} (index out of bounds)" for kind in kinds]
    matches_expected = {}
    for name, result in results.items():
        if case.error is not None:
            error = result.get("error") or ""
            matches_expected[name] = error.startswith(case.error.__name__)
        elif case.expected is not None and "value" in result:
            matches_expected[name] = _close(result["value"], case.expected, result["dtype"])
        elif case.expected is not None:
            matches_expected[name] = False if "n/a" not in result else None
    return {
        "id": case.id,
        "source": case.source,
        "op": case.op,
        "mode": case.mode,
        "results": results,
        "gradients": gradients,
        "matches_expected": matches_expected,
        "not_applicable": not_applicable,
        "all_agree": not differs,
        "differs": differs,
        "kinds": kinds,
        "why": why,
    }


def _git_commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "HEAD")
    return commit + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def _worker_path(tests: str) -> None:
    sys.path.insert(0, tests)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True, help="the JSON file to write")
    parser.add_argument(
        "--cases", default="at_cases:AT_CASES", help="module:attribute of the cases (tests/)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (spawned)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    module, _, attribute = args.cases.partition(":")
    cases = getattr(importlib.import_module(module), attribute)
    start = time.perf_counter()
    records = []
    with contextlib.ExitStack() as stack:
        mapped: Any = map(run_case, cases)
        if args.jobs > 1:  # spawned workers: JAX must not be forked once initialised
            context = multiprocessing.get_context("spawn")
            pool = stack.enter_context(
                context.Pool(args.jobs, initializer=_worker_path, initargs=(str(ROOT / "tests"),))
            )
            mapped = pool.imap(run_case, cases, chunksize=8)
        for number, record in enumerate(mapped, 1):
            records.append(record)
            if number % 100 == 0 or number == len(cases):
                elapsed = time.perf_counter() - start
                sys.stderr.write(f"{number}/{len(cases)} cases, {elapsed:.0f} s\n")
    provenance = {
        "torch": torch.__version__,
        "jax": jax.__version__,
        "jaxlib": importlib.import_module("jaxlib").__version__,
        "array_api_extra": xpx.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": _git_commit(),
        "command": shlex.join(["python", *sys.argv]),  # as run, --jobs included
        "seconds": round(time.perf_counter() - start, 1),
    }
    result = {
        "provenance": provenance,
        "cases_fingerprint": case_fingerprint(cases),
        "summary": {
            "cases": len(records),
            "all_agree": sum(r["all_agree"] for r in records),
            **{
                f"{name} differs": sum(name in r["differs"] for r in records)
                for name in LIBRARIES[1:]
            },
            **{
                f"{name} n/a": sum(name in r["not_applicable"] for r in records)
                for name in LIBRARIES[1:]
            },
            **{
                f"{name} changed its input": sum(
                    r["results"][name].get("input_changed", False) for r in records
                )
                for name in LIBRARIES
            },
            **{
                f"{name} matches the expected": sum(
                    r["matches_expected"].get(name) is True for r in records
                )
                for name in LIBRARIES
            },
            "cases with an expected result or error": sum(
                bool(r["matches_expected"]) for r in records
            ),
        },
        "cases": records,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    # Write beside it, then rename: the folder's time stamp tells the docs build to re-run the page.
    partial = args.output.with_suffix(".partial")
    partial.write_text(json.dumps(result, indent=1) + "\n")
    partial.replace(args.output)
    sys.stdout.write(
        f"{json.dumps(result['summary'])} in {provenance['seconds']} s -> {args.output}\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
