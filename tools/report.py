"""Print the history as Markdown: per build the write-up's two tables, then one correctness
matrix over all builds and machines.

    python -m tools.report [--results results] [--ledger .asv/ledger] [--machine NAME]

Numbers come from asv's result files (read with asv's own API); the coordinates a wrong
result is wrong in, and the reason for a skip or a failure, come from the probe record the
same machine kept beside them (results/generated/<machine>/<build>/<isa>/<scenario>/
probe.json). The torch identity of each build comes from results/builds/<machine>/<ledger
commit>.json, written when it was installed there. Builds of every builds file (every ledger
branch) are reported. A result measured with another version of its benchmark than
results/benchmarks.json holds (a build not measured again since the benchmark changed) is left
out, as asv's publish leaves it out, and the build says so. A cell says `exact`,
`wrong: ...`, `harness failure: why` (the eager reference broke its own contract: the
harness is wrong, not torch), `skipped: why` (an expected state), `failed: why` (a real
failure) or `not run (why)` (nothing was measured).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

from asv.results import iter_results_for_machine

from benchmarks import metrics  # standard library only
from benchmarks.known_failures import first_line, known_failure  # standard library only
from benchmarks.machine import build_folder  # standard library only
from tools import ledger as ledger_repo
from tools import render as words
from tools import time_spent

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "snapshot_swap"
CORRECTNESS = f"{SCENARIO}.Correctness"
WRONG = "Correctness.track_wrong_elements"


@dataclass
class BuildResult:
    """What one machine measured for one ledger build."""

    name: str
    commit: str
    machine: str
    identity: dict
    values: dict[str, dict[tuple, object]] = field(default_factory=dict)
    stats: dict[str, dict[tuple, dict | None]] = field(default_factory=dict)
    probe: dict[tuple, dict] = field(default_factory=dict)
    results_dir: Path | None = None
    tag: str = ""
    durations: dict[str, float] = field(default_factory=dict)
    """asv's seconds for each benchmark and `<setup_cache ...>` of this build."""
    stale: list[str] = field(default_factory=list)
    """Benchmarks whose results here were measured with another version of the benchmark than
    results/benchmarks.json's (left out of `values`, as asv's publish leaves them out)."""
    callgrind: dict[str, float] | None = None
    """Seconds callgrind took in each scenario's probe (inside its setup_cache); None when
    the probe records kept no seconds."""

    @property
    def label(self) -> str:
        version = self.identity.get("torch_version", "?")
        return f"{self.tag or self.name} (torch {version})"

    @property
    def installed(self) -> bool:
        return self.identity.get("installed", True) is not False


@dataclass(frozen=True)
class Failure:
    """A benchmark that failed on a build: what nobody expected, with its reason."""

    tag: str
    machine: str
    commit: str
    benchmark: str
    reason: str
    harness: bool = False
    """The eager reference broke its own contract: the harness is wrong, not torch."""

    def describe(self) -> str:
        return f"{self.benchmark} on {self.tag} ({self.machine}): {self.reason}"


@dataclass(frozen=True)
class FailedProgram:
    """A generated corpus program whose compile or compiled call failed on a build; `known`
    is the reason when `benchmarks/known_failures.py` lists the failure as an expected state."""

    tag: str
    machine: str
    commit: str
    corpus: str
    backend: str
    program: int
    error: str
    known: str | None

    def describe(self) -> str:
        where = f"corpus {self.corpus} program {self.program} ({self.backend})"
        return f"{where} on {self.tag} ({self.machine}): {first_line(self.error)}"


