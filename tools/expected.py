"""Expected results: numbers that gate, in both directions.

    python -m tools.expected check [--machine NAME] [--file FILE]                   (make expected)

`expected/<machine>.csv`, else `expected/<isa>.csv` (one file per machine class: the vector ISA
shapes the code, and the CPU the times: an AMD EPYC machine with the Intel avx2 twin's ISA
measured every exact row and the instruction counts as its file has them, and time-over-floor
ratios 23-173% higher (results/logs/expected-amd-against-intel-avx2.txt), so it has a file of
its own) holds one
row per (build, scenario, control or pattern, backend, size, metric) with the value expected
and the margin a new measurement may move by, as PyTorch's
benchmarks/dynamo/pr_time_benchmarks/expected_results.csv does. `check` compares the latest
results of this machine with it and prints every row that moved, in either direction (an
improvement nobody acknowledged is as suspicious as a regression), with old, new and margin;
it exits 1 when any moved, and prints the replacement file to paste.

Rounding and margins (the rules the replacement file follows) are each metric's `gate` in
`benchmarks/metrics.py`: an exact count (wrong elements, moved storages, scratch bytes, the
generated corpus's wrong programs, ...) is an integer with margin 0 - any change is a real
change; a noisy figure (instructions, time over floor) is rounded and gets the margin its
`Noisy` rule there gives (the least margin, the spread `tools/stability.py` recorded, the
probe's interquartile range). A corpus count has a row per corpus and backend: control is the
corpus, size `-`. The least margins (`least_margin`) also hold for the rows of an existing
file, whatever margin it was written with: raising them takes effect without rewriting the
expected values.
Timing (`time_warm_call`) has no gate: it drifts by tens of percent on shared machines.
A row missing from the file, or a file row with no measurement, counts as moved. `check`
also prints how far the noisy rows moved as a whole (the drift, per metric), moved or not:
the figures the least margins come from.

No expected file records a failure of the harness: `check` fails, naming the row and writing
no replacement, when the results hold a harness failure (an eager reference that broke its
own contract: an eager row's `harness_failure`, or an eager correctness count above 0) or an
attribution that crashed, and when the file expects an eager correctness count above 0,
whatever the results say.

tools/compare.py (`make compare`) compares two builds with these same rounding and margins.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from statistics import pstdev

from benchmarks import metrics  # standard library only
from benchmarks.machine import build_folder, machine_name  # standard library only
from tools import ledger as ledger_repo
from tools import results

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = ("build", "scenario", "control", "backend", "size", "metric", "expected", "margin")


@dataclass(frozen=True)
class Row:
    build: str
    scenario: str
    control: str
    backend: str
    size: str
    metric: str
    expected: float
    margin: float

    @property
    def key(self) -> tuple:
        return (self.build, self.scenario, self.control, self.backend, self.size, self.metric)


def measured_rows(builds: list[results.BuildResult]) -> list[Row]:
    """Every gated number of these builds (one machine), rounded, with its margin."""
    rows = []
    for build in builds:
        stability = _stability(build)
        for key, combos in sorted(build.values.items()):
            scenario, _, bench = key.partition(".")
            metric = metrics.by_asv_name(bench)
            if metric is None or metric.gate is None:
                continue
            for combo, value in combos.items():
                if not results.is_number(value):
                    continue
                control, backend, size = _coordinates(combo, metric)
                row = build.probe.get((scenario, control, backend, _literal(size)), {})
                expected = metric.gate.rounded(value)
                margin = metric.gate.margin(value, row, stability.get(control, {}))
                rows.append(Row(build.tag, scenario, control, backend, size, metric.name,
                                expected, margin))  # fmt: skip
    return rows


def _coordinates(combo: tuple, metric: metrics.Metric) -> tuple[str, str, str]:
    if metric.kind == metrics.CORPUS:  # (backend, corpus)
        return str(combo[1]), str(combo[0]), "-"
    if metric.kind == metrics.COST and len(combo) == 2:
        return str(combo[0]), "inductor", str(combo[1])
    if len(combo) == 3:
        return str(combo[0]), str(combo[1]), str(combo[2])
    if len(combo) == 2:  # (control, variant): the variant stands for backend and size
        return str(combo[0]), str(combo[1]), "-"
    return str(combo[0]) if combo else "", "", ",".join(map(str, combo[1:]))


def _literal(size: str):
    return int(size) if size.isdigit() else size


def least_margin(name: str, value: float) -> float:
    """The least a row of metric `name` (the expected files' metric column) may move by: 0
    for an exact one."""
    metric = metrics.named(name)
    return metric.gate.least_margin(value) if metric and metric.gate else 0


def _stability(build: results.BuildResult) -> dict:
    """tools/stability.py's figures per control for this build and machine, if it ran."""
    if not build.results_dir or "torch_version" not in build.identity:
        return {}
    key = build_folder(build.identity)
    path = build.results_dir / "stability" / build.machine / f"{key}.json"
    return json.loads(path.read_text()).get("controls", {}) if path.is_file() else {}


def read(path: Path) -> list[Row]:
    """The rows of an expected file; ValueError naming the line for one that is not a row
    (too few or too many fields, a value or margin that is not a number) or a header with a
    column it does not know."""
    with path.open(newline="") as handle:
        lines = [(n, line) for n, line in enumerate(handle, 1)
                 if line.strip() and not line.startswith("#")]  # fmt: skip
    reader = csv.DictReader(line for _, line in lines)
    missing = set(COLUMNS) - set(reader.fieldnames or [])
    if missing:
        raise ValueError(f"{path}: the header lacks {', '.join(sorted(missing))}")
    if unknown := [name for name in reader.fieldnames if name not in COLUMNS]:
        raise ValueError(
            f"{path}, line {lines[0][0]}: the header has columns no row has "
            f"({', '.join(unknown)}): the header is {','.join(COLUMNS)}; correct that line"
        )
    rows = []
    for (number, line), fields in zip(lines[1:], reader):
        try:
            if None in fields or None in fields.values():
                raise ValueError(f"{len(COLUMNS)} comma-separated fields expected")
            rows.append(Row(**{**fields, "expected": float(fields["expected"]),
                               "margin": float(fields["margin"])}))  # fmt: skip
        except ValueError as exc:
            raise ValueError(
                f"{path}, line {number}: {line.strip()!r} is not a row ({exc}): each row is "
                f"{','.join(COLUMNS)}; correct or remove that line"
            ) from None
    return rows


def render(rows: list[Row]) -> str:
    out = io.StringIO()
    out.write("# writeback expected results: tools/expected.py (rounding and margins there)\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in sorted(rows, key=lambda r: r.key):
        writer.writerow([*row.key[:6], _number(row.expected), _number(row.margin)])
    return out.getvalue()


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def moved(expected: list[Row], measured: list[Row]) -> list[str]:
    """One line per row that moved beyond its margin, either way, or is on one side only."""
    now = {row.key: row for row in measured}
    lines = []
    for old in expected:
        new = now.pop(old.key, None)
        where = "/".join(old.key)
        if new is None:
            lines.append(f"{where}: expected {_number(old.expected)}, not measured")
        elif abs(new.expected - old.expected) > (
            margin := max(old.margin, least_margin(old.metric, old.expected))
        ):
            direction = "up" if new.expected > old.expected else "down"
            lines.append(f"{where}: expected {_number(old.expected)} +- {_number(margin)}, "
                         f"measured {_number(new.expected)} ({direction})")  # fmt: skip
    for new in now.values():
        lines.append(f"{'/'.join(new.key)}: measured {_number(new.expected)}, not expected")
    return lines


def drift(expected: list[Row], measured: list[Row]) -> list[str]:
    """How far the noisy rows measured in both moved, per metric: the least, the most and the
    standard deviation of (measured - expected), relative for time over floor and in
    instructions a call for counts (a constant there, whatever N)."""
    now = {row.key: row for row in measured}
    lines = []
    for metric in sorted(metrics.noisy(), key=lambda m: m.name):
        pairs = [(old, now[old.key]) for old in expected
                 if old.metric == metric.name and old.key in now and old.expected]  # fmt: skip
        if metric.gate.decimals == 0:  # a count: moves by a constant a call, at any N
            moves = [new.expected - old.expected for old, new in pairs]
            unit, scale = f" {metric.unit} a call", 1
        else:
            moves = [new.expected / old.expected - 1 for old, new in pairs]
            unit, scale = "%", 100
        if moves:
            low, high, sd = (scale * x for x in (min(moves), max(moves), pstdev(moves)))
            lines.append(f"{metric.name}: {len(moves)} rows moved {low:+.1f} to {high:+.1f}{unit} "
                         f"(sd {sd:.1f}{unit})")  # fmt: skip
    return lines


def harness_rows(rows: list[Row]) -> list[Row]:
    """The rows that record a harness failure: an eager correctness count above 0."""
    counts = _contract_counts()
    return [r for r in rows if r.backend == "eager" and r.metric in counts and r.expected]


def _contract_counts() -> list[str]:
    """The contract's counts (wrong elements, moved storages): an eager one above 0 is a
    harness failure, and they are verdicts, not cost figures that move."""
    return [metric.name for metric in metrics.of(metrics.CONTRACT)]


def unrecordable(builds: list[results.BuildResult], measured: list[Row]) -> list[str]:
    """One line per failure in these results that no expected file may record: every harness
    failure and crashed attribution of the probe rows, every eager count above 0."""
    lines = [f.describe() for b in builds if b.installed for f in results.row_failures(b)]
    lines += [f"{'/'.join(r.key)}: {_number(r.expected)} (the eager reference broke its own "
              "contract)" for r in harness_rows(measured)]  # fmt: skip
    return list(dict.fromkeys(lines))


def check(args) -> int:
    builds = results.load(args.results, args.ledger, args.machine)
    if not builds:
        print(f"writeback: no results of machine {args.machine} in {args.results}: run "
              "`make history` first", file=sys.stderr)  # fmt: skip
        return 2
    isa = _isa(args.results, args.machine)
    path = args.file or expected_file(args.machine, isa)
    measured = measured_rows(builds)
    if failed := unrecordable(builds, measured):
        print(f"expected: the results of {args.machine} hold {len(failed)} failure(s) that no "
              "expected file may record; fix the harness (or the attribution) and measure "
              "again (no replacement file is written):")  # fmt: skip
        print("\n".join(f"  {line}" for line in failed))
        return 1
    if not path.is_file():
        print(f"writeback: no expected results in {path} yet (machine {args.machine}, "
              f"{isa}). To start them, paste this into {path}:\n")  # fmt: skip
        print(render(measured), end="")
        return 1
    rows = read(path)
    if recorded := harness_rows(rows):
        print(f"expected: {path} records {len(recorded)} harness failure(s) as expected (an "
              "eager reference that broke its own contract; an eager row expects 0): fix the "
              "harness, measure again and take the file `check` then proposes:")  # fmt: skip
        print("\n".join(f"  {'/'.join(r.key)}: {_number(r.expected)}" for r in recorded))
        return 1
    lines = moved(rows, measured)
    drifts = "".join(f"\n  {line}" for line in drift(rows, measured))
    if not lines:
        print(f"expected: all {len(measured)} rows of {path.name} within their margins "
              f"({args.machine}); drift of the noisy rows:{drifts}")  # fmt: skip
        return 0
    print(f"expected: drift of the noisy rows ({args.machine} against {path}):{drifts}")
    print(f"expected: {len(lines)} row(s) moved ({args.machine} against {path}):")
    print("\n".join(f"  {line}" for line in lines))
    print(f"\nIf every move is understood, replace {path} with:\n")
    print(render(measured), end="")
    return 1


def expected_file(machine: str, isa: str, root: Path = ROOT) -> Path:
    """The machine's own expected file where it has one, else its ISA's."""
    own = root / "expected" / f"{machine}.csv"
    return own if own.is_file() else root / "expected" / f"{isa}.csv"


def _isa(results_dir: Path, machine: str) -> str:
    path = results_dir / machine / "machine.json"
    recorded = json.loads(path.read_text()) if path.is_file() else {}
    return recorded.get("isa") or "unknown-isa"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.expected", description=__doc__.split("\n\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    command = sub.add_parser("check")
    command.add_argument("--machine", default=machine_name())
    command.add_argument("--results", type=Path, default=ROOT / "results")
    command.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    command.add_argument("--file", type=Path, help="default: expected/<machine or isa>.csv")
    args = parser.parse_args(argv)
    try:
        return check(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"writeback: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
