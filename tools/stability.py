"""How far the cost figures can be trusted on this machine: repeat them in separate processes.

    python -m tools.stability [--python PYTHON] [--runs 5] [--instruction-runs 2] [--n 1048576]
                              [--busy-core] [--output DIR]

Runs tools/check.py `--runs` times, each in its own process with the given
interpreter (default: the asv environment's, which holds the newest build measured), and
reports for every correct control at N:
  - `time_over_floor` over the runs (over the physical floor, a fused in-place swap of the
    same tensors), whether every run is at least 1 x, and max/min (goal: at most 1.05);
  - the floor's own time a call in each run (context, never judged: absolute times drift);
  - instructions over the first `--instruction-runs` runs, and their spread (goal: at most
    0.1%).
A run where a correct control measured below the floor (a floor defect) is kept and marked.
`--busy-core` keeps a CPU-bound process running beside the runs (the other core of a 2-core
machine), as a shared machine would. Writes <output>/<machine>/<torch build>.json (default
results/stability/, which the report shows) and prints Markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.machine import build_folder, machine_name  # standard library only

ROOT = Path(__file__).resolve().parents[1]

OUT = ROOT / "results" / "stability"
FLOOR_GOAL = 1.05
INSTRUCTION_GOAL = 0.001


def run_checks(python: str, runs: int, instruction_runs: int, n: int) -> list[list[dict]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="writeback-stability-") as tmp:
        for index in range(runs):
            counted = index < instruction_runs
            print(f"[stability] run {index + 1}/{runs}"
                  f"{' (with callgrind, about a minute)' if counted else ''}",
                  file=sys.stderr, flush=True)  # fmt: skip
            out = Path(tmp) / f"run{index}.json"
            command = [python, "-m", "tools.check", "--sizes", f"3,{n}",
                       "--json", str(out)] + ([] if counted else ["--no-instructions"])  # fmt: skip
            result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
            run_rows = json.loads(out.read_text()) if out.exists() else []
            if result.returncode != 0 and not _only_floor_defects(result.returncode, run_rows):
                tail = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise SystemExit(f"writeback: the check failed in run {index + 1}: {tail}")
            rows.append(run_rows)
    return rows


def _only_floor_defects(returncode: int, rows: list[dict]) -> bool:
    """Whether the check exited 1 for floor defects alone (a finding this tool reports)."""
    broken_reference = any(
        r["backend"] == "eager" and r["wrong_elements"] and r["wrong_elements"]["total"]
        for r in rows
    )
    return returncode == 1 and not broken_reference and any(r["floor_defect"] for r in rows)


@contextlib.contextmanager
def busy_core(enabled: bool):
    """A CPU-bound process for the duration, when `enabled`; stopped by its own pid."""
    if not enabled:
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def summarize(runs: list[list[dict]], n: int) -> dict:
    first = runs[0][0]
    summary = {
        "torch_version": first["torch_version"],
        "torch_git_version": first["torch_git_version"],
        "n": n,
        "controls": {},
    }
    costed = [r for r in runs[0] if r["n"] == n and r["time_over_floor"] is not None]
    summary["floor"] = costed[0]["floor_kernel"] if costed else None
    for row in costed:
        control = row["control"]
        same = [next(r for r in run if (r["control"], r["backend"], r["n"]) ==
                     (control, "inductor", n)) for run in runs]  # fmt: skip
        floors = [r["time_over_floor"] for r in same]
        counts = [r["instructions"] for r in same if r["instructions"] is not None]
        spread = (max(counts) - min(counts)) / min(counts) if len(counts) > 1 else None
        summary["controls"][control] = {
            "time_over_floor": floors,
            "time_over_floor_max_over_min": max(floors) / min(floors),
            "floor_ms": [r["floor_median_s"] * 1e3 for r in same],
            "floor_defects": sum(bool(r["floor_defect"]) for r in same),
            "instructions": counts,
            "instructions_spread": spread,
        }
    return summary


def render(summary: dict) -> str:
    floor = summary.get("floor")
    over = (
        f"over the physical floor ({floor})"
        if floor
        else "over ATen's copy of 2N elements (the yardstick before the physical floor)"
    )
    lines = [
        f"Stability on torch {summary['torch_version']} at N={summary['n']:,} "
        f"(separate processes on this machine"
        f"{', a CPU-bound job on the other core' if summary.get('busy_core') else ''}), "
        f"time {over}",
        "",
        "| correct control | time over floor, each run | every run >= 1 "
        f"| max/min (goal <= {FLOOR_GOAL:.2f}) | floor ms a call, each run "
        "| instructions, each run | spread (goal <= 0.1%) |",
        "|---|---|---|---|---|---|---|",
    ]
    for control, figures in summary["controls"].items():
        floors = ", ".join(f"{v:.2f}" for v in figures["time_over_floor"])
        above = _above_floor(figures)
        ratio = figures["time_over_floor_max_over_min"]
        floor_ms = ", ".join(f"{v:.3f}" for v in figures.get("floor_ms", [])) or "n/a"
        counts = ", ".join(f"{v:,}" for v in figures["instructions"]) or "n/a"
        spread = figures["instructions_spread"]
        lines.append(
            f"| {control} | {floors} | {above} "
            f"| {ratio:.3f} {'ok' if ratio <= FLOOR_GOAL else 'MISSED'} | {floor_ms} "
            f"| {counts} | "
            + (
                f"{spread * 100:.4f}% {'ok' if spread <= INSTRUCTION_GOAL else 'MISSED'}"
                if spread is not None
                else "n/a"
            )  # fmt: skip
            + " |"
        )
    return "\n".join(lines)


def _above_floor(figures: dict) -> str:
    below = sum(v < 1 for v in figures["time_over_floor"])
    defects = figures.get("floor_defects", 0)
    if not below:
        return "yes"
    return f"NO: {below} below 1 x" + (f", {defects} floor defects (< 0.95)" if defects else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.stability", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--python", default=_asv_python(), help="interpreter with the torch")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--instruction-runs", type=int, default=2)
    parser.add_argument("--n", type=int, default=1048576)
    parser.add_argument("--busy-core", action="store_true",
                        help="run a CPU-bound process beside the runs")  # fmt: skip
    parser.add_argument("--output", type=Path, default=OUT, help="where the summary is written")
    args = parser.parse_args(argv)
    if args.python is None:
        print("writeback: no asv environment yet: run `make history` or pass --python",
              file=sys.stderr)  # fmt: skip
        return 2
    with busy_core(args.busy_core):
        runs = run_checks(args.python, args.runs, args.instruction_runs, args.n)
    summary = summarize(runs, args.n)
    summary["busy_core"] = args.busy_core
    summary["machine"] = machine_name()
    folder = args.output / summary["machine"]
    folder.mkdir(parents=True, exist_ok=True)
    key = build_folder(summary)
    (folder / f"{key}.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(render(summary))
    return 0


def _asv_python() -> str | None:
    found = sorted((ROOT / ".asv" / "env").glob("*/bin/python"))
    return str(found[0]) if found else None


if __name__ == "__main__":
    sys.exit(main())
