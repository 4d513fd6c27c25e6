"""Check every scenario on the installed torch, without asv, and print the write-up's tables.

    python -m tools.check [--scenario NAME|all] [--sizes 3,1048576] [--output DIR] [--json FILE]
                          [--expect-torch 2.15.0] [--warmup 2] [--samples 20]
    python -m tools.check --scenario corpus [--corpus seed0-50] [--json FILE]

NAME is a scenario of `benchmarks/registry.py` (snapshot_swap, aliasing, tensordict_swap: every
scenario module, a new one as it is) or snapshot_swap_configs. `python -m
tools.check_snapshot_swap` is another name for this command.

Runs the same controls, contract and probes as the asv suite. A control that is wrong under
Inductor at the smallest size is stopped there, before any larger compilation or timing.
Prints two Markdown tables (values and writes per control, backend and N; cost per correct
control) and the ratios between the correct controls' median warm calls. For
`snapshot_swap_configs`, one table: control x (configuration, input) variant; its JSON rows
carry `variant`, `config` and `input` instead of `backend`.

`--scenario corpus` runs a generated corpus instead (`benchmarks/corpus/`, not part of `all`):
one JSON row per (program, backend) with `program`, `backend`, `wrong_elements`,
`coordinates`, `family`, `shrunk` (the shrunk program, for wrong ones) and `error`; it prints
each family with its count, its shrunk repro and the catalogue entry it matches ("new").

Exit status: 0 when the check ran (wrong compiled controls are findings, shown in the
tables); 1 when an eager reference broke the contract (a harness failure: the reference
itself is wrong, so no verdict can be trusted; for `snapshot_swap_configs`, an eager call on
one of its inputs), a correct control measured below the physical floor (the floor is not
the least work, so no time over floor can be trusted) or an attribution crashed; 2 for bad
usage or a torch other than --expect-torch.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks import metrics, registry, snapshot_swap, snapshot_swap_configs  # threads first
from benchmarks.compat import set_single_thread, torch_identity
from benchmarks.corpus import run as corpus_run
from benchmarks.pool import workers_wanted
from benchmarks.probes.probe import probe_scenario
from benchmarks.scenario import COST_BACKEND
from tools import render as words

CONFIGS = snapshot_swap_configs.SCENARIO
CORPUS = "corpus"
DEFAULT = snapshot_swap.SWAP.name
PROG = "python -m tools.check"


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    scenarios = registry.scenarios()
    args = _parse(argv, scenarios, prog)
    ident = torch_identity()
    if args.expect_torch and not _same_version(args.expect_torch, ident["torch_version"]):
        print(
            f"error: expected torch {args.expect_torch}, but this interpreter ({sys.executable}) "
            f"has torch {ident['torch_version']}. Install it (pip install "
            f"torch=={args.expect_torch}) or drop --expect-torch.",
            file=sys.stderr,
        )
        return 2
    set_single_thread()
    if args.scenario == CORPUS:
        return check_corpus(args.corpus, args.json)
    rows, broken_references = [], []
    names = checked_by_all(scenarios) if args.scenario == "all" else [args.scenario]
    for name in names:
        if name == CONFIGS:
            scenario_rows, broken, text = check_variants(args)
        else:
            scenario_rows, broken, text = check_scenario(scenarios[name], args)
        rows += scenario_rows
        broken_references += broken
        print(text, end="\n\n")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
        print(f"rows written to {args.json}", file=sys.stderr)
    for name, where, what in broken_references:
        print(f"error: harness failure in {name} at {where}: {what}", file=sys.stderr)
    floor_defects = [r for r in rows if r.get("floor_defect")]
    for row in floor_defects:
        print(
            f"error: {row['scenario']}.{row['control']} at n={row['n']}: {row['floor_defect']}",
            file=sys.stderr,
        )
    crashed = [r for r in rows if r.get("attribution_error")]
    for row in crashed:
        print(f"error: the attribution of {row['scenario']}.{row['control']} at n={row['n']} "
              f"crashed: {row['attribution_error']}", file=sys.stderr)  # fmt: skip
    return 1 if broken_references or floor_defects or crashed else 0


def checked_by_all(scenarios: dict) -> list[str]:
    """What `--scenario all` checks, in order: every scenario of the registry (`scenarios`), the
    snapshot swap first, then the configuration variants; not the corpus."""
    return [*sorted(scenarios, key=lambda name: name != DEFAULT), CONFIGS]


def scenario_choices(scenarios: dict) -> list[str]:
    """Every value `--scenario` takes."""
    return [*checked_by_all(scenarios), "all", CORPUS]


ROW_KEYS = ("program", "program_hash", "backend", "judged", "wrong_elements", "coordinates",
            "family", "attribution", "shrunk", "repro", "error")  # fmt: skip
"""A corpus row's keys in `--json` (the record's rows carry these and `representative`)."""


def check_corpus(name: str, json_path: Path | None) -> int:
    """Run corpus `name`, print its families, write its rows to `json_path`."""
    record = corpus_run.run(name, workers=workers_wanted())
    print(corpus_report(record))
    if json_path:
        rows = [{key: row[key] for key in ROW_KEYS} for row in record["rows"]]
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(rows, indent=1) + "\n")
        print(f"rows written to {json_path}", file=sys.stderr)
    return 0


def corpus_report(record: dict) -> str:
    ident = torch_identity()
    lines = [
        f"corpus {record['corpus']}: {record['programs']} programs on torch "
        f"{ident['torch_version']} (commit {ident['torch_git_version']}), "
        f"{record['seconds']:.0f} s ({record['judging_seconds']:.0f} s judging, "
        f"{'screened' if record['screened'] else 'every program alone'}; the rest shrinking, "
        "attributing and checking members)",
        "",
    ]
    for backend in record["backends"]:
        errors = [r for r in record["rows"] if r["backend"] == backend and r["error"]]
        lines.append(
            f"- {backend}: {corpus_run.count_wrong_programs(record, backend)} wrong programs in "
            f"{corpus_run.count_wrong_families(record, backend)} families; "
            f"{len(errors)} failed to compile or run"
            + "".join(f"\n  - program {r['program']}: {r['error']}" for r in errors)
        )
    for family in record["families"]:
        lines += [
            "",
            f"### {family['family']}",
            f"{family['programs']} programs ({', '.join(map(str, family['members']))}); "
            f"representative {family['representative']}, shrunk to `{family['skeleton']}`; "
            f"catalogue: {family['catalogue']}",
            f"which pass: {words.attribution_text(family['attribution'])}",
            "",
            "```python",
            family["repro"].rstrip(),
            "```",
        ]
    return "\n".join(lines)


def check_scenario(scenario, args) -> tuple[list[dict], list[tuple], str]:
    """A scenario's JSON rows, its broken eager references, and its tables."""
    chosen = args.sizes if scenario is snapshot_swap.SWAP else scenario.sizes
    sizes = tuple(dict.fromkeys((scenario.gate_size, *chosen)))
    record = probe_scenario(
        scenario,
        sizes=sizes,
        measure_gated=not scenario.measure_cost,  # a catalogue asks every size for a verdict
        artifacts_root=args.output,
        timing=(args.warmup, args.samples),
        count_instructions=not args.no_instructions and scenario.measure_cost,
    )
    rows = json_rows(record)
    broken = [(f"{scenario.name}.{r['control']}", f"n={r['n']}", r["harness_failure"])
              for r in rows if r["harness_failure"]]  # fmt: skip
    return rows, broken, render(record, rows, sizes, scenario)


