"""Import every module the installed wheel ships and run each public function once.

``nox -s build`` runs it with ``python -I`` from a folder outside the source
tree, in a virtualenv whose torch is not the pin: every module must import
there (none may reach for ``docs/`` or ``tests/``), and every callable name
of the package's public ``__all__`` is called once below. A public name
with no call here fails the run, so a new one cannot go unchecked.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import pkgutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

import inplace_recipes as ir

#: ``--from-source``: check a source checkout instead (an editable install has no file list).
FROM_SOURCE = "--from-source" in sys.argv
if FROM_SOURCE:
    shipped = ["inplace_recipes"] + [
        info.name for info in pkgutil.walk_packages(ir.__path__, "inplace_recipes.")
    ]
else:
    shipped = [
        str(f).removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        for f in importlib.metadata.files("inplace-recipes") or []
        if str(f).startswith("inplace_recipes/") and str(f).endswith(".py")
    ]
assert len(shipped) > 20, shipped
for name in shipped:
    module = importlib.import_module(name)
    assert FROM_SOURCE or "site-packages" in str(module.__file__), (name, module.__file__)
print(f"imported {len(shipped)} modules of the wheel")

x = torch.rand(3, 4)
leaf = torch.rand(3, 4, requires_grad=True)
with tempfile.TemporaryDirectory() as tmp:
    results_file = Path(tmp) / "run.json"
    results_file.write_text('{"provenance": {}, "config": {}, "records": [], "checks": []}')
    noise = {"records": []}

    def _audited() -> None:
        y = leaf.sigmoid()
        y.sum().backward()

    #: One call per public callable, by its dotted name.
    CALLS: dict[str, Callable[[], Any]] = {
        "inplace_recipes.at": lambda: ir.at(x)[0].set(1.0),
        "inplace_recipes.audit": lambda: ir.audit(_audited),
        "inplace_recipes.best_recipe": lambda: ir.best_recipe(x, 0, 1.0),
        "inplace_recipes.compare_gradients": lambda: ir.compare_gradients(x, 0, 1.0).assert_ok(),
        "inplace_recipes.compatibility_matrix": lambda: ir.compatibility_matrix(
            ["where"], columns=["autograd"]
        ),
        "inplace_recipes.draw_graph": lambda: ir.draw_graph((leaf * 2).sum()),
        "inplace_recipes.explain": lambda: ir.explain(
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        ),
        "inplace_recipes.graph_nodes": lambda: ir.graph_nodes((leaf * 2).sum()),
        "inplace_recipes.inplace_setitem": lambda: ir.inplace_setitem(x.detach().clone(), 0, 1.0),
        "inplace_recipes.compare.tolerances": lambda: ir.compare.tolerances(torch.float32),
        "inplace_recipes.bench.run": lambda: ir.bench.run(
            ir.bench.Config(
                sizes=(100,),
                dtypes=("float32",),
                writes=("row",),
                entries=("inplace", "where"),
                compile_sizes=(),
                overhead_sizes=(),
                min_run_time=0.001,
                rounds=1,
                peak=False,
                attempts=1,
                instruction_sizes=(),
                audit=False,
            )
        ),
        "inplace_recipes.bench.load_results": lambda: ir.bench.load_results(results_file),
        "inplace_recipes.bench.find_record": lambda: ir.bench.find_record(
            noise, "where", "row", 100
        ),
        "inplace_recipes.bench.ratio_table": lambda: ir.bench.ratio_table(noise),
        "inplace_recipes.bench.noise_band": lambda: ir.bench.noise_band(noise),
        "inplace_recipes.bench.one_liners": lambda: ir.bench.one_liners("boolean"),
        "inplace_recipes.bench.saved_bytes": lambda: ir.bench.saved_bytes(
            ir.RECIPES["where"], leaf * 1, 0, 1.0
        ),
        "inplace_recipes.bench.peak_bytes": lambda: ir.bench.peak_bytes(
            lambda: (leaf * 2).sum().backward(), torch.device("cpu")
        ),
        "inplace_recipes.bench.ranking": lambda: ir.bench.ranking(noise),
        "inplace_recipes.bench.preferences": lambda: ir.bench.preferences(noise, band=1.1),
        "inplace_recipes.bench.tied_with_fastest": lambda: ir.bench.tied_with_fastest([], 1.1),
        "inplace_recipes.bench.tied_with_slowest": lambda: ir.bench.tied_with_slowest([], 1.1),
        "inplace_recipes.claims.verify": lambda: ir.claims.verify(
            "scatter_reduce_prod_drops_tangent"
        ),
        "inplace_recipes.claims.verify_all": lambda: ir.claims.verify_all(),
        "inplace_recipes.claims.expect": lambda: ir.claims.expect(True, "holds"),
        "inplace_recipes.claims.claim": lambda: ir.claims.claim("wheel_check", "it runs")(
            lambda: "ran"
        ),
        "inplace_recipes.error_reference.error_kind": lambda: ir.error_reference.error_kind(
            "view-of-leaf"
        ),
        "inplace_recipes.pytest_plugin.failing_rows": lambda: ir.pytest_plugin.failing_rows(
            [ir.audit(_audited)], "any"
        ),
        "inplace_recipes.pytest_plugin.failure_message": lambda: ir.pytest_plugin.failure_message(
            [], "any"
        ),
        "inplace_recipes.matrix.compile_inputs": lambda: ir.matrix.compile_inputs(x, 0, x[0]),
    }

    public = ["inplace_recipes"] + [
        info.name
        for info in pkgutil.walk_packages(ir.__path__, "inplace_recipes.")
        if not any(part.startswith("_") for part in info.name.split(".")[1:])
    ]
    # A call per function object: a name exported twice (``ir.explain`` and
    # ``inplace_recipes.error_reference.explain``) is one function, called once.
    calls = {}
    for full, call in CALLS.items():
        module_name, _, attr = full.rpartition(".")
        calls[id(getattr(importlib.import_module(module_name), attr))] = call
    recipes = {id(fn) for fn in ir.RECIPES.values()}
    done, missing = set(), []
    for module_name in public:
        module = importlib.import_module(module_name)
        for attr in getattr(module, "__all__", ()):
            value = getattr(module, attr)
            kind = isinstance(value, type) or hasattr(value, "__origin__")  # a class, a type alias
            if not callable(value) or kind or id(value) in done:
                continue  # constants, tables, classes and types; a function once
            done.add(id(value))
            if id(value) in recipes:
                value(x, 0, 1.0)
            elif id(value) in calls:
                calls[id(value)]()
            else:
                missing.append(f"{module_name}.{attr}")
    if missing:
        raise SystemExit(f"no call in tests/wheel/every_module.py for: {', '.join(missing)}")
print(f"called {len(done)} public functions of {len(public)} public modules")