def load(results_dir: Path, ledger: Path, machine: str | None = None) -> list[BuildResult]:
    """Every (machine, build) with results, machine by machine, builds by date."""
    entries = sorted(
        ledger_repo.read_ledger(ledger),
        key=lambda e: (e.build["date"], e.branch != ledger_repo.BRANCH, e.branch),
    )
    machines = [machine] if machine else _machines(results_dir)
    current = benchmark_versions(results_dir)
    loaded = []
    for name in machines:
        by_commit = {r.commit_hash: r for r in iter_results_for_machine(str(results_dir), name)}
        for entry in entries:
            result = by_commit.get(entry.commit)
            if result is None:
                continue
            build = BuildResult(
                entry.name,
                entry.commit,
                name,
                _identity(results_dir, name, entry),
                results_dir=results_dir,
                tag=entry.tag,
            )
            build.stale = older_benchmarks(result, current)
            left_out = set(build.stale)
            for key in result.get_all_result_keys():
                if key in left_out:
                    continue
                params = result.get_result_params(key)
                combos = _combos(params)
                values = result.get_result_value(key, params)
                stats = result.get_result_stats(key, params)
                build.values[key] = dict(zip(combos, values))
                build.stats[key] = dict(zip(combos, stats))
            records = _probe_records(results_dir, name, build.identity)
            build.probe = _probe_rows(records)
            build.durations = dict(result.duration)
            build.callgrind = _callgrind_seconds(records)
            loaded.append(build)
    return loaded


def benchmark_versions(results_dir: Path) -> dict[str, dict]:
    """results/benchmarks.json (the benchmark set asv discovered last) as asv's
    `Results.get_result_keys` reads it; {} when there is none."""
    path = results_dir / "benchmarks.json"
    if not path.is_file():
        return {}
    return {k: v for k, v in json.loads(path.read_text()).items() if isinstance(v, dict)}


def older_benchmarks(result, current: dict[str, dict]) -> list[str]:
    """The benchmarks of an asv result whose results asv's publish leaves out against the
    benchmark set `current` (`benchmark_versions`): measured with another version of the
    benchmark, or of one the set no longer has. [] when there is no set to compare with."""
    if not current:
        return []
    return sorted(set(result.get_all_result_keys()) - result.get_result_keys(current))


def stale_line(build: BuildResult) -> str:
    """What the report says of a build with results of an older benchmark set ('' if none)."""
    if not build.stale:
        return ""
    shown = ", ".join(build.stale[:3]) + (f" and {len(build.stale) - 3} more"
                                          if len(build.stale) > 3 else "")  # fmt: skip
    return (
        f"Not shown: {len(build.stale)} benchmark(s) measured on this build with an older "
        f"version of the benchmark than results/benchmarks.json ({shown}); asv's site leaves "
        "them out too. Measure the build again on this machine to show them."
    )


def failures(builds: list[BuildResult]) -> list[Failure]:
    """Every failure of these builds: a build that did not install (once), every harness
    failure and crashed attribution its probe rows record (`row_failures`), and every other
    failed benchmark combination."""
    found = []
    for build in builds:
        if not build.installed:
            reason = f"did not install: {build.identity.get('error')}"
            found.append(Failure(build.tag, build.machine, build.commit, "the build", reason))
            continue
        found += row_failures(build)
        for key, combos in build.values.items():
            scenario = key.split(".", 1)[0]
            for combo, value in combos.items():
                row = _row_for(build, scenario, key, combo)
                if value is None and not row.get("harness_failure"):  # named once, above
                    defect = row.get("floor_defect") if key.endswith("time_over_floor") else None
                    reason = (row.get("error") or defect
                              or "see `asv run --show-stderr` for the traceback")  # fmt: skip
                    name = f"{key}({', '.join(map(str, combo))})"
                    found.append(Failure(build.tag, build.machine, build.commit, name, reason))
    return found


def row_failures(build: BuildResult) -> list[Failure]:
    """The failures a build's probe rows record beside their verdicts: an eager reference
    that broke its own contract (`HARNESS FAILURE`, first) and an attribution that crashed."""
    harness, crashed = [], []
    for (scenario, control, backend, n), row in build.probe.items():
        where = f"{scenario}.{control} ({backend}" + (f", n={n})" if n is not None else ")")
        build_of = (build.tag, build.machine, build.commit)
        if row.get("harness_failure"):
            harness.append(Failure(*build_of, f"HARNESS FAILURE {where}", row["harness_failure"],
                                   harness=True))  # fmt: skip
        if row.get("attribution_error"):
            crashed.append(Failure(*build_of, f"attribution of {where}", row["attribution_error"]))
    return harness + crashed


