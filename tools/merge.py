"""Merge results folders measured elsewhere (the shards of a CI matrix, other machines) into
results/, then publish and report them as one run's.

    python -m tools.merge [--builds FILE ...] [--no-site-check] FOLDER [FOLDER ...]

Each FOLDER is a results/ tree as `make history` writes it: asv's `<machine>/` result files
and `machine.json`, `benchmarks.json`, and the records beside them (`builds/<machine>/`,
`generated/<machine>/`, `stability/<machine>/`, and `runs/<machine>/`: each run's peak disk,
tools/disk.py, named so that two shards' never collide; the report shows each). asv cannot
merge results itself (asv issues #1362 and #2), but it keeps one file per (machine, ledger
commit, environment), so folders measured with the same benchmark set, ledger and machine
classes merge by copying. Before anything is copied, every folder is checked, and the merge
is refused, saying why and what to do, when a folder holds:

- another benchmark set: its benchmarks.json differs (names, parameters or versions) from
  results/'s, when results/ holds results, else from the first folder's;
- another ledger: a result or install record of a ledger commit that the builds files here
  do not make (another builds file, or an edited one);
- another machine class under one name: a machine whose machine.json records another CPU id
  or ISA than the same machine's here (or in an earlier folder);
- another measurement of the same thing: a file that exists here (or in an earlier folder)
  with other contents. Identical files are fine. Where results/'s file of that build was
  measured with an older version of a benchmark than results/benchmarks.json (the build was
  measured again after the benchmarks changed), the message says which files to remove;
- a result left over from another benchmark set: a result file whose benchmark versions are
  not its own folder's benchmarks.json's (asv would publish none of those results), unless
  results/ holds the same file (a checkout carries the other machines' results unchanged).

One build measured by two builds files is not a conflict: a release in both builds.txt and
builds-long.txt is a commit of each ledger branch (each gets its asv result file and install
record), but its records go to one folder, `generated/<machine>/<build>/`, named by the torch
build. Where results/ holds that folder from one ledger commit and a FOLDER measured the same
build from another, results/'s records are kept (the expected gates are set on them) and the
FOLDER's are not copied; its asv result and install record are. The two measurements are
compared row by row (`compare_records`) and the comparison printed: every row's wrong elements
should be equal, and where one is not the merge says which rows and exits 1.

After the merge, results/'s result files of an older benchmark set are named (they are left
out of the site and the report until their builds are measured again).

Then results/ holds the union: `asv publish` makes html/ (self-contained and checked as in
`make history`), the report of every machine is written to results/report.md and its summary
printed (tools/summary.py), as `make history` ends.
Exit status: 0; 1 when publishing failed, the results hold real failures or a build measured by
two builds files disagrees with itself; 2 when refused.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from asv.results import Results

from benchmarks.machine import build_folder  # standard library only
from tools import builds as builds_file
from tools import history, results
from tools import ledger as ledger_repo

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = "benchmarks.json"
MACHINE = "machine.json"
MACHINE_CLASS = ("cpu_id", "isa")
DERIVED = {"report.md"}
"""Files a merge rewrites rather than copies."""


class Refused(ValueError):
    """A folder that cannot be merged; the message says why and what to do."""


@dataclass
class Plan:
    """What a merge copies (destination -> source), and what it tells the user."""

    copies: dict[Path, Path] = field(default_factory=dict)
    benchmarks: Path | None = None
    notes: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)
    """Builds measured by two builds files whose rows' wrong elements differ: a finding."""


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    into = ROOT / "results"
    try:
        ledger = _ledger(args.builds)
        plan = plan_merge(args.folders, into, ledger_commits(ledger), _names(args.builds))
    except (Refused, builds_file.BuildsFileError) as exc:
        print(f"writeback: not merged: {exc}", file=sys.stderr)
        return 2
    apply(plan, into)
    everyone = results.load(into, ledger)
    problems = history.publish(args.site_check, into, ledger, everyone)
    loaded = history.write_report(into, ledger, None, everyone, ROOT / "html")
    status = history.failed_at_end(problems, loaded, {build.commit for build in loaded})
    for disagreement in plan.disagreements:
        print(f"writeback: {disagreement}", file=sys.stderr)
    return status or (1 if plan.disagreements else 0)


