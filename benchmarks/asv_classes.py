"""The asv plumbing every scenario shares: a `Correctness` and a `Cost` class.

A scenario module subclasses both, mixing in a class that names its `scenario` and defines
`setup_cache` (see `snapshot_swap.py`). asv runs that `setup_cache` once per environment and
build for both classes: it probes every (control, backend, n) - compiling each once - and
returns the record, which asv hands to every benchmark's setup. The track_ benchmarks read
their number from it; they are the metrics of `metrics.py`, each a method made from its
entry there (`metrics.asv_benchmarks`) unless the class defines it. Only `time_warm_call`
compiles again (Inductor's caches make that a cache hit), because a compiled function cannot
travel between processes.

The parameters are always every size a scenario declares, whatever a knob says: a size that
`WRITEBACK_SIZES` leaves out is a skip with that reason, so a quick run never narrows what asv
knows (`results/benchmarks.json`). Expected states are skips with their reason (an API a build
lacks, a control wrong at the small correctness gate, valgrind missing); anything else that
goes wrong is a failure, an eager reference that breaks its own contract among them
(`HarnessFailure`: its count would read as a result).

The classes here are abstract (no `setup_cache`), so asv does not collect them on their own.
"""

from __future__ import annotations

import abc
import contextlib
import importlib
import os
import sys

import torch

from . import artifacts, metrics, pool
from .compat import Unsupported, build_key, set_single_thread, vector_isa
from .compiled import build
from .contract import check, require
from .machine import machine_name
from .probes import instructions
from .probes.probe import HarnessFailure, find_row, isa, probe_scenario, row_verdict
from .probes.runtime import FloorDefect
from .scenario import ASV_BACKENDS, COST_BACKEND, Scenario

INSTRUCTIONS_OFF = "not counted: WRITEBACK_INSTRUCTIONS=0"


def asv_command() -> str | None:
    """The asv step this process runs (`discover`, `run_server`, `setup_cache`, `run`), or None
    outside asv (`python -m asv.benchmark <step> ...`, asv's runner script)."""
    if len(sys.argv) > 1 and sys.argv[0].endswith("benchmark.py"):
        return sys.argv[1]
    return None


def in_asv_forkserver() -> bool:
    """Whether this process is asv's forkserver (`asv.benchmark run_server`): it lives for one
    build's whole run and imports the suite before the first setup_cache."""
    return asv_command() == "run_server"


PREIMPORTED = ("torch._inductor.config", "torch._inductor.compile_fx", "torch.utils.cpp_extension")
"""Modules torch imports lazily at a process's first compile (Inductor, its C++ builder and the
setuptools it loads): 1.7-2.5 s a process. asv's forkserver imports this module once and forks
a process per parameter combination, so importing them here imports them once per build, not
once per combination (they were most of each Cost combination's 1.8 s). A build without one
of them simply goes without. asv's discovery, which only lists the benchmarks and compiles
nothing, goes without them and without the ISA check."""
if asv_command() != "discover":
    for _module in PREIMPORTED:
        with contextlib.suppress(ImportError):
            importlib.import_module(_module)
    with contextlib.suppress(Unsupported):
        # Inductor's ISA check (a test library built and loaded per ISA, in a folder of its
        # own: `compat.vector_isa`) likewise once, not in every process that compiles (1.2 s)
        vector_isa()


ZYGOTE = instructions.serve_build() if in_asv_forkserver() else None
"""The build's callgrind zygote (`instructions.Zygote`): valgrind, torch and Inductor started
once a build, while the first setup_cache compiles, instead of once a costed scenario (20-30 s
of a core each); every setup_cache of the build counts in a fork of it. It leaves with the
forkserver. None where nothing is counted or outside the forkserver (a probe then starts its
own)."""


def inductor_cache(config: str = "default"):
    """This machine's, build's and ISA's Inductor cache for one compile configuration."""
    return artifacts.inductor_cache(machine_name(), build_key(), isa(), config)


def probe_for_asv(scenario: Scenario) -> dict:
    """The record for one build, compiled in an emptied cache of its own.
    `$WRITEBACK_INSTRUCTIONS=0` skips the callgrind count."""
    set_single_thread()
    count = os.environ.get("WRITEBACK_INSTRUCTIONS", "1") != "0"
    record = probe_scenario(
        scenario,
        sizes=scenario.chosen_sizes(),
        artifacts_root=artifacts.root(),
        count_instructions=count,
        inductor_cache=inductor_cache(),
        workers=pool.workers_wanted(),
        versions=benchmark_versions(scenario.name),
    )
    if not count:
        for row in record["rows"]:
            row["instructions_note"] = INSTRUCTIONS_OFF
    return record