def check_variants(args) -> tuple[list[dict], list[tuple], str]:
    """The same for the (configuration, input) variants of the swap."""
    record = snapshot_swap_configs.probe(root=args.output)
    rows = variant_json_rows(record)
    broken = [
        (
            f"{CONFIGS}.{control}",
            f"{kind} inputs",
            f"the eager reference broke its own contract: {reference['verdict']}",
        )
        for control, references in record["eager_references"].items()
        for kind, reference in references.items()
        if not reference["ok"]
    ]
    return rows, broken, render_variants(record, rows)


def json_rows(record: dict) -> list[dict]:
    """One row per (control, backend, n) with the documented keys (null: not measured): every
    contract and Cost metric's row key (benchmarks/metrics.py), then the notes beside them."""
    keys = (
        "control", "backend", "n", *metrics.row_keys(metrics.CONTRACT, metrics.COST), "gated",
        "scratch_bytes_static", "samples_s", "floor_ratio_samples", "floor_median_s",
        "control_median_s", "floor_kernel", "floor_note", "floor_defect", "skipped", "error",
        "code_dir", "attribution", "instructions_note", "instructions_error", "harness_failure",
        "attribution_error", "cost_skipped",
    )  # fmt: skip
    ident = {k: record[k] for k in ("torch_version", "torch_git_version")}
    rows = []
    for row in record["rows"]:
        out = {"scenario": record["scenario"], **ident, **{k: row.get(k) for k in keys}}
        if not isinstance(row["n"], int):  # a catalogue size label: n is the element count
            out.update(
                size=row["n"],
                n=row["elements"],
                issue=row.get("issue") or None,
                fix=row.get("fix") or None,
            )
        rows.append(out)
    return rows


def variant_json_rows(record: dict) -> list[dict]:
    """One row per (control, variant), with its `config` and `input` (null: not measured) and
    every contract metric's row key."""
    keys = (
        "control", "variant", "config", "input", "n", *metrics.row_keys(metrics.CONTRACT),
        "skipped", "error", "harness_failure", "package", "attribution", "attribution_error",
        "seconds",
    )  # fmt: skip
    ident = {k: record[k] for k in ("torch_version", "torch_git_version")}
    return [
        {"scenario": record["scenario"], **ident, **{k: row.get(k) for k in keys}}
        for row in record["rows"]
    ]