def plan_merge(folders: list[Path], into: Path, commits: set[str], ledger_name: str) -> Plan:
    """Check every folder against `into` and the folders before it; return what to copy.
    Raises `Refused` for the first folder that cannot be merged."""
    plan = Plan()
    reference, reference_label = (into, "results/") if result_files(into) else (None, "")
    stale_here = stale_results(into, into) if reference is not None else {}
    machines = {name: (info, "results/") for name, info in machine_infos(into).items()}
    for folder in folders:
        label = str(folder)
        if not (folder / BENCHMARKS).is_file():
            raise Refused(f"{label} is not a results folder (no {BENCHMARKS} in it)")
        if folder.resolve() == into.resolve():
            raise Refused(f"{label} is results/ itself: name the folders to merge into it")
        if reference is None:
            reference, reference_label = folder, label
            plan.benchmarks = folder / BENCHMARKS
        elif difference := benchmark_difference(reference, folder):
            raise Refused(
                f"{label} was measured with another benchmark set than {reference_label}: "
                f"{difference}. Merge only results measured with the same benchmarks/ (the "
                "same commit of this project): measure the older side's builds again from the "
                "newer's commit (`git log -- benchmarks/` says which changed)."
            )
        for path, why in stale_results(folder, folder).items():
            here = into / path.relative_to(folder)
            if not (here.is_file() and here.read_bytes() == path.read_bytes()):
                raise Refused(
                    f"{label} holds {path.relative_to(folder)}, measured with another version "
                    f"of a benchmark than {label}/{BENCHMARKS} ({why}): a result left from an "
                    "earlier run, which asv would not publish. Measure that build again, or "
                    "remove the file from that folder, then merge again."
                )
        if unknown := sorted(ledger_commits_of(folder) - commits):
            shown = ", ".join(commit[:8] for commit in unknown[:5])
            raise Refused(
                f"{label} holds results of {len(unknown)} ledger commit(s) that the ledger of "
                f"{ledger_name} does not hold ({shown}): it was measured with another builds "
                "file, or an edited one. Merge with that file (make merge BUILDS=that-file "
                "FROM=...), or measure its builds again from this one."
            )
        for name, info in machine_infos(folder).items():
            if name not in machines:
                machines[name] = (info, label)
                plan.copies[into / name / MACHINE] = folder / name / MACHINE
            elif why := machine_class_difference(machines[name][0], info):
                raise Refused(
                    f"{label} has results of machine {name!r} measured on {why}, but "
                    f"{machines[name][1]} has {name!r} on {_describe(machines[name][0])}: two "
                    "machine classes under one name. Measure each class under its own name "
                    "(WRITEBACK_MACHINE), then merge."
                )
            elif info != machines[name][0]:
                plan.notes.append(f"kept {machines[name][1]}'s {name}/{MACHINE} (same CPU id "
                                  f"and ISA as {label}'s; other fields differ)")  # fmt: skip
        _plan_files(plan, folder, into, stale_here)
    return plan


