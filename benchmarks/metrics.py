"""Every metric the suite records, once: what asv, the report, the standalone check, the
expected files and the verdict page know of it.

Adding a metric: compute it (`probes/generated_code.py`, `probes/runtime.py`, ...), write it
into the probe row under its `row_key` (`probes/probe.py`; a corpus metric is a
`count_<name>(record, backend)` in `corpus/run.py` instead), and add its `Metric` to `METRICS`.
From that entry
- the asv classes get its benchmark method (`asv_benchmarks`), with its unit and, where it has
  one, its version (the classes' own `version` otherwise);
- tools/render.py gives a Cost metric a column of the cost table (the report's and the
  check's), under its `label`;
- tools/expected.py gates it in `expected/<isa>.csv`, exactly or within a `Noisy` margin;
- tools/verdict_page.py charts it over the builds where it has a `chart` title;
- the standalone check's JSON rows carry its row key.

Benchmark names, units and versions are asv's public interface: a changed one starts a new
line in asv's graphs. Bump a metric's `version` when what it means changes, so old and new
numbers are never drawn as one line.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

CONTRACT = "contract"
"""A scenario's `Correctness` class, per (control, backend, n) or (control, variant): a count
of the snapshot contract's verdict, read from the probe row. An eager row above 0 is a
harness failure."""
COST = "cost"
"""A scenario's `Cost` class, per (control, n): a figure of the Inductor row of a correct
control."""
CORPUS = "corpus"
"""`corpus.Correctness`, per (backend, corpus): `corpus/run.py`'s `count_<name>(record,
backend)` of the named corpus's record."""


@dataclass(frozen=True)
class Exact:
    """An integer count gated exactly: margin 0, any change is a real change."""

    def rounded(self, value: float) -> int:
        return int(value)

    def least_margin(self, value: float) -> float:
        return 0

    def margin(self, value: float, row: dict, stability: dict) -> float:
        return 0


@dataclass(frozen=True)
class Noisy:
    """A figure that moves between runs, gated within a margin, in both directions.

    The expected value is rounded to `decimals` (0: an integer). The margin is the largest of
    - the least margin: `least_relative` of the value, and `least_absolute`; it also holds for
      the rows of an existing expected file, whatever margin they were written with;
    - the spread tools/stability.py recorded for the control (its figure `spread`: max/min - 1,
      or max/min where `spread_is_ratio`), times the value;
    - 3 x the interquartile half-range of the probe row's per-round samples (`iqr`: the row
      key of their [q25, q75]), where the metric has one;
    rounded up to an integer at 0 decimals, else rounded to `decimals`."""

    decimals: int
    least_relative: float
    least_absolute: float = 0
    spread: str = ""
    spread_is_ratio: bool = False
    iqr: str = ""

    def rounded(self, value: float) -> float:
        return int(round(value)) if self.decimals == 0 else round(value, self.decimals)

    def least_margin(self, value: float) -> float:
        return self._round_up(max(value * self.least_relative, self.least_absolute))

    def margin(self, value: float, row: dict, stability: dict) -> float:
        figure = stability.get(self.spread)
        spread = (figure or 1.0) - 1.0 if self.spread_is_ratio else figure or 0.0
        low, high = (row.get(self.iqr) if self.iqr else None) or (value, value)
        widest = max(3 * (high - low) / 2, value * spread, self.least_margin(value))
        return self._round_up(widest)

    def _round_up(self, margin: float) -> float:
        return math.ceil(margin) if self.decimals == 0 else round(margin, self.decimals)


EXACT = Exact()

INSTRUCTIONS_BETWEEN_ENVIRONMENTS = 64
"""The most a count moved between two environments of one machine and build: from new clones
-24 to +44 (results/logs/expected-avx2-between-environments.txt), then -43 to +55
(results/logs/expected-avx2-measured-again.txt) instructions a call, at any N; and, the same
kept code counted in zygotes whose environments differed only in the length of one unused
variable, 7201 to 7265 at N=3 (results/logs/instructions-environment-padding-torch-2.15.0.txt).
Exact, or within a few instructions, between two runs in one environment."""


@dataclass(frozen=True)
class Metric:
    """One metric: its asv benchmark, where its value comes from, and how it is shown and
    gated."""

    benchmark: str
    """asv's method name (`track_<name>`, `time_<name>`), on the classes of its `kind`."""
    kind: str
    """CONTRACT, COST or CORPUS: which asv classes carry it, per which parameters."""
    unit: str
    label: str
    """The words the report (and the check) head its column with, and name it by."""
    doc: str
    """What it counts: the benchmark's docstring."""
    row_key: str | None = None
    """The probe row's key for its value (a per-coordinate dict counts as its `total`), and
    the key of the report's and the check's cost rows; None for a corpus metric
    (`corpus/run.py`'s counter)."""
    gate: Exact | Noisy | None = None
    """How `expected/<isa>.csv` gates it; None: not gated."""
    chart: str | None = None
    """The verdict page's chart title; None: not charted."""
    version: str | None = None
    """asv's version of this benchmark alone; None: the class's."""

    @property
    def name(self) -> str:
        """The expected files' metric column: the benchmark's name after `track_`/`time_`."""
        return self.benchmark.partition("_")[2]

    @property
    def asv_class(self) -> str:
        return "Cost" if self.kind == COST else "Correctness"

    @property
    def asv_name(self) -> str:
        """The benchmark's name within a scenario module: `Cost.track_scratch_bytes`."""
        return f"{self.asv_class}.{self.benchmark}"


METRICS: tuple[Metric, ...] = (
    Metric(
        "track_wrong_elements", CONTRACT, unit="elements", label="wrong elements",
        doc="Wrong elements summed over every value coordinate of the contract.",
        row_key="wrong_elements", gate=EXACT,
    ),
    Metric(
        "track_moved_storages", CONTRACT, unit="tensors", label="moved storages",
        doc="Inputs whose storage address changed during the call.",
        row_key="storages_moved", gate=EXACT,
    ),
    Metric(
        "track_scratch_bytes", COST, unit="bytes", label="runtime scratch",
        doc="Peak runtime scratch of one warm call (profiler), cross-checked with the wrapper.",
        row_key="scratch_bytes", gate=EXACT, chart="runtime scratch",
    ),
    Metric(
        "track_full_length_loops", COST, unit="loops", label="full-length loops",
        doc="Passes over the full length n in the generated C++.",
        row_key="full_length_loops", gate=EXACT, chart="full-length loops",
    ),
    Metric(
        "track_entrypoint_calls", COST, unit="calls", label="entrypoint calls",
        doc="Compiled graphs entered per call of the control.",
        row_key="entrypoint_calls", gate=EXACT,
    ),
    Metric(
        "time_warm_call", COST, unit="seconds", label="median warm call (IQR)",
        doc="One warm call of the Inductor-compiled control.",
        row_key="median_s",  # no gate: it drifts by tens of percent on shared machines
        version="writeback-warm-2",
    ),
    Metric(
        "track_time_over_floor", COST, unit="x floor", label="time over floor",
        doc="Warm call time over the physical floor's (a fused in-place swap of the same two "
        "tensors), interleaved samples.",
        row_key="time_over_floor",
        # at least 10%: the avx2 machine's two histories measured alone (2026-12-04 and -05,
        # fresh clones) moved its 16 ratios by -6.1% to +7.9% (sd 3.5%):
        # results/logs/expected-avx2-measured-again.txt; 5% (the one-session stability
        # goal) flagged that as moved
        gate=Noisy(decimals=3, least_relative=0.10, spread="time_over_floor_max_over_min",
                   spread_is_ratio=True, iqr="floor_ratio_iqr"),
        chart="time over floor", version="writeback-floor-2",
    ),
    Metric(
        "track_instructions", COST, unit="instructions", label="instructions",
        doc="Instructions per warm call of the compiled graph (callgrind).",
        row_key="instructions",
        # at least 0.3% (three times the repeatability goal of 0.1%) and 3 x the most a count
        # moved between two environments (up to 0.9% at N=3, nothing at N=1M)
        gate=Noisy(decimals=0, least_relative=0.003,
                   least_absolute=3 * INSTRUCTIONS_BETWEEN_ENVIRONMENTS,
                   spread="instructions_spread"),
        chart="instructions per call",
    ),
    Metric(
        "track_wrong_programs", CORPUS, unit="programs", label="wrong programs",
        doc="Programs whose compiled call differs from eager in any coordinate.",
        gate=EXACT,
    ),
    Metric(
        "track_wrong_families", CORPUS, unit="families", label="wrong families",
        doc="Distinct faults of the wrong programs: where the call first goes wrong, the pass "
        "attributed, the kinds of wrong coordinate and the op it comes from "
        "(`benchmarks/corpus/families.py`).",
        gate=EXACT,
    ),
    Metric(
        "track_failed_programs", CORPUS, unit="programs", label="failed programs",
        doc="Programs whose compile or compiled call failed; the report lists each with its "
        "first error line, and `make history` fails unless each is a known state "
        "(`benchmarks/known_failures.py`).",
        gate=EXACT,
    ),
)  # fmt: skip
"""The table, in the order the report's cost columns and the verdict page's charts follow."""


def of(kind: str) -> list[Metric]:
    """The metrics of one kind, in the table's order."""
    return [metric for metric in METRICS if metric.kind == kind]


def by_asv_name(name: str) -> Metric | None:
    """The metric of a benchmark named within its scenario module (`Cost.track_instructions`),
    or None."""
    return next((metric for metric in METRICS if metric.asv_name == name), None)


def named(name: str) -> Metric | None:
    """The metric of an expected file's metric column (`instructions`), or None."""
    return next((metric for metric in METRICS if metric.name == name), None)


def noisy() -> list[Metric]:
    """The metrics gated within a margin (`Noisy`)."""
    return [metric for metric in METRICS if isinstance(metric.gate, Noisy)]


def row_keys(*kinds: str) -> list[str]:
    """The probe row keys of the metrics of these kinds, in the table's order."""
    return [m.row_key for kind in kinds for m in of(kind) if m.row_key]


def row_value(metric: Metric, row: dict):
    """A metric's value in a probe row: the row's figure, or a per-coordinate dict's total."""
    value = row[metric.row_key]
    return value["total"] if isinstance(value, dict) else value


def from_row(benchmark, metric: Metric, record: dict, *params):
    """The value of a row metric for an asv benchmark whose setup found its row (`self.row`)."""
    return row_value(metric, benchmark.row)


def asv_benchmarks(
    kind: str,
    value: Callable = from_row,
    setups: dict[str, Callable] | None = None,
) -> Callable[[type], type]:
    """A decorator for an asv class that carries the metrics of `kind`: every metric the class
    does not define itself becomes a method returning `value(self, metric, record, *params)`;
    every metric method, defined or made, gets the metric's docstring, its unit, its version
    (where it has one) and the setup `setups` names for it (asv runs it after the class's).
    A `time_`/`track_` method of the class, or a setup, for a benchmark the table does not
    list is an error."""
    setups = setups or {}

    def decorate(cls: type) -> type:
        names = {metric.benchmark: metric for metric in of(kind)}
        methods = [n for n in vars(cls) if n.startswith(("time_", "track_"))]
        if stray := [name for name in [*methods, *setups] if name not in names]:
            raise TypeError(f"{cls.__name__}: benchmarks/metrics.py lists no {kind} metric "
                            f"{stray}")  # fmt: skip
        for name, metric in names.items():
            method = vars(cls).get(name) or _method(cls, metric, value)
            method.__doc__ = metric.doc
            method.unit = metric.unit
            if metric.version:
                method.version = metric.version
            if name in setups:
                method.setup = setups[name]
            setattr(cls, name, method)
        return cls

    return decorate


def _method(cls: type, metric: Metric, value: Callable) -> Callable:
    def benchmark(self, record, *params):
        # `metric`: its entry in benchmarks/metrics.py; `value`: how the class reads it
        return value(self, metric, record, *params)

    benchmark.__name__ = metric.benchmark
    benchmark.__qualname__ = f"{cls.__qualname__}.{metric.benchmark}"
    return benchmark