def benchmark_versions(scenario: str) -> dict[str, str]:
    """The version asv records for each benchmark of `scenario`'s asv classes (the method's
    own `version`, else its class's), by asv's name for it (`module.Class.method`)."""
    versions = {}
    for cls in _CLASSES.get(scenario, []):
        module = cls.__module__.rpartition(".")[2]
        for name in (n for n in dir(cls) if n.startswith(("time_", "track_"))):
            version = getattr(getattr(cls, name), "version", cls.version)
            versions[f"{module}.{cls.__name__}.{name}"] = version
    return versions


def _usable(record: dict, control: str, backend: str, n: int, verdict_only=False) -> dict:
    """The probe row, or the skip/failure asv should record instead of a number.
    `verdict_only`: an error after the verdict was measured (in the cost stage) fails the
    Cost benchmarks, not the verdict. An eager reference that broke its own contract is a
    failure (`HarnessFailure`), never a number that would read as torch's result."""
    if why := _SCENARIOS[record["scenario"]].left_out(n):
        raise Unsupported(why)
    row = find_row(record, control, backend, n)
    where = f"{record['scenario']}.{control} ({backend}, n={n}) on torch {record['torch_version']}"
    if row["skipped"]:
        raise Unsupported(f"{where}: {row['skipped']}")
    if row.get("harness_failure"):
        raise HarnessFailure(f"{where}: harness failure: {row['harness_failure']}")
    if row["error"] and not (verdict_only and row["wrong_elements"] is not None):
        raise RuntimeError(f"{where} failed: {row['error']}")
    if row["wrong_elements"] is None:
        raise RuntimeError(f"{where}: not measured (stopped at the small correctness gate)")
    return row


def _require_instructions(record, control, n):
    """`track_instructions`' own setup: a failure where the counted code failed its checks,
    or where valgrind is here and the count failed; a skip where valgrind is missing, cannot run
    this ISA's code, or a knob turned the count off."""
    row = find_row(record, control, COST_BACKEND, n)
    if row.get("instructions_error"):
        raise RuntimeError(f"instructions not counted: {row['instructions_error']}")
    if row["scratch_bytes"] is None or row["instructions"] is not None:
        return
    note = row["instructions_note"]
    if note == INSTRUCTIONS_OFF or instructions.valgrind_problem(record.get("isa")):
        raise Unsupported(f"instructions not counted: {note}")
    raise RuntimeError(f"instructions not counted although valgrind is installed: {note}")


def _require_floor(record, control, n):
    """`track_time_over_floor`'s own setup: a skip where the floor could not be measured (no
    floor operands, no extension), a failure naming both times where it is defective."""
    row = find_row(record, control, COST_BACKEND, n)
    where = f"{record['scenario']}.{control} (n={n})"
    if row["floor_defect"]:
        raise FloorDefect(f"{where}: {row['floor_defect']}", row)
    if row["scratch_bytes"] is not None and row["time_over_floor"] is None:
        raise Unsupported(f"{where}: no time over floor: {row['floor_note']}")


_SCENARIOS: dict[str, Scenario] = {}
"""Every scenario with asv classes, by name: the record names its scenario, this finds it."""

_CLASSES: dict[str, list[type]] = {}
"""The asv classes of each scenario, by its name."""

_TIMED: dict[tuple[str, str, int], tuple] = {}
"""The compiled control and its inputs for `time_warm_call`, filled by its own setup."""


class _ScenarioBenchmarks(abc.ABC):
    scenario: Scenario
    timeout = 1800  # setup_cache compiles every control at every size, cold on a new build
    # asv shows only results whose benchmark version matches the code's; by default that is
    # a hash of the source, so any edit here would hide the whole history. Bump this (or one
    # metric's own `version` in metrics.py) when what a metric means changes, so old and new
    # numbers are never drawn as one line.
    version = "writeback-1"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "scenario"):
            _SCENARIOS[cls.scenario.name] = cls.scenario
            _CLASSES.setdefault(cls.scenario.name, []).append(cls)

    @abc.abstractmethod
    def setup_cache(self):
        """Return `probe_for_asv(self.scenario)`; defined in the scenario module."""