def _plan_files(plan: Plan, folder: Path, into: Path, stale_here: dict[Path, str]) -> None:
    conflicts = []
    twice = measured_by_two_builds_files(folder, into)
    for (machine, build), (here, there) in sorted(twice.items()):
        records = Path("generated", machine, build)
        lines, differ = compare_records(into / records, folder / records)
        heading = (f"{build} on {machine} was measured by two builds files (ledger commit "
                   f"{here[:8]} here, {there[:8]} in {folder}): kept results/{records}/ (the "
                   "expected gates are set on it), merged the other's asv result and install "
                   "record; the two measurements' rows:")  # fmt: skip
        plan.notes.append("\n  ".join([heading, *lines]))
        if differ:
            plan.disagreements.append(
                f"{build} on {machine}: the two measurements disagree in {differ} row(s)' wrong "
                f"elements (listed above, under 'measured by two builds files'): the same build "
                "on the same machine gave two verdicts; find out why before trusting either"
            )
    kept_here = {("generated", machine, build) for machine, build in twice}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if _merged_separately(relative) or relative.parts[:3] in kept_here:
            continue
        target = into / relative
        earlier = target if target.is_file() else plan.copies.get(target)
        if earlier is None:
            plan.copies[target] = path
        elif earlier.read_bytes() != path.read_bytes():
            conflicts.append((relative, earlier))
    if remeasured := sorted(into / r for r, _ in conflicts if into / r in stale_here):
        named = ", ".join(str(p.relative_to(into)) for p in remeasured[:3])
        raise Refused(
            f"{folder} measured again {len(remeasured)} build(s) whose results here were "
            f"measured with an older benchmark set ({named}: "
            f"{stale_here[remeasured[0]]}). Remove each such build's files from results/ (its "
            "result file, its install record results/builds/<machine>/<commit>.json and its "
            "records under results/generated/<machine>/), then merge again."
        )
    if conflicts:
        relative, earlier = conflicts[0]
        where = (
            "results/" if earlier == into / relative else earlier.parents[len(relative.parts) - 1]
        )
        raise Refused(
            f"{folder} holds {len(conflicts)} file(s) that {where} also holds with other "
            f"contents, e.g. {relative}: the same thing measured twice. Keep one of them "
            "(remove the other file), then merge again."
        )


def measured_by_two_builds_files(folder: Path, into: Path) -> dict[tuple[str, str], tuple]:
    """The builds whose records results/ holds from one ledger commit and `folder` from
    another (one build in two builds files): (machine, build folder) -> (results/'s ledger
    commit, the folder's)."""

    def commits(root: Path) -> dict[tuple[str, str], set[str]]:
        found: dict[tuple[str, str], set[str]] = {}
        for path in root.glob("builds/*/*.json"):
            record = json.loads(path.read_text())
            if record.get("installed") and record.get("torch_git_version"):
                found.setdefault((path.parent.name, build_folder(record)), set()).add(path.stem)
        return found

    here, there = commits(into), commits(folder)
    twice = {}
    for key, theirs in there.items():
        records = Path("generated", *key)
        if not ((into / records).is_dir() and (folder / records).is_dir()):
            continue
        ours = here.get(key, set())
        # Two commits made the build and the folder's records are not results/'s: they are
        # the other commit's measurement (the folder brings its install record; or merged
        # before, its records were never copied). A folder that is a clone of results/ and
        # did not measure the build carries results/'s records unchanged: nothing to compare.
        # One commit only: a build measured twice from one ledger commit, refused below.
        if len(ours | theirs) >= 2 and not _carried(into / records, folder / records):
            # the folder's own: the commit it brings, else (merged before) the one it
            # installed last; results/'s records are the other commit's
            other = min(theirs - ours) if theirs - ours else max(
                theirs, key=lambda commit: _attempted(folder, key[0], commit)
            )  # fmt: skip
            twice[key] = (min(ours - {other} or ours), other)
    return twice


def _attempted(root: Path, machine: str, commit: str) -> str:
    """When `root`'s install record of ledger commit `commit` was made (ISO time, or "")."""
    record = json.loads((root / "builds" / machine / f"{commit}.json").read_text())
    return str(record.get("attempted_at") or "")


def _carried(into: Path, folder: Path) -> bool:
    """True when every file of `folder` is in `into` with the same contents: records a clone
    carried unchanged (files `into` holds beyond them, such as ignored AOTInductor packages
    left by an earlier run in the checkout, say nothing of the folder)."""
    return all(
        (into / path.relative_to(folder)).is_file()
        and (into / path.relative_to(folder)).read_bytes() == path.read_bytes()
        for path in folder.rglob("*")
        if path.is_file()
    )