def render(builds: list[BuildResult]) -> str:
    if not builds:
        return "No results yet: run `make history` (or `asv run`) first."
    parts = ["# writeback history", ""]
    for build in builds:
        parts += [f"## {build.label} on {build.machine}", "", _identity_line(build), ""]
        if stale := stale_line(build):
            parts += [stale, ""]
        if not build.installed:
            parts += [f"Not measured: the build did not install ({build.identity.get('error')}).",
                      ""]  # fmt: skip
            continue
        parts += [values_table(build), ""]
        if attributed := attribution_lines(build):
            parts += ["Which pass (attribution, with the time it took):", "", *attributed, ""]
        parts += corpus_lines(build)
        for scenario in cost_scenarios(build):
            parts += [words.cost_section(scenario, *cost_rows(build, scenario)), ""]
    parts += ["## Correctness over all builds", "", matrix(builds), ""]
    found = [*failures(builds), *(f for f in failed_programs(builds) if not f.known)]
    if found:
        parts += ["## Failures (nobody expected these)", ""]
        parts += [f"- {failure.describe()}" for failure in found] + [""]
    parts += time_section(builds)
    parts += stability_section(builds[0].results_dir, sorted({b.machine for b in builds}))
    return "\n".join(parts).rstrip() + "\n"


def time_section(builds: list[BuildResult]) -> list[str]:
    """Where each build's time went (tools/time_spent.py), machine by machine."""
    rows = [
        (f"{b.tag or b.name} on {b.machine}",
         time_spent.time_spent(b.durations, _install_seconds(b), b.callgrind, _attributing(b)))
        for b in builds if b.installed and b.durations
    ]  # fmt: skip
    if not rows:
        return []
    caveat = time_spent.__doc__.split("\n\n")[1].replace("\n", " ").strip()
    return ["## Where the time went", "", caveat, "", *time_spent.render(rows), ""]


def _attributing(build: BuildResult) -> float:
    """Seconds the attributions of this build's probe rows took."""
    rows = build.probe.values()
    return sum(float((r.get("attribution") or {}).get("seconds") or 0.0) for r in rows)


def _install_seconds(build: BuildResult) -> float | None:
    """The install's seconds, when this machine's own record has them (a record borrowed from
    another machine timed that machine's install)."""
    return None if build.identity.get("recorded_by") else build.identity.get("install_seconds")


def cost_scenarios(build: BuildResult) -> list[str]:
    """Every scenario whose Cost benchmarks ran on this build, the snapshot swap first."""
    found = [k.split(".")[0] for k in build.values if k.endswith(".Cost.time_warm_call")]
    return sorted(found, key=lambda name: (name != SCENARIO, name))


def stability_section(results_dir: Path | None, machines: list[str]) -> list[str]:
    """What tools/stability.py found on these machines, where it has been run."""
    folder = results_dir / "stability" if results_dir else None
    files = sorted(p for m in machines for p in (folder / m).glob("*.json")) if folder else []
    if not files:
        return []
    from tools import stability

    parts = ["## Stability of the cost figures (tools/stability.py)", ""]
    for path in files:
        parts += [f"On {path.parent.name}:", ""]
        parts += [stability.render(json.loads(path.read_text())), ""]
    return parts


def values_table(build: BuildResult) -> str:
    wrong = build.values.get(f"{CORRECTNESS}.track_wrong_elements", {})
    sizes = sorted({combo[2] for combo in wrong})
    keys = [(control, backend) for control, backend, _ in wrong]
    return words.values_table(keys, sizes, lambda c, b, n: verdict(build, c, b, n))