@metrics.asv_benchmarks(metrics.CONTRACT)
class Correctness(_ScenarioBenchmarks):
    """Does each control keep the snapshot contract, per backend and size? A number, never a
    raise for a wrong result, so `asv find` can bisect it."""

    param_names = ["control", "backend", "n"]

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.param_names = list(cls.scenario.param_names)
        cls.params = [
            [c.name for c in cls.scenario.controls],
            list(ASV_BACKENDS),
            list(cls.scenario.asv_sizes),
        ]

    def setup(self, record, control, backend, n):
        self.row = _usable(record, control, backend, n, verdict_only=True)


def _prepare_timed_call(record, control, n):
    """`time_warm_call`'s own setup (asv runs it after the class setup): compile the control
    in this process, check the contract on the very function that will be timed. Every call
    of it runs without grad, as the probe's verified compile does (grad mode is in dynamo's
    guards: a call with grad would time another compile).

    asv runs a benchmark's setup again before every sample when it has setup hooks (each
    sample is then one call); the control is compiled and checked once a process, and a later
    run of this setup keeps it: recompiling before each sample made a combination take 3-5 s
    of which the samples were milliseconds."""
    if (record["scenario"], control, n) in _TIMED:
        return
    scenario = _SCENARIOS[record["scenario"]]
    if scenario.calls_need_fresh_inputs:
        raise Unsupported(f"{scenario.name}: timing with fresh inputs per call is not built yet")
    chosen = scenario.control(control)
    artifacts.use_inductor_cache(inductor_cache())  # the cache setup_cache just filled
    fn = torch.no_grad()(build(chosen.fn, COST_BACKEND, chosen.fullgraph))
    first = scenario.case(chosen, n)
    fn(*first.inputs.values())  # compiles; a cache hit after setup_cache
    case = scenario.case(chosen, n)
    require(check(fn, case, reference=chosen.fn), f"{scenario.name}.{control} (timed, n={n})")
    inputs = scenario.case(chosen, n).inputs
    _TIMED[(scenario.name, control, n)] = (fn, tuple(inputs.values()))


@metrics.asv_benchmarks(
    metrics.COST,
    setups={
        "time_warm_call": _prepare_timed_call,
        "track_time_over_floor": _require_floor,
        "track_instructions": _require_instructions,
    },
)
class Cost(_ScenarioBenchmarks):
    """What a correct control costs under Inductor. Setup runs the gate (the contract at the
    smallest size), then the contract at its own size; a control wrong there is a skip naming
    the coordinate and the count (an expected state: the Correctness benchmarks record the
    fault), and is not measured."""

    param_names = ["control", "n"]
    # One asv process per combination (rounds = 1, asv's default is 2) and at most 5 s of
    # samples: each process compiles again (a cache hit) before timing, and the per-process
    # overhead was most of a build's time_warm_call seconds (the report's time table). With
    # setup hooks (these have), asv times one call a sample and runs the setups before each.
    rounds = 1
    warmup_time = 0.1  # the setup has called it twice already (compile, check)
    repeat = (10, 50, 5.0)
    sample_time = 0.01

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.params = [[c.name for c in cls.scenario.controls], list(cls.scenario.asv_sizes)]

    def setup(self, record, control, n):
        set_single_thread()
        name = record["scenario"]
        gate_size = _SCENARIOS[name].gate_size
        for size in dict.fromkeys((gate_size, n)):
            row = _usable(record, control, COST_BACKEND, size)
            verdict = row_verdict(row)
            if not verdict.ok:
                stage = "the small correctness gate" if size == gate_size else f"n={n}"
                raise Unsupported(f"wrong at {stage}: {verdict.describe()} "
                                  f"({name}.{control}, inductor) - not measured")  # fmt: skip
        self.row = _usable(record, control, COST_BACKEND, n)
        if self.row.get("cost_skipped"):
            raise Unsupported(f"{name}.{control} (n={n}): not costed: {self.row['cost_skipped']}")

    # The metrics' benchmarks (benchmarks/metrics.py, `asv_benchmarks`) read the row; these two
    # do more. Their docstrings, units, versions and setups come from the decorator too.
    def time_warm_call(self, record, control, n):
        fn, inputs = _TIMED[(record["scenario"], control, n)]
        fn(*inputs)

    def track_scratch_bytes(self, record, control, n):
        measured = self.row["scratch_bytes"]
        static = self.row["scratch_bytes_static"]
        if static is None:
            raise AssertionError(
                f"scratch measured {measured} bytes, but the wrapper's allocations could not be "
                f"simulated to cross-check it: {self.row['scratch_static_note']}"
            )
        if measured != static:
            raise AssertionError(
                f"scratch disagrees: the profiler measured {measured} bytes at peak, the "
                f"generated wrapper allocates {static} bytes at peak (code: {self.row['code_dir']})"
            )
        return measured
