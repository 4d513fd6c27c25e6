"""Every scenario of the suite, found as asv finds its benchmarks: every module under
`benchmarks/` imported, and the classes each one declares read.

A scenario is one module whose asv classes name a `Scenario` (`scenario = ...`, see
`snapshot_swap.py`); nothing else lists it. asv names a benchmark after the module that
declares it (`snapshot_swap.Correctness.track_wrong_elements`), and the report finds a
result's probe rows by that name, so a scenario is named as its module is (`scenarios`
refuses one that is not). Two modules declare asv benchmarks without a `Scenario`:
`snapshot_swap_configs` (the swap's controls under each configuration and input) and `corpus`
(generated programs); `benchmark_modules` lists them with the others.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

from .scenario import Scenario

BENCHMARK_PREFIXES = ("time_", "timeraw_", "mem_", "peakmem_", "track_")
"""The method names asv runs as benchmarks."""


def modules() -> list[ModuleType]:
    """Every module and package under `benchmarks/`, imported, in asv's order (by name)."""
    package = importlib.import_module(__package__)
    walked = pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
    return [importlib.import_module(info.name) for info in walked]


def benchmark_classes(module: ModuleType) -> list[type]:
    """The classes asv collects from `module`: public, not abstract, with a benchmark method."""
    return [
        value
        for name, value in vars(module).items()
        if not name.startswith("_")
        and inspect.isclass(value)
        and not inspect.isabstract(value)
        and any(attr.startswith(BENCHMARK_PREFIXES) for attr in dir(value))
    ]


def asv_name(module: ModuleType) -> str:
    """The first part of the names asv gives `module`'s benchmarks: its path under
    `benchmarks/`, dotted (`snapshot_swap`, `corpus`)."""
    return module.__name__.split(".", 1)[1]


def benchmark_modules() -> dict[str, ModuleType]:
    """Every module that declares asv benchmarks, by `asv_name`."""
    return {asv_name(m): m for m in modules() if benchmark_classes(m)}


def scenarios() -> dict[str, Scenario]:
    """Every `Scenario` an asv class names, by name, in module order. Raises ValueError for a
    scenario named otherwise than its module (its results would match no probe row)."""
    found = {}
    for name, module in benchmark_modules().items():
        for cls in benchmark_classes(module):
            scenario = getattr(cls, "scenario", None)
            if not isinstance(scenario, Scenario):
                continue
            if scenario.name != name:
                raise ValueError(
                    f"{module.__name__}.{cls.__name__} names the scenario {scenario.name!r}: "
                    f"name it {name!r}, as asv names its benchmarks ({name}.{cls.__name__}...)"
                )
            found[name] = scenario
    return found