def compare_records(kept: Path, other: Path) -> tuple[list[str], int]:
    """Two measurements of one build (`generated/<machine>/<build>/` folders), row by row: a
    line per record (rows in each, rows whose wrong elements differ, and for the corpus rows
    whose error text differs), a line per differing row (the first ten of each record), and
    how many rows' wrong elements differ in all. Rows are told apart by `ROW_KEYS`."""
    lines, differ = [], 0
    names = sorted({p.relative_to(kept) for p in kept.glob("*/*/*.json")}
                   | {p.relative_to(other) for p in other.glob("*/*/*.json")})  # fmt: skip
    for name in names:
        rows = [_rows(folder / name) for folder in (kept, other)]
        if rows[0] is None or rows[1] is None:
            lines.append(f"{name}: only in {'results/' if rows[1] is None else 'the folder'}")
            continue
        kept_rows, other_rows = rows
        differing = [k for k in kept_rows.keys() | other_rows.keys()
                     if _wrong(kept_rows, k) != _wrong(other_rows, k)]  # fmt: skip
        errors = [k for k in kept_rows.keys() & other_rows.keys()
                  if kept_rows[k].get("error") != other_rows[k].get("error")]  # fmt: skip
        differ += len(differing)
        lines.append(f"{name}: rows {len(kept_rows)} (kept) and {len(other_rows)} (the other); "
                     f"wrong elements differ in {len(differing)}, error texts in "
                     f"{len(errors)}")  # fmt: skip
        for key in sorted(differing, key=str)[:10]:
            where = "/".join(str(part) for part in key if part is not None)
            lines.append(f"  {where}: wrong elements {_wrong(kept_rows, key)} (kept), "
                         f"{_wrong(other_rows, key)} (the other)")  # fmt: skip
    return lines, differ


def _wrong(rows: dict[tuple, dict], key: tuple):
    """A row's wrong elements, `absent` where the record has no such row."""
    return rows.get(key, {}).get("wrong_elements", "absent")


ROW_KEYS = ("program", "control", "variant", "backend", "n")
"""What tells one record row from another: a corpus row's program and backend, a probe row's
control, backend and size, a configuration row's control and variant."""


def _rows(path: Path) -> dict[tuple, dict] | None:
    """A record's rows by their coordinates (`ROW_KEYS`); `Refused` when two rows share them
    (the comparison would silently compare one of them)."""
    if not path.is_file():
        return None
    record = json.loads(path.read_text())
    rows = record.get("rows", []) if isinstance(record, dict) else []
    keyed = {tuple(row.get(key) for key in ROW_KEYS): row for row in rows}
    if len(keyed) != len(rows):
        raise Refused(f"{path}: {len(rows) - len(keyed)} of its {len(rows)} rows share their "
                      f"coordinates ({', '.join(ROW_KEYS)}) with another: this merge cannot "
                      "compare it with the other measurement row by row")  # fmt: skip
    return keyed


def _merged_separately(relative: Path) -> bool:
    """benchmarks.json and machine.json are checked, not copied; the report is rewritten."""
    top = len(relative.parts) == 1 and relative.name in DERIVED | {BENCHMARKS}
    return top or (len(relative.parts) == 2 and relative.name == MACHINE)


def apply(plan: Plan, into: Path) -> None:
    """Copy what the plan says, and say what was merged."""
    if plan.benchmarks is not None:
        target = into / BENCHMARKS
        if not target.is_file() or target.read_bytes() != plan.benchmarks.read_bytes():
            print(f"writeback: {BENCHMARKS} from {plan.benchmarks.parent} (results/ held no "
                  "results)")  # fmt: skip
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(plan.benchmarks, target)
    for target, source in plan.copies.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    asv_files = [t for t in plan.copies if t.parent.parent == into and t.name != MACHINE]
    print(f"writeback: merged {len(plan.copies)} file(s) into results/, {len(asv_files)} of them "
          "asv result files; identical files already here were left as they were")  # fmt: skip
    for note in plan.notes:
        print(f"writeback: {note}")
    if stale := stale_results(into, into):
        named = ", ".join(f"{p.relative_to(into)} ({why})" for p, why in list(stale.items())[:3])
        print(f"writeback: results/ still holds {len(stale)} result file(s) measured with an "
              f"older benchmark set: {named}. The site and the report leave those benchmarks "
              "out until the builds are measured again on their machines.")  # fmt: skip


def benchmark_set(folder: Path) -> dict[str, tuple]:
    """Every benchmark asv discovered for this folder: name -> (param names, params, version)."""
    data = json.loads((folder / BENCHMARKS).read_text())
    return {
        name: (entry.get("param_names"), entry.get("params"), entry.get("version"))
        for name, entry in data.items()
        if isinstance(entry, dict)
    }