def cost_rows(build: BuildResult, scenario: str = SCENARIO) -> tuple[list[dict], list[tuple]]:
    """The Cost figures asv recorded for `scenario` on this build, one row per timed (control,
    n) with the probe record's notes on what is missing; and the (control, n) not costed
    because they are wrong under Inductor."""
    cost = f"{scenario}.Cost"
    rows, not_costed = [], []
    for (control, n), seconds in build.values.get(f"{cost}.time_warm_call", {}).items():
        probe = build.probe.get((scenario, control, "inductor", n), {})
        if not _number(seconds):
            if (probe.get("wrong_elements") or {}).get("total"):
                not_costed.append((control, n))
            continue
        figure = {
            metric.row_key: build.values.get(f"{cost}.{metric.benchmark}", {}).get((control, n))
            for metric in metrics.of(metrics.COST)
        }
        stats = build.stats.get(f"{cost}.time_warm_call", {}).get((control, n)) or {}
        notes = ("scratch_bytes_static", "floor_defect", "floor_note", "instructions_note",
                 "instructions_error")  # fmt: skip
        rows.append(
            {
                "control": control,
                "n": n,
                **figure,
                **{key: probe.get(key) for key in notes},
                "q25_s": stats.get("q_25"),
                "q75_s": stats.get("q_75"),
                "samples": stats.get("repeat", "?") if "q_25" in stats else None,
            }
        )
    return rows, not_costed


def matrix(builds: list[BuildResult]) -> str:
    """scenario x control x backend x size -> verdict per build, each row linked to its
    upstream issue where it has one; `changed` marks a verdict that differs from the build
    to its left on the same machine (fixed in / broken in)."""
    keys = matrix_keys(builds)
    machines = len({b.machine for b in builds}) > 1
    header = "| scenario | control or pattern | backend | size | " + " | ".join(
        b.tag + (f" ({b.machine})" if machines else "") for b in builds
    )
    lines = [header + " |", "|---|---|---|---|" + "---|" * len(builds)]
    for scenario, control, backend, n in keys:
        cells, previous, issue, fix = [], None, "", ""
        for build in builds:
            cell = verdict(build, control, backend, n, scenario)
            row = build.probe.get((scenario, control, backend, n), {})
            issue, fix = issue or row.get("issue", ""), fix or row.get("fix", "")
            changed = previous is not None and previous[0] == build.machine and previous[1] != cell
            cells.append(f"**{cell}** (changed)" if changed else cell)
            previous = (build.machine, cell)
        name = f"[{control}]({issue})" if issue else control
        name += f" ([fix]({fix}))" if fix else ""
        lines.append(
            f"| {scenario} | {name} | {backend} | {words.size_cell(n)} | {' | '.join(cells)} |"
        )
    return "\n".join(lines)


def scenarios(build: BuildResult) -> list[str]:
    """Every scenario with a correctness result in this build, the snapshot swap first."""
    found = [key[: -len(WRONG) - 1] for key in build.values if key.endswith(f".{WRONG}")]
    return sorted(found, key=lambda name: (name != SCENARIO, name))


def verdict(build: BuildResult, control, backend, n, scenario: str = SCENARIO) -> str:
    """`exact`, `wrong: 9 (ret_b 3, in_b 3, view_b 3)`, `skipped: why`, `failed: why` or
    `not run (why)`."""
    return verdict_state(build, control, backend, n, scenario)[1]


def combo(control, backend, n) -> tuple:
    """asv's parameter combination of a matrix key: (control, backend, size), or (control,
    variant) for a scenario whose variants replace backend and size (`n` None)."""
    return (control, backend) if n is None else (control, backend, n)


def matrix_keys(builds: list[BuildResult]) -> list[tuple]:
    """(scenario, control, backend or variant, size or None) of every correctness result."""
    keys = []
    for build in builds:
        for scenario in scenarios(build):
            for params in build.values[f"{scenario}.{WRONG}"]:
                key = (scenario, *params) if len(params) == 3 else (scenario, *params, None)
                if key not in keys:
                    keys.append(key)
    return keys