def render_variants(record: dict, rows: list[dict]) -> str:
    """The control x variant table: each cell the contract's verdict, a skip or an error."""
    head = (
        f"{record['scenario']}: torch {record['torch_version']} (commit "
        f"{record['torch_git_version']}), vector ISA {record['isa']}, one thread"
    )
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    lines = ["| control | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]
    for control in dict.fromkeys(r["control"] for r in rows):
        cells = [_cell(_find_variant(rows, control, variant)) for variant in variants]
        lines.append(f"| {control} | " + " | ".join(cells) + " |")
    return f"{head}\n\nActual values and actual writes, per variant\n\n" + "\n".join(lines)


def _find_variant(rows, control, variant):
    return next((r for r in rows if (r["control"], r["variant"]) == (control, variant)), None)


def render(record: dict, rows: list[dict], sizes: tuple[int, ...], scenario) -> str:
    split = [c.name for c in scenario.controls if not c.fullgraph]
    graphs = "fullgraph=True" + (f" (False for {', '.join(split)})" if split else "")
    head = (
        f"torch {record['torch_version']} (commit {record['torch_git_version']}), "
        f"vector ISA {record['isa']}, one thread, {graphs}, dynamic=False"
    )
    parts = [f"{record['scenario']}: {head}", values_table(rows, sizes)]
    if scenario.measure_cost:
        parts.append(words.cost_section(record["scenario"], *cost_rows(rows)))
    return "\n\n".join(parts)


def values_table(rows: list[dict], sizes: tuple[int, ...]) -> str:
    keys = [(r["control"], r["backend"]) for r in rows]
    table = words.values_table(keys, sizes, lambda c, b, n: _cell(_find(rows, c, b, n)))
    return "Actual values and actual writes\n\n" + table


def cost_rows(rows: list[dict]) -> tuple[list[dict], list[tuple]]:
    """The cost figures of every timed Inductor row, and the (control, n) not costed because
    they are wrong under Inductor (as the report hands them to tools/render.py)."""
    costed = []
    for row in rows:
        if row["backend"] != COST_BACKEND or row["median_s"] is None:
            continue
        quartiles = words.quartiles(row["samples_s"] or [])
        costed.append(
            {
                **row,
                "q25_s": quartiles[0] if quartiles else None,
                "q75_s": quartiles[1] if quartiles else None,
                "samples": len(row["samples_s"] or []),
            }
        )
    wrong = [(r["control"], r["n"]) for r in rows if r["backend"] == COST_BACKEND and _wrong(r)]
    return costed, wrong


def _cell(row: dict | None) -> str:
    """A verdict's words (tools/render.py: the report words it the same way)."""
    return words.row_verdict(row)[1]


def _wrong(row: dict) -> bool:
    wrong = row["wrong_elements"]
    return wrong is not None and (wrong["total"] > 0 or row["storages_moved"] > 0)


def _find(rows, control, backend, n):
    return next(
        (
            r
            for r in rows
            if (r["control"], r["backend"], r.get("size", r["n"])) == (control, backend, n)
        ),
        None,
    )


def _same_version(expected: str, installed: str) -> bool:
    return installed == expected or installed.split("+")[0] == expected


def _parse(argv, scenarios: dict, prog: str):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=snapshot_swap.SWAP.sizes,
                        help="comma-separated element counts (default: 3,1048576); the "
                        "gate size 3 always runs first")  # fmt: skip
    parser.add_argument("--scenario", default=DEFAULT, choices=scenario_choices(scenarios),
                        help=f"which scenario to check (default {DEFAULT}; `all` is every "
                        "scenario but the corpus)")  # fmt: skip
    parser.add_argument("--corpus", default=corpus_run.DEFAULT, choices=list(corpus_run.CORPORA),
                        help=f"with --scenario corpus: which corpus (default "
                        f"{corpus_run.DEFAULT})")  # fmt: skip
    parser.add_argument("--output", type=Path, help="keep generated code and probe.json here")
    parser.add_argument("--json", type=Path, help="write one row per (control, backend, n)")
    parser.add_argument("--expect-torch", metavar="VERSION",
                        help="stop unless this torch version is installed")  # fmt: skip
    parser.add_argument("--warmup", type=int, default=2, help="untimed warm calls (default 2)")
    parser.add_argument("--samples", type=int, default=20, help="timed calls (default 20)")
    parser.add_argument(
        "--no-instructions",
        action="store_true",
        help="skip counting instructions under callgrind (saves 1-2 minutes)",
    )
    return parser.parse_args(argv)


def _sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"sizes must be integers like 3,1048576, not {text!r}"
        ) from None
    if not sizes or any(n <= 0 for n in sizes):
        raise argparse.ArgumentTypeError("sizes must be positive element counts")
    return sizes


if __name__ == "__main__":
    sys.exit(main())