def benchmark_difference(reference: Path, folder: Path) -> str:
    """How the benchmark set of `folder` differs from `reference`'s ('' when it does not)."""
    ours, theirs = benchmark_set(reference), benchmark_set(folder)
    parts = []
    if missing := sorted(set(ours) - set(theirs)):
        parts.append(f"it lacks {_few(missing)}")
    if extra := sorted(set(theirs) - set(ours)):
        parts.append(f"it has {_few(extra)} in addition")
    for name in sorted(set(ours) & set(theirs)):
        for what, mine, other in zip(("parameter names", "parameters", "version"), ours[name],
                                     theirs[name]):  # fmt: skip
            if mine != other:
                parts.append(f"{name} has {what} {other!r}, not {mine!r}")
    return "; ".join(parts[:4]) + (f" (and {len(parts) - 4} more)" if len(parts) > 4 else "")


def stale_results(folder: Path, reference: Path) -> dict[Path, str]:
    """The result files of `folder` holding a result that asv's publish leaves out against
    `reference`'s benchmarks.json (`results.older_benchmarks`), each with the first such
    benchmark and why."""
    current = results.benchmark_versions(reference)
    stale = {}
    for path in result_files(folder):
        result = Results.load(str(path))
        if older := results.older_benchmarks(result, current):
            name = older[0]
            stale[path] = (
                f"{name} has version {result.benchmark_version.get(name)!r}, not "
                f"{current[name].get('version')!r}"
                if name in current
                else f"{name} is no longer a benchmark"
            )
    return stale


def result_files(folder: Path) -> list[Path]:
    """asv's result files in a results folder (one per machine, ledger commit, environment)."""
    return sorted(
        path
        for machine in folder.glob(f"*/{MACHINE}")
        for path in machine.parent.glob("*.json")
        if path.name != MACHINE
    )


def ledger_commits_of(folder: Path) -> set[str]:
    """The ledger commits a results folder has results or install records of."""
    commits = {json.loads(path.read_text())["commit_hash"] for path in result_files(folder)}
    return commits | {path.stem for path in folder.glob("builds/*/*.json")}


def machine_infos(folder: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in folder.glob(f"*/{MACHINE}")}


def machine_class_difference(known: dict, other: dict) -> str:
    """'' when `other` is the same machine class as `known` (same CPU id and ISA, both
    recorded), else a description of `other`."""
    same = all(known.get(key) and known.get(key) == other.get(key) for key in MACHINE_CLASS)
    return "" if same else _describe(other)


def ledger_commits(ledger: Path) -> set[str]:
    return {entry.commit for entry in ledger_repo.read_ledger(ledger)}


def _ledger(builds_files: list[Path]) -> Path:
    """The ledger with a branch for each builds file (and builds.txt's, as `make history`)."""
    ledger_repo.build_branches(builds_files)
    return ledger_repo.DEFAULT_LEDGER


def _names(builds_files: list[Path]) -> str:
    return ", ".join(path.name for path in builds_files)


def _describe(info: dict) -> str:
    return (f"{info.get('cpu', 'an unrecorded CPU')} (cpu id {info.get('cpu_id')}, "
            f"ISA {info.get('isa')})")  # fmt: skip


def _few(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _parse(argv):
    parser = argparse.ArgumentParser(
        prog="python -m tools.merge", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("folders", nargs="+", type=Path, metavar="FOLDER",
                        help="results folders to merge into results/")  # fmt: skip
    # one file per --builds (repeat it for more): a list-taking option would swallow the
    # folders that follow it, as `make merge` passes them
    parser.add_argument("--builds", action="append", type=Path, metavar="FILE",
                        help="a builds file the folders were measured with (default builds.txt; "
                             "repeat for more)")  # fmt: skip
    parser.add_argument("--no-site-check", dest="site_check", action="store_false",
                        help="publish as asv does (no vendored scripts, no browser)")  # fmt: skip
    args = parser.parse_args(argv)
    args.builds = args.builds or [ROOT / "builds.txt"]
    return args


if __name__ == "__main__":
    sys.exit(main())