def verdict_state(
    build: BuildResult, control, backend, n, scenario: str = SCENARIO
) -> tuple[str, str]:
    """(state, the verdict's words): state is one of VERDICT_STATES."""
    combo_ = combo(control, backend, n)
    if not build.installed:
        why = f"the build did not install: {build.identity.get('error')}"
        return "not run", words.verdict("not run", why)
    measured = build.values.get(f"{scenario}.{WRONG}", {})
    if combo_ not in measured:
        return "not run", words.verdict("not run", "no result for it on this machine")
    wrong = measured[combo_]
    moved = build.values.get(f"{scenario}.Correctness.track_moved_storages", {}).get(combo_)
    row = build.probe.get((scenario, control, backend, n), {})
    if row.get("harness_failure"):
        return "harness failure", words.verdict("harness failure", row["harness_failure"])
    if wrong is None:
        return "failed", words.verdict("failed", row.get("error") or "see asv run --show-stderr")
    if isinstance(wrong, float) and math.isnan(wrong):
        if row.get("skipped"):
            return "skipped", words.verdict("skipped", row["skipped"])
        return "not run", words.verdict("not run", "left out of the run that recorded it")
    if wrong == 0 and not moved:
        return "exact", words.verdict("exact")
    text = words.verdict(
        "wrong",
        total=int(wrong),
        coordinates=row.get("wrong_elements"),
        moved=int(moved or 0),
        pass_name=words.pass_names(row.get("attribution")),
    )
    return "wrong", text


def corpus_records(build: BuildResult) -> list[dict]:
    """The records of the generated corpora this build ran on this machine."""
    if not build.results_dir or "torch_version" not in build.identity:
        return []
    key = build_folder(build.identity)
    folder = build.results_dir / "generated" / build.machine / key
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*/corpus/*.json"))]


def corpus_lines(build: BuildResult) -> list[str]:
    """The generated corpora this build ran: wrong programs, each family's shrunk repro and
    attribution, and every program that failed, with its first error line."""
    lines = []
    failed = failed_programs([build])
    for record in corpus_records(build):
        wrong = {b: sum(1 for r in record["rows"] if r["backend"] == b and r.get("wrong_elements"))
                 for b in record.get("backends", [])}  # fmt: skip
        counts = ", ".join(f"{b}: {n} wrong" for b, n in wrong.items())
        lines += [f"Generated corpus `{record['corpus']}` ({record['programs']} programs; "
                  f"{counts}), families:", ""]  # fmt: skip
        for family in record.get("families", []):
            lines += [f"- {family['backend']}: {family['programs']} program(s), catalogue: "
                      f"{family['catalogue']}", *_family_attribution(family), "", "  ```python",
                      *("  " + line for line in family["repro"].rstrip().splitlines()),
                      "  ```", ""]  # fmt: skip
        mine = [f for f in failed if f.corpus == record["corpus"]]
        if mine:
            lines += [f"Failed to compile or run ({len(mine)} program(s) of "
                      f"`{record['corpus']}`):", ""]  # fmt: skip
            lines += [f"- {f.backend} program {f.program}: `{first_line(f.error)}` ("
                      + (f"known: {f.known})" if f.known else "not a known state: fails "
                         "`make history`)") for f in mine] + [""]  # fmt: skip
    return lines


def _family_attribution(family: dict) -> list[str]:
    """The family's attribution, made on its representative (a record without one: none)."""
    found = family.get("attribution")
    if not found:
        return []
    return [f"  which pass (attributed on the repro, of program {family['representative']}): "
            f"{attribution_text(found)}"]  # fmt: skip


def failed_programs(builds: list[BuildResult]) -> list[FailedProgram]:
    """Every corpus program that failed to compile or run on these builds, known or not."""
    found = []
    for build in builds:
        version = build.identity.get("torch_version", "")
        for record in corpus_records(build):
            for row in record["rows"]:
                if row.get("error"):
                    known = known_failure(row["error"], version)
                    found.append(FailedProgram(build.tag, build.machine, build.commit,
                                               record["corpus"], row["backend"], row["program"],
                                               row["error"], known and known.reason))  # fmt: skip
    return found


def attribution_lines(build: BuildResult) -> list[str]:
    """What attribution found for each wrong Inductor row of this build (a configuration
    variant's among them), and its time."""
    lines = []
    for (scenario, control, backend, n), row in sorted(build.probe.items(), key=str):
        found = row.get("attribution")
        if not found or str(found.get("note", "")).startswith("attributed at the first wrong"):
            continue
        how = (
            f"ATTRIBUTION FAILED: {row['attribution_error']}"
            if row.get("attribution_error")
            else attribution_text(found)
        )
        at = backend if n is None else words.size_cell(n)  # a variant's row: its name
        lines.append(f"- {scenario}.{control} ({at}): {how}")
    return lines


def attribution_text(found: dict) -> str:
    """An attribution (`benchmarks/attribution.py`'s result) in words: the pass and how it
    was found, where else it points, or why nothing was attributed; and the seconds it took."""
    where = f"{found.get('subsystem') or found.get('backend') or '-'}"
    where += f", #{found['bisect_number']}" if found.get("bisect_number") else ""
    seconds = f", {found['seconds']} s" if found.get("seconds") is not None else ""
    if passes := words.pass_names(found):
        return f"`{passes}` ({found['method']}, {where}){seconds}"
    if found.get("method"):
        return f"{found['method']}: {where} ({found.get('note')}){seconds}"
    note = str(found.get("note"))
    return (note if note.startswith("not attributed") else f"not attributed: {note}") + seconds


def _identity(results_dir: Path, machine: str, entry) -> dict:
    """This machine's install record of the build; else another machine's (the build is the
    same everywhere; asv does not reinstall a build a second machine of the same host and
    environment measures), saying whose."""
    path = results_dir / "builds" / machine / f"{entry.commit}.json"
    if path.is_file():
        return json.loads(path.read_text())
    for other in sorted((results_dir / "builds").glob(f"*/{entry.commit}.json")):
        record = json.loads(other.read_text())
        if record.get("installed"):
            return {**record, "recorded_by": other.parent.name}
    return {}


