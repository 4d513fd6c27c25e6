"""How far the cost figures can be trusted on this machine: repeat them in separate processes.

    python tools/stability.py [--python PYTHON] [--runs 5] [--instruction-runs 2] [--n 1048576]

Runs tools/check_snapshot_swap.py `--runs` times, each in its own process with the given
interpreter (default: the asv environment's, which holds the newest build measured), and
reports for every correct control at N:
  - `time_over_floor` over the runs, and max/min (goal: at most 1.10);
  - instructions over the first `--instruction-runs` runs, and their spread (goal: at most
    0.1%).
Writes results/stability/<machine>/<torch build>.json (the report shows it) and prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import machine_name  # noqa: E402  (standard library only)

OUT = ROOT / "results" / "stability"
FLOOR_GOAL = 1.10
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
            command = [python, str(ROOT / "tools" / "check_snapshot_swap.py"), "--sizes", f"3,{n}",
                       "--json", str(out)] + ([] if counted else ["--no-instructions"])  # fmt: skip
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                tail = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise SystemExit(f"writeback: the check failed in run {index + 1}: {tail}")
            rows.append(json.loads(out.read_text()))
    return rows


def summarize(runs: list[list[dict]], n: int) -> dict:
    first = runs[0][0]
    summary = {
        "torch_version": first["torch_version"],
        "torch_git_version": first["torch_git_version"],
        "n": n,
        "controls": {},
    }
    costed = [r for r in runs[0] if r["n"] == n and r["time_over_floor"] is not None]
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
            "instructions": counts,
            "instructions_spread": spread,
        }
    return summary


def render(summary: dict) -> str:
    lines = [
        f"Stability on torch {summary['torch_version']} at N={summary['n']:,} "
        "(separate processes on this machine)",
        "",
        "| correct control | time over floor, each run | max/min (goal <= 1.10) "
        "| instructions, each run | spread (goal <= 0.1%) |",
        "|---|---|---|---|---|",
    ]
    for control, figures in summary["controls"].items():
        floors = ", ".join(f"{v:.2f}" for v in figures["time_over_floor"])
        ratio = figures["time_over_floor_max_over_min"]
        counts = ", ".join(f"{v:,}" for v in figures["instructions"]) or "n/a"
        spread = figures["instructions_spread"]
        lines.append(
            f"| {control} | {floors} | {ratio:.3f} {'ok' if ratio <= FLOOR_GOAL else 'MISSED'} "
            f"| {counts} | "
            + (
                f"{spread * 100:.4f}% {'ok' if spread <= INSTRUCTION_GOAL else 'MISSED'}"
                if spread is not None
                else "n/a"
            )  # fmt: skip
            + " |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=_asv_python(), help="interpreter with the torch")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--instruction-runs", type=int, default=2)
    parser.add_argument("--n", type=int, default=1048576)
    args = parser.parse_args(argv)
    if args.python is None:
        print("writeback: no asv environment yet: run `make history` or pass --python",
              file=sys.stderr)  # fmt: skip
        return 2
    summary = summarize(run_checks(args.python, args.runs, args.instruction_runs, args.n), args.n)
    summary["machine"] = machine_name()
    folder = OUT / summary["machine"]
    folder.mkdir(parents=True, exist_ok=True)
    key = f"torch-{summary['torch_version']}-{summary['torch_git_version'][:8]}"
    (folder / f"{key}.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(render(summary))
    return 0


def _asv_python() -> str | None:
    found = sorted((ROOT / ".asv" / "env").glob("*/bin/python"))
    return str(found[0]) if found else None


if __name__ == "__main__":
    sys.exit(main())