def _row_for(build: BuildResult, scenario: str, key: str, combo: tuple) -> dict:
    """The probe row behind one benchmark combination (Cost combos are Inductor's rows)."""
    if ".Cost." in key and len(combo) == 2:
        combo = (combo[0], "inductor", combo[1])
    elif len(combo) == 2:
        combo = (*combo, None)
    return build.probe.get((scenario, *combo), {})


def _identity_line(build: BuildResult) -> str:
    ident = build.identity
    if not ident:
        return (f"ledger commit {build.commit[:8]}; no install record in "
                f"results/builds/{build.machine}/")  # fmt: skip
    by = f" (install recorded by {ident['recorded_by']})" if ident.get("recorded_by") else ""
    pip = " ".join(ident.get("pip_args", []))
    return (
        f"ledger commit {build.commit[:8]}{by}; installed `{pip}` -> "
        f"torch {ident.get('torch_version', '?')}, upstream commit "
        f"{ident.get('torch_git_version', '?')}"
    )


def _probe_records(results_dir: Path, machine: str, identity: dict) -> list[dict]:
    """Every probe record this machine kept for the build (each file read once)."""
    if "torch_version" not in identity:
        return []
    folder = results_dir / "generated" / machine / build_folder(identity)
    return [json.loads(path.read_text()) for path in sorted(folder.glob("*/*/probe.json"))]


def _probe_rows(records: list[dict]) -> dict[tuple, dict]:
    rows = {}
    for record in records:
        for row in record["rows"]:
            if "variant" in row:  # a variant replaces backend and size
                rows[(record["scenario"], row["control"], row["variant"], None)] = row
            else:
                rows[(record["scenario"], row["control"], row["backend"], row["n"])] = row
    return rows


def _callgrind_seconds(records: list[dict]) -> dict | None:
    """Scenario -> callgrind seconds its probe recorded (`seconds`); None when no record has
    them (written before probes recorded their seconds)."""
    found = {
        record["scenario"]: float(record["seconds"].get("callgrind", 0.0))
        for record in records
        if "seconds" in record
    }
    return found or None


def _machines(results_dir: Path) -> list[str]:
    return sorted(p.parent.name for p in results_dir.glob("*/machine.json"))


def _combos(params):
    combos = [()]
    for values in params or []:
        combos = [c + (_literal(v),) for c in combos for v in values]
    return combos


def _literal(text: str):
    text = text.strip()
    if text[:1] in "'\"":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return text


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not math.isnan(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.report", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--ledger", type=Path, default=ledger_repo.DEFAULT_LEDGER)
    parser.add_argument("--machine", help="only this asv machine (default: every machine)")
    args = parser.parse_args(argv)
    print(render(load(args.results, args.ledger, args.machine)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
